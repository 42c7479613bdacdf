#!/usr/bin/env python3
"""The store reads an idle daemon makes each second, not a test.

One daemon on a SQLite file, with ``--schedules`` schedules that fire once an hour (none
fires during the run) and, in a second phase, one follow ``Watch`` on a session nobody
runs. Every call of the store is counted (a wrapper around the real SQLite store's
methods) for ``--seconds`` seconds of each phase, and the reads per second are printed
by method: the scheduler's (``list_schedules``, ``get_schedule``) in the first phase, the
watch's (``read_events``, ``list_leases``) in the second, the first phase's subtracted.

    .venv/bin/python bench/idle_reads.py                  # 20 schedules, 10 s a phase
    .venv/bin/python bench/idle_reads.py --seconds 30
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from luosho.v1 import agent_pb2 as pb  # noqa: E402
from luoshod.server.app import Config, Daemon  # noqa: E402
from tests.support.harness import Harness  # noqa: E402

READS = (
    "list_schedules",
    "get_schedule",
    "read_events",
    "list_leases",
    "list_sessions",
    "queued_sessions",
    "queued_inputs",
    "load",
)


def counted(store: Any, counts: Counter[str]) -> None:
    """Count every call of the store's read methods (the real ones are called)."""
    for name in READS:
        real: Callable[..., Awaitable[Any]] = getattr(store, name)

        def wrapper(*a: Any, _real: Any = real, _name: str = name, **kw: Any) -> Awaitable[Any]:
            counts[_name] += 1
            return _real(*a, **kw)

        setattr(store, name, wrapper)


def agent() -> pb.AgentSpec:
    return pb.AgentSpec(
        model="scripted:ok", model_settings_json=json.dumps({"script": [{"text": "ok"}]})
    )


async def phase(counts: Counter[str], seconds: float) -> dict[str, float]:
    counts.clear()
    await asyncio.sleep(seconds)
    return {name: counts[name] / seconds for name in READS}


async def main(schedules: int, seconds: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        daemon = Daemon(Config(listen=["127.0.0.1:0"], store=f"sqlite:///{tmp}/db.db"))
        await daemon.start()
        counts: Counter[str] = Counter()
        counted(daemon.store, counts)
        try:
            h = Harness(daemon.addresses[0], daemon)
            for k in range(schedules):
                spec = pb.ScheduleSpec(
                    name=f"hourly-{k}",
                    interval_ms=3_600_000,
                    agent=agent(),
                    input=[pb.Message(role=pb.ROLE_USER, content="go")],
                )
                await h.stub.CreateSchedule(pb.CreateScheduleRequest(spec=spec))
            async for _ in h.stub.Execute(
                pb.ExecuteRequest(
                    session_id="idle",
                    agent=agent(),
                    input=[pb.Message(role=pb.ROLE_USER, content="hi")],
                )
            ):
                pass
            await asyncio.sleep(1.5)  # the creations' nudges are over
            idle = await phase(counts, seconds)
            watch = h.stub.Watch(pb.WatchRequest(session_id="idle", follow=True))

            async def follow() -> None:
                async for _ in watch:
                    pass

            follower = asyncio.create_task(follow())
            await asyncio.sleep(1.5)  # its replay is over
            watched = await phase(counts, seconds)
            watch.cancel()
            follower.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await follower
            await h.close()
        finally:
            await daemon.stop()
    print(f"store reads per second, idle daemon, {schedules} hourly schedules, {seconds:g} s")
    print(f"{'method':<16}{'idle':>8}{'+watch':>9}")
    for name in READS:
        print(f"{name:<16}{idle[name]:8.2f}{watched[name] - idle[name]:9.2f}")
    sched = idle["list_schedules"] + idle["get_schedule"]
    look = sum(watched[n] - idle[n] for n in ("read_events", "list_leases"))
    print(f"scheduler reads/s: {sched:.2f}   idle follow watch reads/s: {look:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schedules", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    asyncio.run(main(args.schedules, args.seconds))
