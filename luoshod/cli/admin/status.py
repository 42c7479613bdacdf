"""``luoshod status``: one screen on a running daemon. From the API: whether it serves,
its sessions by status and its pending approvals. From its ``/metrics`` (``--metrics-
address``, the daemon's ``--metrics-listen``): its version, store, listeners, lease owner,
active runs and leases held — what the API does not say.

The metrics are read as text, without ``prometheus_client`` (a client command loads none
of the daemon's libraries)."""

from __future__ import annotations

import argparse
import re
import urllib.error
import urllib.request
from typing import Any

from . import render
from .errors import CommandFailed
from .render import STATUSES

PAGE_SIZE = 500
_SAMPLE = re.compile(r"^(\w+)(?:\{(.*)\})? (\S+)$")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def scrape(address: str, timeout: float = 5.0) -> dict[str, list[tuple[dict[str, str], float]]]:
    """``name → [(labels, value)]`` of the daemon's ``/metrics``. Raises ``OSError``."""
    url = address if "://" in address else f"http://{address}/metrics"
    with urllib.request.urlopen(url, timeout=timeout) as response:
        text = response.read().decode()
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for line in text.splitlines():
        if m := _SAMPLE.match(line):
            out.setdefault(m.group(1), []).append(
                (dict(_LABEL.findall(m.group(2) or "")), float(m.group(3)))
            )
    return out


def status(d: Any, args: argparse.Namespace) -> int:
    serving = _health(d.channel)
    counts = dict.fromkeys(STATUSES, 0)
    names = {v: k for k, v in STATUSES.items()}
    for s in d.client.list_sessions(page_size=PAGE_SIZE):
        counts[names.get(s.status, "in-progress")] += 1
    approvals = sum(1 for _ in d.client.approvals(None, page_size=PAGE_SIZE))
    shown: dict[str, Any] = {
        "address": args.address,
        "health": serving,
        "sessions": counts,
        "pending_approvals": approvals,
    }
    if args.metrics_address:
        try:
            m = scrape(args.metrics_address)
        except (OSError, urllib.error.URLError) as e:
            raise CommandFailed(f"cannot read the metrics at {args.metrics_address}: {e}") from None
        build = m.get("luoshod_build_info", [({}, 0.0)])[0][0]
        daemon = m.get("luoshod_daemon_info", [({}, 0.0)])[0][0]
        shown |= {
            "version": build.get("version", ""),
            "python": build.get("python", ""),
            "grpc": build.get("grpc", ""),
            "store": daemon.get("store", ""),
            "listen": [a for a in daemon.get("listen", "").split(",") if a],
            "lease_owner": daemon.get("lease_owner", ""),
            "active_runs": int(m.get("luoshod_active_runs", [({}, 0.0)])[0][1]),
            "leases_held": int(m.get("luoshod_leases_held", [({}, 0.0)])[0][1]),
        }
    if args.json:
        render.emit(shown)
        return 0
    rows = [
        ("daemon", f"{args.address}  {shown['health']}"),
        ("sessions", ", ".join(f"{n} {k}" for k, n in counts.items())),
        ("approvals", f"{approvals} pending"),
    ]
    if args.metrics_address:
        rows += [
            ("version", f"{shown['version']} (python {shown['python']}, grpc {shown['grpc']})"),
            ("store", shown["store"]),
            ("listeners", ", ".join(shown["listen"])),
            (
                "runs",
                f"{shown['active_runs']} active, {shown['leases_held']} leases held as "
                f"{shown['lease_owner']}",
            ),
        ]
    else:
        rows.append(
            (
                "more",
                "give --metrics-address HOST:PORT (the daemon's --metrics-listen) for its "
                "version, store, listeners, runs and leases",
            )
        )
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    return 0 if serving == "SERVING" else 1


#: grpc.health.v1's ServingStatus, by number.
_SERVING = {0: "UNKNOWN", 1: "SERVING", 2: "NOT_SERVING", 3: "SERVICE_UNKNOWN"}


def _health(channel: Any) -> str:
    """grpc.health.v1.Health/Check of the whole daemon, as raw bytes: the request (service
    "") is the empty message, the answer field 1, a varint (grpc_health is the daemon's
    library, which a client command does not load)."""
    answer: bytes = channel.unary_unary("/grpc.health.v1.Health/Check")(b"", timeout=10)
    status = answer[1] if len(answer) >= 2 and answer[0] == 0x08 else 0
    return _SERVING.get(status, str(status))


__all__ = ["scrape", "status"]
