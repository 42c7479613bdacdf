"""Several processes writing one store (drivers declaring MULTI_PROCESS)."""

from __future__ import annotations

import asyncio
import multiprocessing

from luoshod.domain import Message, Role
from luoshod.store import Capability

from . import process_workers
from .backend import Backend

OWN = 25
CONTESTED = 25


async def test_r7_writers_in_two_processes(backend: Backend) -> None:
    backend.require(Capability.MULTI_PROCESS)
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    names = ["p1", "p2"]
    procs = [
        ctx.Process(
            target=process_workers.write,
            args=(backend.url, name, barrier, results, OWN, CONTESTED),
            daemon=True,
        )
        for name in names
    ]
    for p in procs:
        p.start()
    try:
        outcomes = dict([await asyncio.to_thread(results.get, True, 90) for _ in procs])
    finally:
        for p in procs:
            await asyncio.to_thread(p.join, 30)
            if p.is_alive():
                p.kill()
    failures = {n: o for n, o in outcomes.items() if isinstance(o, str)}
    assert not failures, failures
    assert [p.exitcode for p in procs] == [0, 0]
    # Opened only now: the two processes created the file and its schema concurrently.
    store = await backend.open()

    # Each contested session was won by exactly one process, whose save is the one stored.
    won = {name: set(outcomes[name]) for name in names}
    assert won["p1"].isdisjoint(won["p2"])
    assert won["p1"] | won["p2"] == {f"contested-{i:03d}" for i in range(CONTESTED)}
    for name in names:
        for sid in won[name]:
            cp = await store.load(sid)
            assert cp is not None and cp.version == 1
            assert cp.messages == [Message(Role.USER, f"by {name}")]

    # Every save of each process's own sessions landed.
    for name in names:
        for i in range(OWN):
            sid = f"{name}-{i:03d}"
            cp = await store.load(sid)
            assert cp is not None and cp.version == 3
            assert [m.content for m in cp.messages] == [f"{sid} turn {v}" for v in (1, 2, 3)]
    page, _ = await store.list_sessions(status=None, page_size=1000, page_token="")
    assert len(page) == 2 * OWN + CONTESTED
