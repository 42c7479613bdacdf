"""SIGTERM drains: health NOT_SERVING, new runs refused, active runs stop at their next
boundary with their checkpoints intact, streams end with UNAVAILABLE/SHUTTING_DOWN."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from luosho.v1 import agent_pb2 as pb
from luoshod.server.app import Config, Daemon
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.harness import Harness, agent, calls, error_info

pytestmark = pytest.mark.asyncio


async def test_drain_finishes_the_model_call_in_flight_and_refuses_new_runs(tmp_path: Path) -> None:
    d = Daemon(Config(listen=["127.0.0.1:0"], store=db_url(tmp_path), drain_timeout_s=10))
    await d.start()
    h = Harness(d.addresses[0], d)
    health = health_pb2_grpc.HealthStub(h.channel)
    spec = agent([{"delay_ms": 400, **calls(("add", {}))}, {"text": "ok"}])
    stopping: list[asyncio.Task[None]] = []
    statuses = []
    service = health_pb2.HealthCheckRequest(service="luosho.v1.AgentService")
    watch = health.Watch(service)
    assert (await watch.read()).status == health_pb2.HealthCheckResponse.SERVING

    async def on_event(e: pb.Event) -> None:
        if e.type == "step.start":  # the model is answering (400 ms)
            stopping.append(asyncio.create_task(d.stop()))
            # The drain has begun once health says so: Daemon.stop turns health
            # NOT_SERVING, then marks its runs draining, with no await in between.
            change = await asyncio.wait_for(watch.read(), 10)
            assert change.status == health_pb2.HealthCheckResponse.NOT_SERVING
            watch.cancel()
            resp = await health.Check(service)
            statuses.append(resp.status)
            refused = await h.run("other", "hi", spec)
            statuses.append(error_info(refused.error)[:2])

    log = await h.run("drain", "go", spec, on_event=on_event)
    assert statuses == [
        health_pb2.HealthCheckResponse.NOT_SERVING,
        (grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN"),
    ]
    assert error_info(log.error)[:2] == (grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN")
    await stopping[0]
    await h.close()

    # The model call that was in flight was finished and checkpointed (R1, R6).
    again = Daemon(Config(listen=["127.0.0.1:0"], store=db_url(tmp_path)))
    await again.start()
    try:
        h = Harness(again.addresses[0], again)
        cp = await h.get("drain")
        assert cp.status == pb.CHECKPOINT_STATUS_IN_PROGRESS and cp.step_index == 1
        assert cp.messages[-1].tool_calls[0].id == "call_0_0"
        await h.close()
    finally:
        await again.stop()


async def test_sigterm_during_a_run_leaves_a_resumable_checkpoint(tmp_path: Path) -> None:
    proc = DaemonProcess("--store", db_url(tmp_path)).start()
    try:
        h = Harness(proc.address)
        spec = agent([calls(("add", {"a": 1})), calls(("add", {"a": 2})), {"text": "done"}])
        answered = 0

        async def on_event(e: pb.Event) -> None:
            nonlocal answered
            if e.type == "tool.call":
                if answered == 1:
                    proc.proc.terminate()  # SIGTERM while the run waits for its 2nd tool
                    return
                answered += 1
                await h.submit("term", e.tool_call.call.id, "1")

        log = await h.run("term", "go", spec, on_event=on_event)
        assert error_info(log.error)[:2] == (grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN")
        assert proc.proc.wait(20) == 0
        await h.close()
    finally:
        proc.stop()
    proc = DaemonProcess("--store", db_url(tmp_path)).start()
    try:
        h = Harness(proc.address)
        log = await h.run("term", None, resume=True, tools={"add": lambda a: a["a"]})
        assert log.done.finish_reason == pb.FINISH_REASON_STOP
        assert [e.tool_call.call.id for e in log.of("tool.call")] == ["call_1_0"]
        await h.close()
    finally:
        proc.stop()
