#!/usr/bin/env python3
"""What ``if_busy`` costs (R68, R69; not a test).

On SQLite and LMDB (durable, the drivers' defaults), an in-process daemon over loopback
gRPC, side by side in one run:

- a plain Execute of a one-turn agent on a free session, against the same with
  ``if_busy=ENQUEUE`` (free: it runs at once, after two more reads of the store);
- the hand-over: a run holding the session ends, and the input queued behind it starts;
  the time from the first run's ``run.done`` (as its caller sees it) to the queued run's
  ``run.start`` (as its own caller sees it), which includes the enqueue's durable write
  being behind us, the run's end, the queue read, the record lookup and the new run's
  start;
- ``Store.enqueue_input`` alone (one durable write) and ``queued_inputs`` of a queue of 3.

    .venv/bin/python bench/busy.py
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from luosho.v1 import agent_pb2 as pb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from luoshod.server.app import Config, Daemon  # noqa: E402
from tests.support.harness import Harness, agent, calls, user  # noqa: E402

N = 30
URLS = {"sqlite": "sqlite:///{d}/x.db", "lmdb": "lmdb://{d}/l"}


async def execute(
    h: Harness, sid: str, text: str, spec: pb.AgentSpec, if_busy: int = 0
) -> list[tuple[str, float]]:
    """(type, arrival time) of each event of an Execute."""
    out = []
    req = pb.ExecuteRequest(session_id=sid, input=[user(text)], agent=spec, if_busy=if_busy)
    async for resp in h.stub.Execute(req):
        out.append((resp.event.type, time.perf_counter()))
        if resp.event.type == "tool.call":
            await h.submit(sid, resp.event.tool_call.call.id, "1")
    return out


async def driver(name: str, url: str) -> None:
    d = tempfile.mkdtemp(prefix="luoshod-queuebench-")
    daemon = Daemon(Config(listen=["127.0.0.1:0"], store=url.format(d=d)))
    await daemon.start()
    try:
        h = Harness(daemon.addresses[0], daemon)
        one = agent([{"text": "ok"}], [])
        plain, queued = [], []
        for k in range(N):  # interleaved, so both meet the disk at the same moments
            for mode, into in ((0, plain), (pb.IF_BUSY_ENQUEUE, queued)):
                t = time.perf_counter()
                await execute(h, f"free-{mode}-{k}", "hi", one, mode)
                into.append(time.perf_counter() - t)
        handover = []
        spec = agent([calls(("add", {})), {"text": "one"}, {"text": "two"}])
        for k in range(N):
            sid = f"busy-{k}"
            gate = asyncio.Event()
            first_events: list[tuple[str, float]] = []

            async def first_run() -> None:
                req = pb.ExecuteRequest(session_id=sid, input=[user("one")], agent=spec)
                async for resp in h.stub.Execute(req):
                    first_events.append((resp.event.type, time.perf_counter()))
                    if resp.event.type == "tool.call":
                        gate.set()
                        await asyncio.sleep(0.05)  # the second input gets queued meanwhile
                        await h.submit(sid, resp.event.tool_call.call.id, "1")

            task = asyncio.create_task(first_run())
            await gate.wait()
            second = await execute(h, sid, "two", spec, pb.IF_BUSY_ENQUEUE)
            await task
            done = next(t for typ, t in first_events if typ == "run.done")
            start = next(t for typ, t in second if typ == "run.start")
            handover.append(start - done)
        store = daemon.store
        writes, reads = [], []
        for k in range(N):
            t = time.perf_counter()
            await store.enqueue_input("bench", f"r{k}", b"x" * 200, now=time.time())
            writes.append(time.perf_counter() - t)
            if k % 3 == 2:
                t = time.perf_counter()
                await store.queued_inputs("bench")
                reads.append(time.perf_counter() - t)
                for j in range(k - 2, k + 1):
                    await store.remove_queued_input("bench", f"r{j}")
        await h.close()
    finally:
        await daemon.stop()
        shutil.rmtree(d, ignore_errors=True)

    def ms(xs: list[float]) -> str:
        return f"{statistics.median(xs) * 1000:8.2f}"

    ratio = statistics.median(queued) / statistics.median(plain)
    print(
        f"{name:7} {ms(plain)}  {ms(queued)}  {ratio:6.2f}x  {ms(handover)}  {ms(writes)}  "
        f"{ms(reads)}"
    )


async def main() -> None:
    print(f"median ms of {N} each; execute: a one-turn run on a free session")
    print(
        f"{'driver':7} {'execute':>8}  {'+enqueue':>8}  {'ratio':>7}  {'handover':>8}  "
        f"{'enqueue':>8}  {'queue 3':>8}"
    )
    for name, url in URLS.items():
        await driver(name, url)


if __name__ == "__main__":
    asyncio.run(main())
