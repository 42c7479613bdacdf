"""``luoshod``: the command line. ``luoshod serve`` runs the daemon; ``luoshod store copy``
copies a store into another; ``sessions``, ``approvals`` and ``prune`` operate a running
daemon (:mod:`luoshod.admin`).

Every flag has a ``LUOSHOD_*`` environment variable (flags win). The daemon prints one
line ``luoshod listening on ADDR[, ADDR]`` on stdout when it accepts calls, so scripts and
tests started with ``--listen 127.0.0.1:0`` learn the port without polling.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from pathlib import Path

from . import admin
from .server.app import DEFAULT_LISTEN, DEFAULT_STORE, Config, ConfigError, Daemon
from .store import DEFAULT_EVENT_LOG_LIMIT, DEFAULT_HISTORY_LIMIT


def _env(name: str, default: str | None = None) -> str | None:
    return os.environ.get(f"LUOSHOD_{name}", default)


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="luoshod", description="durable AI-agent runs over gRPC")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="run the daemon")
    listen = _env("LISTEN")
    s.add_argument(
        "--listen",
        action="append",
        help=f"host:port or unix:/path, repeatable (env LUOSHOD_LISTEN, comma-separated; default {DEFAULT_LISTEN})",
    )
    s.add_argument("--store", default=_env("STORE", DEFAULT_STORE), help=f"store URL (env LUOSHOD_STORE; default {DEFAULT_STORE})")
    s.add_argument(
        "--history-limit",
        type=_positive_int,
        default=int(_env("HISTORY_LIMIT", str(DEFAULT_HISTORY_LIMIT))),  # type: ignore[arg-type]
        help="history entries kept per session (env LUOSHOD_HISTORY_LIMIT; 0 keeps none)",
    )
    s.add_argument(
        "--event-log-limit",
        type=_positive_int,
        default=int(_env("EVENT_LOG_LIMIT", str(DEFAULT_EVENT_LOG_LIMIT))),  # type: ignore[arg-type]
        help="events kept per session for Watch (env LUOSHOD_EVENT_LOG_LIMIT)",
    )
    s.add_argument("--max-payload-bytes", type=_positive_int, default=int(_env("MAX_PAYLOAD_BYTES", "4194304")))  # type: ignore[arg-type]
    s.add_argument("--tool-timeout", type=float, default=float(_env("TOOL_TIMEOUT", "300")), help="seconds a run waits for a tool result")  # type: ignore[arg-type]
    s.add_argument("--drain-timeout", type=float, default=float(_env("DRAIN_TIMEOUT", "10")))  # type: ignore[arg-type]
    s.add_argument("--scripts-dir", type=Path, default=_env("SCRIPTS_DIR"), help="where scripted:NAME finds NAME.json")
    s.add_argument("--scripted-call-log", type=Path, default=_env("SCRIPTED_CALL_LOG"), help="append a line per scripted model call (tests)")
    s.add_argument("--allow-remote", action="store_true", default=_env("ALLOW_REMOTE") == "1")
    s.add_argument("--config", type=Path, default=_env("CONFIG"), help="TOML file with the model providers (env LUOSHOD_CONFIG)")
    s.add_argument("--log-level", default=_env("LOG_LEVEL", "INFO"))
    s.add_argument("--metrics-listen", default=_env("METRICS_LISTEN"), metavar="HOST:PORT", help="serve Prometheus /metrics there (env LUOSHOD_METRICS_LISTEN; default off)")
    s.add_argument("--otel-endpoint", default=os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"), metavar="URL", help="export OpenTelemetry traces over OTLP/HTTP to URL/v1/traces (env OTEL_EXPORTER_OTLP_ENDPOINT; default off)")
    s.set_defaults(listen_env=listen)
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
    c.set_defaults(log_level=_env("LOG_LEVEL", "WARNING"))
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


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    if hasattr(args, "admin"):
        return admin.run(args.admin, args)
    if args.command == "store":
        from .store.copy import run_copy

        return run_copy(
            args.from_url, args.to_url, args.history_limit, args.event_log_limit, not args.no_progress
        )
    listen = args.listen or (args.listen_env.split(",") if args.listen_env else [DEFAULT_LISTEN])
    config = Config(
        listen=[a.strip() for a in listen if a.strip()],
        store=args.store,
        history_limit=args.history_limit,
        event_log_limit=args.event_log_limit,
        max_payload_bytes=args.max_payload_bytes,
        tool_timeout_s=args.tool_timeout,
        drain_timeout_s=args.drain_timeout,
        scripts_dir=args.scripts_dir,
        scripted_call_log=args.scripted_call_log,
        allow_remote=args.allow_remote,
        config_file=args.config,
        metrics_listen=args.metrics_listen or None,
        otel_endpoint=args.otel_endpoint or None,
    )
    try:
        return asyncio.run(_serve(config))
    except ConfigError as e:
        print(f"luoshod: configuration error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"luoshod: cannot start: {e}", file=sys.stderr)
        return 1


__all__ = ["main"]
