"""R51 within one daemon, and many sessions at once."""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.harness import Harness, agent, assert_valid_transcript, calls, error_info

pytestmark = pytest.mark.asyncio


async def test_r51_second_run_on_a_busy_session_is_refused(h: Harness) -> None:
    spec = agent([calls(("add", {})), {"text": "ok"}])
    started = asyncio.Event()
    release = asyncio.Event()

    async def slow_add(args):
        started.set()
        await release.wait()
        return 1

    first = asyncio.create_task(h.run("r51", "one", spec, {"add": slow_add}))
    await started.wait()  # the first run is waiting for its tool
    second = await h.run("r51", "two", spec, {"add": slow_add})
    code, reason, meta = error_info(second.error)
    assert (code, reason) == (grpc.StatusCode.ABORTED, "SESSION_BUSY")
    assert meta["session_id"] == "r51" and second.events == []
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await h.stub.DeleteSession(pb.DeleteSessionRequest(session_id="r51"))
    assert error_info(err.value)[1] == "SESSION_BUSY"
    release.set()
    done = await first
    assert done.done.finish_reason == pb.FINISH_REASON_STOP
    cp = await h.get("r51")
    assert [m.content for m in cp.messages if m.role == pb.ROLE_USER] == ["one"]


async def test_r51_two_simultaneous_executes_exactly_one_runs(h: Harness) -> None:
    spec = agent([calls(("add", {})), {"text": "ok"}])
    logs = await asyncio.gather(
        *(h.run("race", "go", spec, {"add": lambda a: 1}) for _ in range(2))
    )
    reasons = sorted(log.reason for log in logs)
    assert reasons == ["", "SESSION_BUSY"]
    assert sum(1 for log in logs if log.done) == 1


async def test_fifty_sessions_at_once_all_finish_correctly(h: Harness) -> None:
    script = [calls(("add", {"a": k}), ("add", {"a": -k})) for k in range(4)] + [{"text": "done"}]
    spec = agent(script, tool_concurrency=2)

    async def add(args):
        await asyncio.sleep(0)  # a tool that yields once, so the 50 sessions' answers interleave
        return args["a"]

    logs = await asyncio.gather(
        *(h.run(f"many-{n}", f"go {n}", spec, {"add": add}) for n in range(50))
    )
    assert all(log.done and log.done.finish_reason == pb.FINISH_REASON_STOP for log in logs)
    for n in range(50):
        cp = await h.get(f"many-{n}")
        assert_valid_transcript(cp)
        assert cp.messages[1].content == f"go {n}"
        assert [json.loads(m.content) for m in cp.messages if m.role == pb.ROLE_TOOL] == [
            v for k in range(4) for v in (k, -k)
        ]
    listed = await h.stub.ListSessions(
        pb.ListSessionsRequest(page_size=20, status=pb.CHECKPOINT_STATUS_FINISHED)
    )
    ids = [s.session_id for s in listed.sessions]
    while listed.next_page_token:
        listed = await h.stub.ListSessions(
            pb.ListSessionsRequest(
                page_size=20,
                page_token=listed.next_page_token,
                status=pb.CHECKPOINT_STATUS_FINISHED,
            )
        )
        ids += [s.session_id for s in listed.sessions]
    assert ids == sorted(f"many-{n}" for n in range(50))
    none = await h.stub.ListSessions(
        pb.ListSessionsRequest(status=pb.CHECKPOINT_STATUS_IN_PROGRESS)
    )
    assert list(none.sessions) == []


async def test_a_client_back_at_once_after_dropping_its_stream_waits_for_the_orphan(
    h: Harness,
) -> None:
    # The model takes 0.5 s; the client drops its stream while it answers. That run stops
    # only once the model call is checkpointed (R6); a Resume sent at once waits for it
    # instead of getting SESSION_BUSY for a run nobody listens to any more.
    spec = agent([{**calls(("add", {"a": 1})), "delay_ms": 500}, {"text": "ok"}])
    dropped = await h.run("orphan", "go", spec, stop_at=lambda e: e.type == "step.start")
    assert dropped.dropped
    resumed = await h.run("orphan", agent=spec, tools={"add": lambda a: a["a"]}, resume=True)
    assert resumed.error is None, resumed.reason
    assert resumed.done is not None and resumed.done.final_text == "ok"
    assert "model.turn" not in resumed.types[:2]  # the dropped run's turn was kept, not redone
    cp = await h.get("orphan")
    assert_valid_transcript(cp)
    assert sum(1 for m in cp.messages if m.role == pb.ROLE_ASSISTANT) == 2
