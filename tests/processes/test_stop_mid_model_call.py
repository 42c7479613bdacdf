"""Issue 17, the operator's stop: a daemon stopped while a model call is in flight (its
drain timeout runs out, or a second Ctrl-C) halts the run: the client's stream ends with
UNAVAILABLE / SHUTTING_DOWN and its ErrorInfo (what clients retry on), the new session's
input is saved, the session's lease is released before the store closes, so the next
daemon resumes it at once. The daemon is a real subprocess on a real LMDB store; the
model call takes ten minutes, so a daemon that stops at all stopped it."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from luosho.v1 import agent_pb2 as pb
from tests.support.daemon_process import DaemonProcess
from tests.support.harness import Harness, agent, error_info

pytestmark = pytest.mark.asyncio

SLOW = agent([{"delay_ms": 600_000, "text": "too late"}], tools=[])
QUICK = agent([{"text": "done"}], tools=[])


def store(tmp_path: Path) -> str:
    return f"lmdb://{tmp_path}/store"


async def interrupted_run(d: DaemonProcess, session_id: str, *, signals: int) -> pb.Event | None:
    """Start a slow run, send SIGINT ``signals`` times once the model is answering (each
    after the daemon shows it took the one before), return the stream's error."""
    h = Harness(d.address)
    health = health_pb2_grpc.HealthStub(h.channel)
    assert d.proc is not None

    async def on_event(e: pb.Event) -> None:
        if e.type != "step.start":
            return
        watch = health.Watch(health_pb2.HealthCheckRequest(service=""))
        assert (await watch.read()).status == health_pb2.HealthCheckResponse.SERVING
        d.proc.send_signal(signal.SIGINT)
        if signals > 1:
            # The first signal was taken once health says NOT_SERVING.
            assert (await watch.read()).status == health_pb2.HealthCheckResponse.NOT_SERVING
            d.proc.send_signal(signal.SIGINT)
        watch.cancel()

    log = await h.run(session_id, "go", SLOW, on_event=on_event)
    await h.close()
    assert log.error is not None, log.types
    code, reason, meta = error_info(log.error)
    assert (code, reason) == (grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN"), (
        log.error.code(),
        log.error.details(),
    )
    assert meta.get("session_id") == session_id
    return None


async def resumes_at_once(tmp_path: Path, session_id: str) -> None:
    """The next daemon on the store sees the session with its input and resumes it with
    no SESSION_BUSY: the lease was released, not left to expire."""
    d = DaemonProcess("--store", store(tmp_path)).start()
    try:
        listed = subprocess.run(
            [sys.executable, "-m", "luoshod", "sessions", "list", "--json", "--address", d.address],
            capture_output=True,
            text=True,
            check=True,
        )
        assert [s["session_id"] for s in json.loads(listed.stdout)] == [session_id]
        h = Harness(d.address)
        cp = await h.get(session_id)
        assert cp.status == pb.CHECKPOINT_STATUS_IN_PROGRESS
        assert [m.content for m in cp.messages] == ["You add numbers.", "go"]
        log = await h.run(session_id, None, QUICK, resume=True)
        assert log.error is None, error_info(log.error)
        assert log.done.finish_reason == pb.FINISH_REASON_STOP
        await h.close()
    finally:
        d.stop()


async def test_a_drain_timeout_halts_the_model_call_and_ends_the_stream_shutting_down(
    tmp_path: Path,
) -> None:
    d = DaemonProcess("--store", store(tmp_path), "--drain-timeout-s", "1").start()
    try:
        await interrupted_run(d, "slow-1", signals=1)
        assert d.proc is not None
        assert await asyncio.to_thread(d.proc.wait, 120) == 0
        err = d.stderr()
        assert "not released" not in err and "is not open" not in err, err
    finally:
        d.stop()
    await resumes_at_once(tmp_path, "slow-1")


async def test_a_second_signal_stops_without_waiting_for_the_drain(tmp_path: Path) -> None:
    d = DaemonProcess("--store", store(tmp_path), "--drain-timeout-s", "3600").start()
    try:
        await interrupted_run(d, "slow-2", signals=2)
        assert d.proc is not None
        assert await asyncio.to_thread(d.proc.wait, 120) == 0
        err = d.stderr()
        assert "second signal" in err and "not released" not in err, err
    finally:
        d.stop()
    await resumes_at_once(tmp_path, "slow-2")
