"""``luoshod``: the command line. ``luoshod serve`` runs the daemon; ``luoshod config show``
prints the configuration it would run with; ``luoshod healthcheck`` asks a daemon whether
it serves; ``luoshod store copy`` copies a store into another; ``sessions``, ``approvals``
and ``prune`` operate a running daemon (:mod:`luoshod.admin`).

``serve`` and ``config show`` take the settings of :mod:`luoshod.settings` (a TOML file,
``LUOSHOD_*`` environment variables, flags; flags win). A bad setting stops them with one
line per fault naming the key, and exit code 2. The daemon prints one line
``luoshod listening on ADDR[, ADDR]`` on stdout when it accepts calls, so scripts and
tests started with ``--listen 127.0.0.1:0`` learn the port without polling.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys

from . import admin, logs, settings
from .config import ConfigError
from .healthcheck import add_arguments as add_healthcheck_arguments
from .healthcheck import check as healthcheck
from .server.app import Config, Daemon
from .store import DEFAULT_EVENT_LOG_LIMIT, DEFAULT_HISTORY_LIMIT
from .tomlout import dumps as toml_dumps

EXIT_CONFIG = 2


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="luoshod", description="durable AI-agent runs over gRPC")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser(
        "serve",
        help="run the daemon",
        description="Run the daemon. Each setting comes from its flag, else its LUOSHOD_* "
        "variable, else the --config file, else its default.",
    )
    settings.add_flags(s)
    cfg = sub.add_parser("config", help="the daemon's configuration").add_subparsers(
        dest="config_command", required=True
    )
    show = cfg.add_parser(
        "show",
        help="print the effective configuration, secrets masked",
        description="Print the configuration `luoshod serve` would run with (same flags, "
        "variables and file), secrets masked, as TOML or JSON.",
    )
    show.add_argument("--json", action="store_true", help="JSON instead of TOML")
    settings.add_flags(show)
    hc = sub.add_parser(
        "healthcheck",
        help="exit 0 if a daemon answers SERVING to grpc.health.v1 Check",
        description="Call grpc.health.v1.Health/Check; exit 0 on SERVING, else 1 with one line on stderr.",
    )
    add_healthcheck_arguments(hc)
    store = sub.add_parser("store", help="operate on a store").add_subparsers(
        dest="store_command", required=True
    )
    c = store.add_parser(
        "copy",
        help="copy every session, its history, pending approvals and event log (resumable)",
        description="Copies every session, with its history, pending approvals and event log, "
        "from one store to another. Run it again to resume: sessions already equal at the "
        "destination are skipped.",
    )
    c.add_argument("--from", dest="from_url", required=True, metavar="URL", help="source store URL")
    c.add_argument("--to", dest="to_url", required=True, metavar="URL", help="destination store URL")
    c.add_argument("--history-limit", type=_positive_int, default=DEFAULT_HISTORY_LIMIT, help="history entries the destination keeps per session")
    c.add_argument(
        "--event-log-limit",
        type=_positive_int,
        default=DEFAULT_EVENT_LOG_LIMIT,
        help="events the destination keeps per session",
    )
    c.add_argument("--no-progress", action="store_true", help="no progress bar")
    admin.add_commands(sub)
    return p


async def _serve(config: Config) -> int:
    daemon = Daemon(config)
    await daemon.start()
    print(f"luoshod listening on {', '.join(daemon.addresses)}", flush=True)
    if daemon.observe.metrics_address:
        print(f"luoshod metrics on http://{daemon.observe.metrics_address}/metrics", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    logging.getLogger("luoshod").info("signal received: draining")
    await daemon.stop()
    return 0


def _config_error(message: str) -> int:
    print(f"luoshod: configuration error: {message}", file=sys.stderr)
    return EXIT_CONFIG


def _as_config_file(shown: dict[str, object]) -> str:
    """``config show``'s TOML: a file ``--config`` can load back (the file's own path is
    a comment, not a key of it; no empty ``[providers]`` table)."""
    file = shown.pop("config", None)
    if not shown.get("providers"):
        shown.pop("providers", None)
    head = "# the effective configuration of luoshod serve, secrets masked as ***\n"
    if file:
        head += f"# read from {file}\n"
    return head + toml_dumps(shown)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if hasattr(args, "admin"):
        logs.setup(os.environ.get(settings.env_name("log_level"), "WARNING"))
        return admin.run(args.admin, args)
    if args.command == "store":
        logs.setup(os.environ.get(settings.env_name("log_level"), "WARNING"))
        from .store.copy import run_copy

        return run_copy(
            args.from_url, args.to_url, args.history_limit, args.event_log_limit, not args.no_progress
        )
    if args.command == "healthcheck":
        listen = []
        if not args.address:
            try:
                listen = settings.load().listen
            except settings.SettingsError as e:
                return _config_error(str(e))
        return healthcheck(args, listen)
    try:
        effective = settings.load(settings.given_flags(args))
    except settings.SettingsError as e:
        return _config_error(str(e))
    if args.command == "config":
        shown = settings.shown(effective)
        if args.json:
            print(json.dumps(shown, indent=2))
        else:
            print(_as_config_file(shown), end="")
        return 0
    logs.setup(effective.log_level, effective.log_format, contents=effective.log_contents)
    try:
        return asyncio.run(_serve(settings.to_config(effective)))
    except ConfigError as e:
        return _config_error(str(e))
    except OSError as e:
        print(f"luoshod: cannot start: {e}", file=sys.stderr)
        return 1


__all__ = ["main"]
