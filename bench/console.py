#!/usr/bin/env python3
"""The web console's first page with 100,000 stored sessions, on SQLite and on LMDB.

For each store: 100,000 sessions are saved straight into a fresh store (a short trip
transcript each: system, user, a tool call, its result, the answer; 80% finished, 15% in
progress, 5% awaiting approval), then a real daemon is started on it with its HTTP
listener, and a real HTTP client (aiohttp, one keep-alive connection, as a browser tab)
asks for what the console's first page asks:

- ``list``: ``GET /api/v1/sessions?page_size=25`` — the table (target: median <= 100 ms);
- ``list finished``: the same with ``status=finished``;
- ``list prefix``: the id filter, ``session_id_prefix=trip-0999`` (the last 100 ids: a
  filter that scanned the ids before its prefix would show here), and ``prefix finished``
  the same with ``status=finished``;
- ``page``: the whole first page as a browser loads it, one after the other on one
  connection: index.html, the stylesheet, the seven modules, the list, and the 25 rows'
  ``GetSession`` (model and usage) — its time and the bytes transferred (target: under
  200 KB).

Each is asked ``ROUNDS`` times after two warm-up requests; the medians and the 90th
percentiles are printed, with ``MISSED`` (and exit code 1) for a target missed. Run with
``.venv/bin/python bench/console.py`` (``--sessions N`` for another count); not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _common import percentile  # noqa: E402

from luoshod.domain import (  # noqa: E402
    AgentSpec,
    Checkpoint,
    FinishReason,
    Message,
    Role,
    Status,
    ToolCall,
    ToolSpec,
    Usage,
)
from luoshod.server.app import Config, Daemon  # noqa: E402
from luoshod.store import store_from_url  # noqa: E402

ROUNDS = 40
FILL_CONCURRENCY = 64
LIST_TARGET_MS = 100.0
PAGE_TARGET_BYTES = 200_000
STATIC = [
    "/",
    "/static/console.css",
    *(
        f"/static/js/{m}.js"
        for m in ("app", "api", "dom", "sessions", "session", "approvals", "compare", "events")
    ),
]
AGENT = AgentSpec("scripted:trip", "You are a travel agent.", (ToolSpec("get_weather"),))


def checkpoint(i: int, now: float) -> Checkpoint:
    kind = i % 20
    status, reason = (
        (Status.AWAITING_APPROVAL, FinishReason.AWAITING_APPROVAL)
        if kind == 0
        else (Status.IN_PROGRESS, FinishReason.NONE)
        if kind <= 3
        else (Status.FINISHED, FinishReason.STOP)
    )
    call = ToolCall(f"call_0_{i}", "get_weather", '{"city": "Lisbon"}')
    messages = [
        Message(Role.SYSTEM, "You are a travel agent."),
        Message(Role.USER, f"Plan day {i} in Lisbon"),
        Message(Role.ASSISTANT, "Let me look that up.", tool_calls=[call]),
        Message(
            Role.TOOL,
            '{"sky": "sunny", "celsius": 24}',
            tool_call_id=call.id,
            tool_name="get_weather",
        ),
    ]
    if status is Status.FINISHED:
        messages.append(Message(Role.ASSISTANT, "Lisbon is sunny today. Enjoy the trip!"))
    usage = Usage(40, 16, 56, 2)
    return Checkpoint(
        f"trip-{i:06d}",
        messages,
        step_index=2,
        usage=usage,
        total_usage=usage,
        status=status,
        approval_id=f"ap-{i}" if status is Status.AWAITING_APPROVAL else "",
        finish_reason=reason,
        agent=AGENT,
        updated_at=now - (100_000 - i),
        version=1,
    )


async def fill(url: str, sessions: int) -> float:
    """Saves ``sessions`` checkpoints, ``FILL_CONCURRENCY`` at once; returns seconds."""
    store = store_from_url(url, history_limit=1)
    await store.open()
    now = time.time()
    start = time.perf_counter()
    todo = iter(range(sessions))

    async def worker() -> None:
        for i in todo:
            await store.save(checkpoint(i, now), stored_messages=0)

    try:
        await asyncio.gather(*(worker() for _ in range(FILL_CONCURRENCY)))
    finally:
        await store.close()
    return time.perf_counter() - start


async def timed(http: aiohttp.ClientSession, url: str) -> tuple[float, int, dict]:
    start = time.perf_counter()
    async with http.get(url) as r:
        body = await r.read()
        assert r.status == 200, (r.status, body[:200])
        data = await r.json() if r.content_type == "application/json" else {}
    return (time.perf_counter() - start) * 1000, len(body) + _header_bytes(r), data


def _header_bytes(r: aiohttp.ClientResponse) -> int:
    return sum(len(k) + len(v) + 4 for k, v in r.raw_headers) + 17


async def measure(base: str, sessions: int) -> dict[str, tuple[float, float, int]]:
    """name → (median ms, p90 ms, bytes)."""
    out: dict[str, tuple[float, float, int]] = {}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1)) as http:
        for name, path in (
            ("list", "/api/v1/sessions?page_size=25"),
            ("list finished", "/api/v1/sessions?page_size=25&status=finished"),
            ("list prefix", "/api/v1/sessions?page_size=25&session_id_prefix=trip-0999"),
            (
                "prefix finished",
                "/api/v1/sessions?page_size=25&session_id_prefix=trip-0999&status=finished",
            ),
        ):
            times, size = [], 0
            for n in range(ROUNDS + 2):
                ms, size, data = await timed(http, base + path)
                assert len(data["sessions"]) == 25 and data["next_page_token"]
                if n >= 2:
                    times.append(ms)
            times.sort()
            out[name] = (statistics.median(times), percentile(times, 90), size)

        times, total = [], 0
        for n in range(ROUNDS // 4 + 2):
            start = time.perf_counter()
            total = 0
            for path in STATIC:
                _, size, _ = await timed(http, base + path)
                total += size
            _, size, listing = await timed(http, base + "/api/v1/sessions?page_size=25")
            total += size
            for s in listing["sessions"]:
                _, size, _ = await timed(http, f"{base}/api/v1/sessions/{s['session_id']}")
                total += size
            if n >= 2:
                times.append((time.perf_counter() - start) * 1000)
        times.sort()
        out["page"] = (statistics.median(times), percentile(times, 90), total)
    return out


async def bench(kind: str, sessions: int, folder: Path) -> tuple[list[str], bool]:
    url = {"sqlite": f"sqlite:///{folder}/luoshod.db", "lmdb": f"lmdb://{folder}/lmdb"}[kind]
    filled = await fill(url, sessions)
    daemon = Daemon(Config(listen=["127.0.0.1:0"], store=url, http_listen="127.0.0.1:0"))
    await daemon.start()
    try:
        assert daemon.http is not None
        figures = await measure(daemon.http.url, sessions)
    finally:
        await daemon.stop()
    lines, ok = [], True
    for name, (median, p90, size) in figures.items():
        verdicts = []
        if name == "list":
            good = median <= LIST_TARGET_MS
            ok &= good
            verdicts.append(f"median <= {LIST_TARGET_MS:.0f} ms: {'ok' if good else 'MISSED'}")
        if name == "page":
            good = size < PAGE_TARGET_BYTES
            ok &= good
            verdicts.append(f"< {PAGE_TARGET_BYTES // 1000} KB: {'ok' if good else 'MISSED'}")
        lines.append(
            f"{kind:<7} {sessions:>8,} {name:<14} {median:>9.2f} {p90:>9.2f} {size:>9,}  "
            f"{', '.join(verdicts)}"
        )
    lines.append(f"{kind:<7} filled {sessions:,} sessions in {filled:.1f} s")
    return lines, ok


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument(
        "--stores", nargs="+", default=["sqlite", "lmdb"], choices=["sqlite", "lmdb"]
    )
    args = parser.parse_args()
    print(
        f"{'store':<7} {'sessions':>8} {'request':<14} {'median ms':>9} {'p90 ms':>9} "
        f"{'bytes':>9}  target"
    )
    ok = True
    for kind in args.stores:
        with tempfile.TemporaryDirectory(prefix=f"luoshod-console-{kind}-") as tmp:
            lines, good = await bench(kind, args.sessions, Path(tmp))
        ok &= good
        print("\n".join(lines), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
