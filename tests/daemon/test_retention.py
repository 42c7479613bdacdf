"""Retention: the daemon deletes finished sessions past their time to live by itself
(the daemon's ``retention_s``, or a session's own ``retention_ms`` from its request),
never a session in progress, paused or with queued inputs; counted in the metrics."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.server.app import Config, Daemon
from tests.support.harness import Harness, agent, calls, error_info, user
from tests.support.webhooks import metric, scrape

pytestmark = pytest.mark.asyncio


async def exists(h: Harness, sid: str) -> bool:
    try:
        await h.get(sid)
        return True
    except grpc.aio.AioRpcError as e:
        assert error_info(e)[1] == "CHECKPOINT_NOT_FOUND"
        return False


async def run(
    h: Harness, sid: str, retention: int | None = None, script: list | None = None
) -> None:
    req = pb.ExecuteRequest(
        session_id=sid, input=[user("hi")], agent=agent(script or [{"text": "ok"}], ["add"])
    )
    if retention is not None:
        req.retention_ms = retention * 1000
    async for resp in h.stub.Execute(req):
        if resp.event.type == "tool.call":
            break  # left in progress (its caller went away)


@pytest.mark.parametrize("store", ["memory", "sqlite"])
async def test_finished_sessions_past_their_retention_are_deleted(
    tmp_path: Path, store: str
) -> None:
    url = "memory://" if store == "memory" else f"sqlite:///{tmp_path}/db.db"
    daemon = Daemon(
        Config(
            listen=["127.0.0.1:0"],
            store=url,
            retention_s=100,
            retention_sweep_s=3600,
            metrics_listen="127.0.0.1:0",
        )
    )
    await daemon.start()
    try:
        h = Harness(daemon.addresses[0], daemon)
        await run(h, "short", retention=5)
        await run(h, "daemons")  # the daemon's 100 s
        await run(h, "forever", retention=0)
        await run(h, "busy", script=[calls(("add", {}))])  # in progress: waits for its tool
        history = await h.stub.History(pb.HistoryRequest(session_id="short"))
        assert history.entries
        retention, now = daemon.retention, time.time()
        assert retention is not None
        retention.clock = lambda: now + 10
        assert await retention.sweep() == ["short"]
        assert [await exists(h, s) for s in ("short", "daemons", "forever", "busy")] == [
            False,
            True,
            True,
            True,
        ]
        assert not (
            await h.stub.History(pb.HistoryRequest(session_id="short"))
        ).entries  # with its history
        retention.clock = lambda: now + 10_000
        assert await retention.sweep() == ["daemons"]
        assert [await exists(h, s) for s in ("forever", "busy")] == [True, True]
        text = await scrape(daemon)
        assert metric(text, "luoshod_retention_deleted_total") == 2
        assert metric(text, "luoshod_retention_sweeps_total") >= 2
        await h.close()
    finally:
        await daemon.stop()


async def test_the_daemon_enforces_retention_in_the_background(tmp_path: Path) -> None:
    daemon = Daemon(
        Config(
            listen=["127.0.0.1:0"],
            store=f"sqlite:///{tmp_path}/db.db",
            retention_s=0.3,
            retention_sweep_s=0.1,
        )
    )
    await daemon.start()
    try:
        h = Harness(daemon.addresses[0], daemon)
        await run(h, "old")
        await run(h, "kept", retention=0)
        deadline = time.monotonic() + 15
        while await exists(h, "old"):
            assert time.monotonic() < deadline, "not deleted by the background sweep"
            await asyncio.sleep(0.1)
        assert await exists(h, "kept")
        await h.close()
    finally:
        await daemon.stop()


async def test_a_session_s_own_retention_applies_without_a_daemon_retention(tmp_path: Path) -> None:
    daemon = Daemon(
        Config(listen=["127.0.0.1:0"], store=f"lmdb://{tmp_path}/lmdb", retention_sweep_s=3600)
    )
    await daemon.start()
    try:
        h = Harness(daemon.addresses[0], daemon)
        await run(h, "own", retention=5)
        await run(h, "plain")
        retention, now = daemon.retention, time.time()
        assert retention is not None
        retention.clock = lambda: now + 1
        assert await retention.sweep() == []
        retention.clock = lambda: now + 10**6
        assert await retention.sweep() == ["own"]
        assert [await exists(h, s) for s in ("own", "plain")] == [False, True]
        assert await daemon.store.queued_inputs("_retention") == []  # its mark went with it
        await h.close()
    finally:
        await daemon.stop()
