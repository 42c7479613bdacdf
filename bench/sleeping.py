#!/usr/bin/env python3
"""What sleeping sessions cost a daemon (R86), not a test.

A sleeping session is a row of the store and nothing else: no task, lease or timer in any
daemon. This puts N sessions to sleep for a day (an agent whose first turn calls
``sleep``) on a SQLite file, then starts a fresh daemon on that store and one on an empty
store, and prints each one's RSS once its waker has listed the sleepers (its start
sweep), the time of one sweep over them (the listing by status the waker makes), and the
store's size. With ``--wake S`` the sessions sleep S seconds instead and the run also
times how long the daemon takes to wake and finish all of them.

    .venv/bin/python bench/sleeping.py                 # 10,000 sleepers
    .venv/bin/python bench/sleeping.py --wake 20       # and their wake, 20 s later
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from luosho.v1 import agent_pb2 as pb  # noqa: E402
from luoshod.domain import Status  # noqa: E402
from luoshod.store import store_from_url  # noqa: E402
from tests.support.daemon_process import DaemonProcess  # noqa: E402
from tests.support.harness import Harness  # noqa: E402


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024


def sleeper(seconds: float) -> pb.AgentSpec:
    script = [
        {"tool_calls": [{"name": "sleep", "arguments": {"seconds": seconds}}]},
        {"text": "woke"},
    ]
    return pb.AgentSpec(
        model="scripted:nap", sleep_tool=True, model_settings_json=json.dumps({"script": script})
    )


async def put_to_sleep(address: str, n: int, seconds: float, concurrency: int = 64) -> float:
    h = Harness(address)
    spec, todo = sleeper(seconds), iter(range(n))

    async def worker() -> None:
        for k in todo:
            call = h.stub.Execute(
                pb.ExecuteRequest(
                    session_id=f"nap-{k:05d}",
                    input=[pb.Message(role=pb.ROLE_USER, content="later")],
                    agent=spec,
                )
            )
            async for resp in call:
                if resp.event.type == "run.done":
                    assert resp.event.run_done.finish_reason == pb.FINISH_REASON_SLEEPING

    started = time.monotonic()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    await h.close()
    return time.monotonic() - started


async def count(url: str, status: Status) -> tuple[int, float]:
    """How many sessions have ``status``, and the time of that listing (one sweep)."""
    store = store_from_url(url)
    await store.open()
    try:
        started, token, found = time.monotonic(), "", 0
        while True:
            page, token = await store.list_sessions(status=status, page_size=500, page_token=token)
            found += sum(1 for s in page if s.wake_at is not None or status is not Status.SLEEPING)
            if not token:
                return found, time.monotonic() - started
    finally:
        await store.close()


def serve(url: str) -> DaemonProcess:
    return DaemonProcess("--store", url, "--max-loop-lag-ms", "0").start()


async def main_async(opts: argparse.Namespace) -> int:
    folder = Path(tempfile.mkdtemp(prefix="luoshod-sleeping-"))
    url, empty = f"sqlite:///{folder}/sleepers.db", f"sqlite:///{folder}/empty.db"
    seconds = opts.wake or 86_400.0
    d = serve(url)
    try:
        took = await put_to_sleep(d.address, opts.sessions, seconds)
    finally:
        d.stop()
    print(
        f"{opts.sessions:,} sessions put to sleep in {took:.1f} s ({opts.sessions / took:,.0f}/s)"
    )
    sleeping, sweep_s = await count(url, Status.SLEEPING)
    print(f"sleeping in the store: {sleeping:,}; one sweep lists them in {sweep_s * 1000:.0f} ms")
    db = folder / "sleepers.db"
    size = sum(p.stat().st_size for p in folder.glob("sleepers.db*"))
    print(f"store size: {size / 1e6:.1f} MB ({size / max(sleeping, 1):,.0f} bytes a session)")
    assert db.exists()
    rows = []
    for label, where in (("no sessions", empty), (f"{sleeping:,} sleeping", url)):
        d = serve(where)
        try:
            assert d.proc is not None
            await asyncio.sleep(opts.settle)  # the start sweep has listed them by now
            rows.append((label, rss_mb(d.proc.pid)))
            if opts.wake and where == url:
                wait = max(0.0, seconds - took)
                started = time.monotonic()
                while (await count(url, Status.FINISHED))[0] < sleeping:
                    await asyncio.sleep(0.5)
                    if time.monotonic() - started > wait + 600:
                        print("not all woken in time")
                        return 1
                woke = time.monotonic() - started
                print(f"all {sleeping:,} woken and finished {woke:.1f} s after the daemon started")
        finally:
            d.stop()
    for label, mb in rows:
        print(f"daemon RSS with {label:<16} {mb:6.1f} MB")
    print(f"difference: {rows[1][1] - rows[0][1]:+.1f} MB")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument(
        "--wake", type=float, default=0.0, help="sleep S seconds, and time the wake"
    )
    parser.add_argument("--settle", type=float, default=5.0, help="seconds before RSS is read")
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
