"""``luoshod``: the command line. ``luoshod serve`` runs the daemon; ``luoshod config show``
prints the configuration it would run with; ``luoshod healthcheck`` asks a daemon whether
it serves; ``luoshod store copy`` copies a store into another; ``sessions``, ``approvals``
and ``prune`` operate a running daemon (:mod:`luoshod.cli.admin`).

``serve`` and ``config show`` take the settings of :mod:`luoshod.settings` (a TOML file,
``LUOSHOD_*`` environment variables, flags; flags win). A bad setting stops them with one
line per fault naming the key, and exit code 2. The daemon prints one line
``luoshod listening on ADDR[, ADDR]`` on stdout when it accepts calls, so scripts and
tests started with ``--listen 127.0.0.1:0`` learn the port without polling.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, cast

from .parser import Parser

if TYPE_CHECKING:
    from ..server.app import Config

EXIT_CONFIG = 2
#: A third signal during a drain: the process ends without closing anything.
EXIT_FORCED = 130
#: The ``log_level`` setting's variable (``settings.env_name("log_level")``), read without
#: loading the settings by the commands that do not run the daemon.
LOG_LEVEL_ENV = "LUOSHOD_LOG_LEVEL"

#: ``luoshod``'s commands and their one-line help, in ``--help``'s order. Only the command
#: named on the command line gets its arguments, and imports what they need: ``luoshod
#: sessions list`` loads gRPC and the client, never the daemon (its settings, server,
#: engine, store, providers), and ``luoshod --help`` loads none of them.
COMMANDS = {
    "serve": "run the daemon",
    "config": "the daemon's configuration",
    "healthcheck": "exit 0 if a daemon answers SERVING to grpc.health.v1 Check",
    "store": "operate on a store",
    "sessions": "list, show, delete and fork sessions of a running daemon",
    "approvals": "list and decide pending approvals",
    "schedules": "create, list, pause, resume, delete and trigger schedules (runs at set times)",
    "prune": "delete the sessions last saved longer ago than --older-than (in-progress ones only "
    "with --status)",
    "mcp": "the daemon's MCP servers (daemon tools): state and tools",
    "status": "a running daemon at a glance: health, sessions, approvals (and with "
    "--metrics-address: version, store, listeners, runs, leases)",
    "leases": "list the session leases in a store; force-release those a dead daemon left",
    "completion": "print a shell completion script (bash or zsh)",
    "torture": "kill real daemons on a store at random moments and check every invariant (exit 1 "
    "on a violation)",
}

EXAMPLES = """examples:
  luoshod serve --store sqlite:///var/lib/luoshod/luoshod.db
  luoshod config show
  luoshod sessions list --status in-progress
  luoshod sessions watch trip-1
  luoshod sessions resume trip-1 --tool-timeout 5s
  luoshod approvals approve ap-1796224345776-7242f607 --note 'checked'
  luoshod prune --older-than 30d --dry-run
  source <(luoshod completion bash)

Run `luoshod COMMAND --help` for a command's options and examples."""


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def _serve_arguments(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help: str
) -> None:
    from .. import settings

    s = sub.add_parser(
        name,
        help=help,
        description="Run the daemon. Each setting comes from its flag, else its LUOSHOD_* "
        "variable, else the --config file, else its default.",
    )
    settings.add_flags(s)


def _config_arguments(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help: str
) -> None:
    from .. import settings

    cfg = _group(sub, name, help, "luoshod config show --json")
    show = cfg.add_parser(
        "show",
        help="print the effective configuration, secrets masked",
        description="Print the configuration `luoshod serve` would run with (same flags, "
        "variables and file), secrets masked, as TOML or JSON.",
    )
    show.add_argument("--json", action="store_true", help="JSON instead of TOML")
    settings.add_flags(show)


def _healthcheck_arguments(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help: str
) -> None:
    from .healthcheck import add_arguments

    hc = sub.add_parser(
        name,
        help=help,
        description="Call grpc.health.v1.Health/Check; exit 0 on SERVING, else 1 with one line on "
        "stderr.",
    )
    add_arguments(hc)


def _store_arguments(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help: str
) -> None:
    from ..store import DEFAULT_EVENT_LOG_LIMIT, DEFAULT_HISTORY_LIMIT

    store = _group(
        sub,
        name,
        help,
        "luoshod store copy --from lmdb:///srv/old --to postgresql://luoshod@db/luoshod\n"
        "  luoshod store verify --store lmdb:///srv/luoshod [SESSION_ID ...]",
    )
    c = store.add_parser(
        "copy",
        help="copy every session, its history, pending approvals and event log (resumable)",
        description="Copies every session, with its history, pending approvals and event log, "
        "from one store to another. Run it again to resume: sessions already equal at the "
        "destination are skipped.",
    )
    c.add_argument("--from", dest="from_url", required=True, metavar="URL", help="source store URL")
    c.add_argument(
        "--to", dest="to_url", required=True, metavar="URL", help="destination store URL"
    )
    c.add_argument(
        "--history-limit",
        type=_positive_int,
        default=DEFAULT_HISTORY_LIMIT,
        help="history entries the destination keeps per session",
    )
    c.add_argument(
        "--event-log-limit",
        type=_positive_int,
        default=DEFAULT_EVENT_LOG_LIMIT,
        help="events the destination keeps per session",
    )
    c.add_argument("--no-progress", action="store_true", help="no progress bar")
    v = store.add_parser(
        "verify",
        help="check the hash chain of each session's saves (R91); exit 1 naming the first bad save",
        description="Recomputes the hash chain of each kept save of the sessions named\n"
        "(every session of the store when none) and names the first save whose stored\n"
        "content no longer matches it. Exit 0: every chain checks out; 1: a save is bad;\n"
        "2: a usage or store error, or a named session the store does not hold.",
        epilog="examples:\n  luoshod store verify --store sqlite:///var/lib/luoshod/luoshod.db\n"
        "  luoshod store verify --store lmdb:///srv/luoshod order-7 order-8 --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    v.add_argument("--store", required=True, metavar="URL", help="the store URL")
    v.add_argument("session_ids", nargs="*", metavar="SESSION_ID", help="sessions to check")
    v.add_argument("--json", action="store_true", help="one JSON document instead of lines")


def _group(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help: str, examples: str
) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    """A command of subcommands; alone, it prints them (like ``kubectl config``)."""
    g = sub.add_parser(
        name,
        help=help,
        description=help,
        epilog=f"examples:\n  {examples}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    g.set_defaults(group_help=g.format_help)
    return g.add_subparsers(dest=f"{name}_command", metavar="COMMAND")


def _completion_arguments(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help: str
) -> None:
    c = sub.add_parser(
        name,
        help=help,
        description="Print a completion script for luoshod's commands, subcommands and options.",
        epilog="examples:\n  source <(luoshod completion bash)        # this shell\n"
        "  luoshod completion bash > /etc/bash_completion.d/luoshod\n"
        '  luoshod completion zsh > "${fpath[1]}/_luoshod"',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    c.add_argument("shell", choices=["bash", "zsh"])


def _torture_arguments(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help: str
) -> None:
    from .. import torture

    t = sub.add_parser(
        name,
        help=help,
        description=torture.__doc__.split("\n\n")[1],
        epilog="examples:\n"
        "  luoshod torture --store sqlite:///tmp/t.db --cycles 100 --seed 7\n"
        "  luoshod torture --store lmdb:///tmp/t.lmdb --daemons 1 --report t.json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    torture.add_arguments(t)


def _leases_arguments(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help: str
) -> None:
    leases = _group(
        sub,
        name,
        help,
        "luoshod leases release --store lmdb:///var/lib/luoshod/store --owner "
        "web-7f9c/1234/ab12cd34",
    )
    ls = leases.add_parser(
        "list",
        help="the live session leases in the store: session, holder, fencing token, expiry",
        description="Opens the store itself (not a daemon) and lists every live session lease: "
        "the session, "
        "its holder (a daemon's lease owner), its fencing token and when it expires unless "
        "renewed.",
        epilog="examples:\n  luoshod leases list --store sqlite:///var/lib/luoshod/luoshod.db\n"
        "  luoshod leases list --store postgresql://luoshod@db/luoshod --owner web-1 --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ls.add_argument(
        "--store", required=True, metavar="URL", help="the store URL (as the daemon's --store)"
    )
    ls.add_argument("--owner", metavar="NAME", help="only the leases of this holder")
    ls.add_argument("--json", action="store_true", help="a JSON array instead of a table")
    r = leases.add_parser(
        "release",
        help="release every lease one owner holds in the store (a daemon that is gone), or one "
        "session's",
        description="Opens the store itself (not a daemon) and releases every session lease held "
        "by --owner, "
        "the holder named by SESSION_BUSY, or the lease of one --session. Only for a daemon that "
        "is gone: "
        "a live one would lose its sessions (its next save is refused: LEASE_LOST).",
        epilog="examples:\n  luoshod leases release --store sqlite:///var/lib/luoshod/luoshod.db "
        "--owner host-1/4242/9f1c2b3a/6abd5fda.4026531836.257076\n"
        "  luoshod leases release --store sqlite:///var/lib/luoshod/luoshod.db --session order-42",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument(
        "--store", required=True, metavar="URL", help="the store URL (as the daemon's --store)"
    )
    which = r.add_mutually_exclusive_group(required=True)
    which.add_argument("--owner", metavar="NAME", help="the lease holder, as SESSION_BUSY names it")
    which.add_argument("--session", metavar="ID", help="one session whose lease to release")


def _admin_arguments(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    help: str,
    only: str | None = None,
) -> None:
    from . import admin

    admin.add_command(sub, name, help, only)


_ARGUMENTS: dict[
    str, Callable[[argparse._SubParsersAction[argparse.ArgumentParser], str, str], None]
] = {
    "serve": _serve_arguments,
    "config": _config_arguments,
    "healthcheck": _healthcheck_arguments,
    "store": _store_arguments,
    "sessions": _admin_arguments,
    "approvals": _admin_arguments,
    "schedules": _admin_arguments,
    "prune": _admin_arguments,
    "status": _admin_arguments,
    "mcp": _admin_arguments,
    "leases": _leases_arguments,
    "completion": _completion_arguments,
    "torture": _torture_arguments,
}


def _version() -> str:
    from .. import __version__

    return __version__


def _named_command(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names: its first word (``luoshod`` has no option of its own
    but ``-h``)."""
    return next((a for a in argv if not a.startswith("-")), None)


def _parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    p = Parser(
        prog="luoshod",
        description="durable AI-agent runs over gRPC",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"luoshod {_version()}")
    # Of the parser's class (Parser), as the command functions' ArgumentParser.
    sub = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        p.add_subparsers(dest="command", required=True, metavar="COMMAND"),
    )
    named = _named_command(argv)
    # The other commands are only listed, by the top-level --help (asked before the command,
    # or with no known command named): their parsers are not made for a command line that
    # cannot show it (each is a fraction of a millisecond of every command's start-up).
    listed = named not in COMMANDS or any(a in ("-h", "--help") for a in argv[: argv.index(named)])
    for name, help in COMMANDS.items():
        if name == named and _ARGUMENTS[name] is _admin_arguments:
            # and of its subcommands, only the one named (``list`` of ``sessions list``)
            _admin_arguments(sub, name, help, _named_command(argv[argv.index(name) + 1 :]))
        elif name == named:
            _ARGUMENTS[name](sub, name, help)
        elif listed:  # argparse never parses its arguments
            sub.add_parser(name, help=help)
    return p


async def _serve(config: Config, gc_tuning: bool = True) -> int:
    import asyncio
    import logging
    import signal

    from ..server.app import Daemon

    daemon = Daemon(config)
    await daemon.start()
    if gc_tuning:  # every module imported and the store open: those objects are frozen
        from ..server.gc_tuning import tune

        tune()
    # Scripts read this line on stdout. On a terminal that also shows the log at INFO, the
    # log's own "listening" line (with the store, TLS and tokens) already says it.
    said = (
        sys.stdout.isatty()
        and sys.stderr.isatty()
        and logging.getLogger("luoshod.server").isEnabledFor(logging.INFO)
    )
    if not said:
        print(f"luoshod listening on {', '.join(daemon.addresses)}", flush=True)
    if daemon.observe.metrics_address:
        print(f"luoshod metrics on http://{daemon.observe.metrics_address}/metrics", flush=True)
    if daemon.http is not None:
        print(f"luoshod console on {daemon.http.url}/", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    log = logging.getLogger("luoshod")
    signals = 0

    def on_signal() -> None:
        # The first signal drains; a second one (an operator's second Ctrl-C) halts the
        # runs now; a third exits at once, leaving the leases to expire.
        nonlocal signals
        signals += 1
        if signals == 1:
            stop.set()
        elif signals == 2:
            log.warning("second signal: halting the runs now (a third exits at once)")
            daemon.hurry()
        else:
            log.warning("third signal: exiting at once")
            os._exit(EXIT_FORCED)

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal)
    await stop.wait()
    log.info("signal received: draining (a second signal halts the runs now)")
    await daemon.stop()
    return 0


def _config_error(message: str) -> int:
    print(f"luoshod: configuration error: {message}", file=sys.stderr)
    return EXIT_CONFIG


def _as_config_file(shown: dict[str, object]) -> str:
    """``config show``'s TOML: a file ``--config`` can load back (the file's own path is
    a comment, not a key of it; no empty ``[providers]`` or ``[mcp_servers]`` table)."""
    file = shown.pop("config", None)
    for table in ("providers", "mcp_servers"):
        if not shown.get(table):
            shown.pop(table, None)
    head = "# the effective configuration of luoshod serve, secrets masked as ***\n"
    if file:
        head += f"# read from {file}\n"
    from .tomlout import dumps as toml_dumps

    return head + toml_dumps(shown)


def _healthcheck(args: argparse.Namespace) -> int:
    from .healthcheck import check

    listen: list[str] = []
    if not args.address:  # the daemon the same settings would start: load them
        from .. import settings

        try:
            listen = settings.load().listen
        except settings.SettingsError as e:
            return _config_error(str(e))
    return check(args, listen)


def _daemon(args: argparse.Namespace) -> int:
    """``serve`` and ``config show``: the settings, then the daemon or what it would run with."""
    from .. import logs, settings

    try:
        effective = settings.load(settings.given_flags(args))
    except settings.SettingsError as e:
        return _config_error(str(e))
    if args.command == "config":
        shown = settings.shown(effective)
        if args.json:
            import json

            print(json.dumps(shown, indent=2))
        else:
            print(_as_config_file(shown), end="")
        return 0
    logs.setup(effective.log_level, effective.log_format, contents=effective.log_contents)
    import asyncio

    from ..config import ConfigError
    from ..server.preflight import check_store_location

    try:
        config = settings.to_config(effective)
        check_store_location(config.store)
        return asyncio.run(_serve(config, effective.gc_tuning))
    except ConfigError as e:
        return _config_error(str(e))
    except OSError as e:
        print(f"luoshod: cannot start: {e}", file=sys.stderr)
        return EXIT_CONFIG


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # The parser imports what the command needs (gRPC's client, the protobuf modules: many
    # objects, all kept as long as the process): the cyclic collector's passes over them
    # are wasted, a tenth of a client command's start-up (bench/cli_start.py). Off while
    # the command line is read; then what was loaded is frozen out of the collector's
    # passes for a command that is not the daemon (whose start-up tunes the collector
    # itself: server/gc_tuning.py), and handed back to it when the command is done.
    collecting = gc.isenabled()
    gc.disable()
    try:
        args = _parser(argv).parse_args(argv)
    finally:
        if collecting:
            gc.enable()
    if args.command in ("serve", "config", "torture"):
        return _command(args, argv)
    gc.freeze()
    try:
        return _command(args, argv)
    finally:
        gc.unfreeze()


def _command(args: argparse.Namespace, argv: list[str]) -> int:
    if getattr(args, "group_help", None) and not getattr(args, f"{args.command}_command", None):
        print(args.group_help(), end="")  # `luoshod config` alone: its subcommands
        return 0
    if args.command == "completion":
        from .completion import script

        print(script(args.shell, COMMANDS, _parser), end="")
        return 0
    if args.command == "healthcheck":
        return _healthcheck(args)
    if args.command in ("serve", "config"):
        return _daemon(args)
    if args.command == "torture":
        from .. import torture

        return torture.main(args, argv[argv.index("torture") + 1 :])
    from .. import logs

    logs.setup(os.environ.get(LOG_LEVEL_ENV, "WARNING"))
    if args.command == "leases":
        from .leases import list_leases, release

        if args.leases_command == "list":
            return list_leases(args.store, args.owner, args.json)
        return release(args.store, args.owner, args.session)
    if args.command == "store" and args.store_command == "verify":
        from ..store.verify import run_verify

        return run_verify(args.store, args.session_ids, args.json)
    if args.command == "store":
        from ..store.copy import run_copy

        return run_copy(
            args.from_url,
            args.to_url,
            args.history_limit,
            args.event_log_limit,
            not args.no_progress,
        )
    from . import admin

    return admin.run(args)


__all__ = ["main"]
