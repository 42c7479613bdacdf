"""Watch: a durable cursor over a session's events."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc

from luosho.v1 import agent_pb2 as pb
from luoshod.server.app import Config, Daemon
from tests.support.harness import Harness, agent, calls, error_info, watch

STEPS = [calls(("add", {"a": k})) for k in range(20)] + [{"text": "done"}]


async def test_replay_of_a_finished_run(h: Harness) -> None:
    log = await h.run("w1", "go", agent(STEPS[-3:], max_steps=25), {"add": lambda a: a["a"]})
    replay = await watch(h, "w1")
    assert (
        [e.seq for e in replay]
        == [e.seq for e in log.events]
        == list(range(1, len(log.events) + 1))
    )
    assert [e.type for e in replay] == log.types
    assert [e.seq for e in await watch(h, "w1", after=5)] == list(range(6, len(log.events) + 1))
    assert await watch(h, "nobody") == []


async def test_a_watcher_disconnected_three_times_sees_every_event_once_in_order(
    h: Harness,
) -> None:
    release, held = asyncio.Event(), asyncio.Event()
    step = 0

    async def add(args):
        nonlocal step
        step += 1
        if step == 3:
            held.set()
            await release.wait()  # hold the run so the watcher joins mid-run
        return args["a"]

    run = asyncio.create_task(h.run("w20", "go", agent(STEPS, max_steps=25), {"add": add}))
    await held.wait()
    seen: list[pb.Event] = []
    cursor = 0
    for chunk in (4, 9, 17):  # three disconnects at different points
        got = await watch(h, "w20", cursor, stop_after=chunk)
        seen += got
        cursor = got[-1].seq
        if chunk == 9:
            release.set()
    seen += await watch(h, "w20", cursor)  # follows live to run.done
    log = await run
    assert [e.seq for e in seen] == [e.seq for e in log.events]
    assert [e.type for e in seen] == log.types and seen[-1].type == "run.done"


async def following(h: Harness, sid: str) -> tuple[list[str], asyncio.Task[None]]:
    """A follow watch of ``sid`` from its start, once its one run is replayed: the types
    it receives, and its task (ended by the next run's ``run.done``)."""
    got: list[str] = []
    replayed = asyncio.Event()

    async def follower() -> None:
        call = h.stub.Watch(pb.WatchRequest(session_id=sid, after_seq=0, follow=True))
        async for resp in call:
            got.append(resp.event.type)
            if got.count("run.done") == 1:
                replayed.set()
            if got.count("run.done") == 2:
                call.cancel()
                return

    task = asyncio.create_task(follower())
    await asyncio.wait_for(replayed.wait(), 10)  # the first run replayed; still following
    return got, task


async def test_follow_keeps_watching_across_runs(h: Harness) -> None:
    spec = agent([{"text": "one"}, {"text": "two"}])
    await h.run("wf", "first", spec)
    got, task = await following(h, "wf")
    await h.run("wf", "second", spec)
    await asyncio.wait_for(task, 10)
    assert got.count("run.start") == 2


async def test_r89_a_follow_watch_on_a_session_nobody_runs_reads_the_store_once_a_look(
    tmp_path: Path,
) -> None:
    """Each look (a second) of a follow watch waiting on a session no daemon runs is one
    store read, of the log (a run of another daemon writes there before anything is sent
    live), not of the leases too; a run started meanwhile is still followed."""
    daemon = Daemon(Config(listen=["127.0.0.1:0"], store=f"sqlite:///{tmp_path}/db.db"))
    await daemon.start()
    try:
        h = Harness(daemon.addresses[0], daemon)
        spec = agent([{"text": "one"}, {"text": "two"}])
        await h.run("idle", "first", spec)
        reads = {"read_events": 0, "list_leases": 0}
        store = daemon.store
        for method in reads:
            real = getattr(store, method)

            def counted(*a: object, _real: object = real, _name: str = method, **kw: object):
                reads[_name] += 1
                return _real(*a, **kw)  # type: ignore[operator]

            setattr(store, method, counted)
        got, task = await following(h, "idle")
        await asyncio.sleep(0.2)  # its replay's reads are over
        reads.update(read_events=0, list_leases=0)
        await asyncio.sleep(2.5)  # two looks
        assert reads["list_leases"] == 0
        assert 1 <= reads["read_events"] <= 3
        await h.run("idle", "second", spec)
        await asyncio.wait_for(task, 10)
        assert got.count("run.start") == 2
        await h.close()
    finally:
        await daemon.stop()


async def test_drain_ends_a_following_watch_with_shutting_down(daemon, h: Harness) -> None:
    await h.run("wd", "hi", agent([{"text": "one"}]))
    got: list[str] = []
    started = asyncio.Event()

    async def follower() -> tuple:
        call = h.stub.Watch(pb.WatchRequest(session_id="wd", follow=True))
        try:
            async for resp in call:
                got.append(resp.event.type)
                if resp.event.type == "run.done":
                    started.set()
        except grpc.aio.AioRpcError as err:
            return error_info(err)[:2]
        return ()

    task = asyncio.create_task(follower())
    await asyncio.wait_for(started.wait(), 10)
    await daemon.stop()
    assert await asyncio.wait_for(task, 10) == (grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN")
