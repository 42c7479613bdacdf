"""Provider failures through the daemon's gRPC API, once per wire format: transient errors
retried with backoff (honouring Retry-After), what still fails ends the run with
PROVIDER_ERROR and the last in-progress checkpoint intact (R6), and Resume continues
without repeating a recorded step (R11, R22)."""

from __future__ import annotations

import json
import re

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.harness import Harness, assert_valid_transcript, error_info
from tests.support.model_fakes import FakeServer, Fault, turn
from tests.support.providers import StartDaemon, add, llm_agent

pytestmark = pytest.mark.asyncio


async def test_transient_failures_are_retried_then_succeed(
    fake: FakeServer, llm_daemon: StartDaemon
) -> None:
    h = await llm_daemon(max_retries=6, timeout_s=0.3)
    fake.script = [turn("made it")]
    fake.faults = [
        Fault(429, "rate_limit_error", retry_after="0.2"),
        Fault(500, "server_error"),
        Fault(503, "service_unavailable"),
        Fault(529, "overloaded_error"),
        Fault(hang=True),  # the client's timeout fires
        Fault(reset=True),  # connection closed without an answer
    ]
    log = await h.run("flaky", "hi", llm_agent())
    assert log.error is None, log.error
    assert log.done.final_text == "made it"
    assert len(fake.requests) == 7 and fake.answered() == [0]
    # Retry-After is honoured: the retry after the 429 came no sooner than it asked.
    assert fake.requests[1].at - fake.requests[0].at >= 0.2
    cp = await h.get("flaky")
    assert cp.usage.model_calls == 1  # failed attempts are not model calls


async def test_exhausted_retries_fail_with_provider_error_and_resume_repeats_nothing(
    fake: FakeServer, llm: Harness
) -> None:
    fake.script = [turn("", ("add", {"a": 1, "b": 2}), usage=(10, 4)), turn("3", usage=(20, 1))]

    async def fail_next_call(e: pb.Event) -> None:
        if e.type == "tool.call":  # the model's next call fails every attempt (max_retries=3)
            fake.faults = [Fault(500, "server_error")] * 4
            await llm.submit("fail", e.tool_call.call.id, "3")

    log = await llm.run("fail", "1+2", llm_agent(), on_event=fail_next_call)
    code, reason, meta = error_info(log.error)
    assert (code, reason) == (grpc.StatusCode.UNAVAILABLE, "PROVIDER_ERROR")
    assert meta == {
        "provider": "llm",
        "model": "test-model",
        "status": "500",
        "error_type": "server_error",
        "provider_message": "injected 500",
        "attempts": "4",
        "transient": "true",
        "retry_after_s": "0.001",  # the session's failure backoff (FAST: 1 ms)
        "session_id": "fail",
    }
    assert "HTTP 500" in log.error.details() and "4 attempt(s)" in log.error.details()
    assert len(fake.requests) == 5
    # R6: the last in-progress checkpoint (the tool result) is intact.
    cp = await llm.get("fail")
    assert cp.status == pb.CHECKPOINT_STATUS_IN_PROGRESS
    assert cp.messages[-1].role == pb.ROLE_TOOL and cp.step_index == 1
    version = cp.version
    # Resume continues from there: the tool-call turn is not generated again (R22), the
    # recorded result is not run again (R21), usage continues from the checkpoint (R11).
    again = await llm.run("fail", None, resume=True)
    assert again.error is None, again.error
    assert again.done.final_text == "3"
    assert "tool.call" not in again.types
    assert fake.answered() == [0, 1]
    cp = await llm.get("fail")
    assert_valid_transcript(cp)
    assert cp.version == version + 1 and cp.step_index == 2
    assert (cp.usage.prompt_tokens, cp.usage.completion_tokens, cp.usage.model_calls) == (30, 5, 2)


async def test_client_errors_are_not_retried(fake: FakeServer, llm: Harness) -> None:
    fake.faults = [Fault(400, "invalid_request_error")]
    log = await llm.run("bad-request", "hi", llm_agent())
    code, reason, meta = error_info(log.error)
    # No retry can fix it: not UNAVAILABLE, so no client retries it either.
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "PROVIDER_REJECTED")
    assert (meta["status"], meta["error_type"], meta["attempts"], meta["transient"]) == (
        "400",
        "invalid_request_error",
        "1",
        "false",
    )
    assert meta["provider_message"] == "injected 400" and "retry_after_s" not in meta
    assert len(fake.requests) == 1


async def test_a_retry_after_longer_than_the_cap_fails_at_once(
    fake: FakeServer, llm: Harness
) -> None:
    fake.faults = [Fault(429, "rate_limit_error", retry_after="120")]
    log = await llm.run("slow-down", "hi", llm_agent())  # backoff_max_s = 1
    _, reason, meta = error_info(log.error)
    assert reason == "PROVIDER_ERROR"
    assert (meta["status"], meta["attempts"], meta["retry_after_s"]) == ("429", "1", "120")
    assert "asks to wait 120s" in log.error.details()
    assert len(fake.requests) == 1


async def test_timeouts_exhausted_fail_with_provider_error(
    fake: FakeServer, llm_daemon: StartDaemon
) -> None:
    h = await llm_daemon(max_retries=1, timeout_s=0.2)
    fake.faults = [Fault(hang=True), Fault(hang=True)]
    log = await h.run("hung", "hi", llm_agent())
    _, reason, meta = error_info(log.error)
    assert reason == "PROVIDER_ERROR"
    assert (meta["error_type"], meta["attempts"], meta["transient"]) == ("timeout", "2", "true")
    assert "status" not in meta  # no HTTP answer at all
    # The first model call of a new session failed: nothing was saved (R6), so the same
    # Execute can simply be sent again.
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await h.get("hung")
    assert err.value.code() == grpc.StatusCode.NOT_FOUND


async def test_a_stream_broken_midway_is_retried(fake: FakeServer, llm: Harness) -> None:
    fake.script = [
        turn("The whole answer, streamed.", ("add", {"a": 1}), usage=(5, 5)),
        turn("Done."),
    ]
    error_type = "overloaded_error" if fake.kind == "anthropic" else "server_error"
    fake.faults = [Fault(mid_stream="cut"), Fault(mid_stream="error", error_type=error_type)]
    log = await llm.run("cut", "go", llm_agent(settings={"stream": True}), {"add": add})
    assert log.error is None, log.error
    assert log.done.final_text == "Done."
    # The broken attempts streamed their first piece; the retry streamed the whole turn
    # again, and only the whole turn is recorded.
    step1 = "".join(e.text_delta.text for e in log.of("text.delta") if e.text_delta.step == 1)
    assert re.fullmatch(r"(The ){0,2}The whole answer, streamed\.", step1), step1
    cp = await h_get(llm, "cut")
    assert [m.content for m in cp.messages if m.role == pb.ROLE_ASSISTANT] == [
        "The whole answer, streamed.",
        "Done.",
    ]
    assert json.loads(cp.messages[2].tool_calls[0].arguments_json) == {"a": 1}
    assert len(fake.requests) == 4


async def h_get(h: Harness, sid: str) -> pb.Checkpoint:
    cp = await h.get(sid)
    assert_valid_transcript(cp)
    return cp


async def test_cancel_stops_a_model_call_in_flight(
    fake: FakeServer, llm_daemon: StartDaemon
) -> None:
    h = await llm_daemon(timeout_s=30)
    fake.faults = [Fault(hang=True)]  # the model never answers

    async def cancel_at_step(e: pb.Event) -> None:
        if e.type == "step.start":
            await fake.arrived.wait()  # the HTTP call is in flight
            await h.stub.Cancel(pb.CancelRequest(session_id="abort"))

    log = await h.run("abort", "go", llm_agent(settings={"stream": True}), on_event=cancel_at_step)
    assert log.done.finish_reason == pb.FINISH_REASON_ABORTED  # at once, not after timeout_s
    assert len(fake.requests) == 1
