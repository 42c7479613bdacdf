#!/usr/bin/env python3
"""What webhooks cost a run (server/webhooks.py; not a test).

On SQLite and LMDB (durable), two in-process daemons over loopback gRPC, side by side in one
run, Executes interleaved so both meet the disk at the same moments: one daemon without
webhooks, one whose notifications (``run.done``) go to a receiver on loopback that answers
204. Each notification is written to the outbox in the same store transaction as the
``run.done`` event (no write of its own before the caller sees the event), then delivered
and removed by the worker, whose writes share the disk with the runs.

Prints the median Execute of a one-turn run on each, their ratio, and the delivery
latency (the caller's ``run.done`` → the receiver's POST). Target: the run with webhooks
within 1.5x of the run without (exit 1 otherwise).

    .venv/bin/python bench/webhooks.py
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

from aiohttp import web

from luosho.v1 import agent_pb2 as pb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from luoshod.config import Secret  # noqa: E402
from luoshod.server.app import Config, Daemon  # noqa: E402
from tests.support.harness import Harness, agent, user  # noqa: E402

N = 40
TARGET = 1.5
URLS = {"sqlite": "sqlite:///{d}/x.db", "lmdb": "lmdb://{d}/l"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def receiver(port: int, arrived: dict[str, float]) -> web.AppRunner:
    async def hook(request: web.Request) -> web.Response:
        body = await request.json()
        arrived.setdefault(body["data"]["session_id"], time.perf_counter())
        return web.Response(status=204)

    app = web.Application()
    app.router.add_post("/hook", hook)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner


async def execute(h: Harness, sid: str, spec: pb.AgentSpec) -> float:
    """The time the caller sees ``run.done``."""
    done = 0.0
    async for resp in h.stub.Execute(
        pb.ExecuteRequest(session_id=sid, input=[user("hi")], agent=spec)
    ):
        if resp.event.type == "run.done":
            done = time.perf_counter()
    return done


async def driver(name: str, url: str) -> bool:
    dirs = [tempfile.mkdtemp(prefix="luoshod-hookbench-") for _ in range(2)]
    port, arrived = free_port(), {}
    runner = await receiver(port, arrived)
    plain = Daemon(Config(listen=["127.0.0.1:0"], store=url.format(d=dirs[0])))
    hooked = Daemon(
        Config(
            listen=["127.0.0.1:0"],
            store=url.format(d=dirs[1]),
            webhook_url=f"http://127.0.0.1:{port}/hook",
            webhook_secret=Secret("whsec_YmVuY2ggc2VjcmV0IGJlbmNoIHNlY3JldA=="),
            webhook_events="run.done",
        )
    )
    await plain.start()
    await hooked.start()
    try:
        hp, hh = Harness(plain.addresses[0], plain), Harness(hooked.addresses[0], hooked)
        spec = agent([{"text": "ok"}], [])
        off, on, latency = [], [], []
        for k in range(N):
            for h, into in ((hp, off), (hh, on)):
                t = time.perf_counter()
                done = await execute(h, f"s{k}", spec)
                into.append(time.perf_counter() - t)
                if h is hh:
                    deadline = time.monotonic() + 10
                    while f"s{k}" not in arrived and time.monotonic() < deadline:
                        await asyncio.sleep(0.0005)
                    latency.append(arrived[f"s{k}"] - done)
        await hp.close()
        await hh.close()
    finally:
        await plain.stop()
        await hooked.stop()
        await runner.cleanup()
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)

    def ms(xs: list[float]) -> str:
        return f"{statistics.median(xs) * 1000:8.2f}"

    ratio = statistics.median(on) / statistics.median(off)
    print(f"{name:7} {ms(off)}  {ms(on)}  {ratio:6.2f}x  {ms(latency)}")
    return ratio <= TARGET


async def main() -> int:
    print(f"median ms of {N} each; a one-turn Execute, without and with a run.done webhook")
    print(f"{'driver':7} {'no hook':>8}  {'webhook':>8}  {'ratio':>7}  {'delivery':>8}")
    met = [await driver(name, url) for name, url in URLS.items()]
    if not all(met):
        print(f"missed: webhooks cost more than {TARGET}x")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
