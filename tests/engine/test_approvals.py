"""docs/reference/rules.md R4, R9, R27–R34: approvals, in the engine."""

from __future__ import annotations

import asyncio
import json

import pytest

from luoshod.domain import Approval, FinishReason, Status
from luoshod.errors import ApprovalNotFound, LeaseLost, SessionAwaitingApproval
from tests.support.engine_harness import (
    EngineHarness,
    RunLog,
    agent,
    assert_valid_transcript,
    calls,
    tool_results,
)

SCHEMAS = {
    "a": {"type": "object"},
    "b": {"type": "object"},
    "c": {"type": "object", "required": ["x"]},
}
TURN = calls(("a", {"x": 1}), ("b", {"x": 2}), ("c", {"x": 3}))
SCRIPT = [TURN, {"text": "all done"}]
executed: list[str] = []


def gated(script=SCRIPT, *, needs=("b",), **kw):
    return agent(script, SCHEMAS, needs_approval=needs, **kw)


def tools() -> dict:
    def run(name):
        def fn(args):
            executed.append(name)
            return f"{name}:{args.get('x')}"

        return fn

    return {n: run(n) for n in "abc"}


@pytest.fixture(autouse=True)
def _reset() -> None:
    executed.clear()


async def pause(h: EngineHarness, sid: str, script=SCRIPT, **kw) -> tuple[RunLog, Approval]:
    log = await h.run(sid, "go", gated(script, **kw), tools())
    req = log.of("approval.requested")
    assert req, log.types
    return log, req[0]["approval"]


async def test_r4_r27_r28_a_gated_call_pauses_the_run_before_it_runs(h: EngineHarness) -> None:
    log, approval = await pause(h, "r27")
    assert executed == ["a"]  # R28: a ran, c did not start
    assert log.done["finish_reason"] is FinishReason.AWAITING_APPROVAL
    assert log.done["status"] is Status.AWAITING_APPROVAL
    assert approval.call.name == "b" and json.loads(approval.call.arguments_json) == {"x": 2}
    assert [c.name for c in approval.remaining] == ["c"]
    assert approval.session_id == "r27" and log.done["approval_id"] == approval.approval_id
    cp = await h.get("r27")  # R4
    assert cp.status is Status.AWAITING_APPROVAL and cp.approval_id == approval.approval_id
    assert [m.tool_call_id for m in tool_results(cp)] == ["call_0_0"]
    listed, _ = await h.store.list_approvals(session_id=None, page_size=10, page_token="")
    assert [a.approval_id for a in listed] == [approval.approval_id]
    assert approval.fingerprint.hash == cp.fingerprint.hash  # R46: the approval carries it


async def test_r9_execute_on_a_paused_session_is_refused(h: EngineHarness) -> None:
    _, approval = await pause(h, "r9a")
    calls_before = h.model_calls("r9a")
    before = await h.get("r9a")
    log = await h.run("r9a", "hello?", gated(), tools())
    assert isinstance(log.error, SessionAwaitingApproval)
    assert log.error.metadata == {"session_id": "r9a", "approval_id": approval.approval_id}
    assert log.events == []
    assert h.model_calls("r9a") == calls_before and executed == ["a"]
    assert await h.get("r9a") == before


async def test_r29_approved_runs_once_then_the_rest_then_one_model_call(h: EngineHarness) -> None:
    _, approval = await pause(h, "r29")
    calls_before = h.model_calls("r29")
    log = await h.resolve(approval.approval_id, True, tools=tools())
    assert log.error is None and log.done["finish_reason"] is FinishReason.STOP
    assert executed == ["a", "b", "c"]
    assert h.model_calls("r29") == calls_before + 1
    cp = await h.get("r29")
    assert [m.content for m in tool_results(cp)] == ['"a:1"', '"b:2"', '"c:3"']
    assert_valid_transcript(cp)


async def test_r30_rejected_gets_a_structured_result_and_the_rest_still_runs(
    h: EngineHarness,
) -> None:
    _, approval = await pause(h, "r30")
    log = await h.resolve(approval.approval_id, False, "too risky", tools=tools())
    assert executed == ["a", "c"]
    first = log.of("tool.result")[0]
    rejection = json.loads(first["result_json"])
    assert rejection["rejected"] is True and rejection["note"] == "too risky"
    assert rejection["tool"] == "b" and rejection["tool_call_id"] == approval.call.id
    assert first["is_error"]
    assert log.done["finish_reason"] is FinishReason.STOP


async def test_r31_a_gated_remaining_call_pauses_again_and_nothing_runs_twice(
    h: EngineHarness,
) -> None:
    _, first = await pause(h, "r31", needs=("b", "c"))
    log = await h.resolve(first.approval_id, True, tools=tools())
    second = log.of("approval.requested")[0]["approval"]
    assert second.approval_id != first.approval_id and second.call.name == "c"
    assert log.types.count("step.start") == 0  # no model call
    assert executed == ["a", "b"]
    log = await h.resolve(second.approval_id, True, tools=tools())
    assert executed == ["a", "b", "c"] and log.done["finish_reason"] is FinishReason.STOP


async def test_r32_a_remaining_call_with_invalid_arguments_gets_its_error(h: EngineHarness) -> None:
    script = [calls(("b", {"x": 2}), ("c", {"y": 0})), {"text": "ok"}]
    _, approval = await pause(h, "r32", script)
    log = await h.resolve(approval.approval_id, True, tools=tools())
    results = log.of("tool.result")
    assert [r["tool_name"] for r in results] == ["b", "c"] and [r["is_error"] for r in results] == [
        False,
        True,
    ]
    assert "input schema" in json.loads(results[1]["result_json"])["error"]
    assert executed == ["b"]


async def test_r33_unknown_or_resolved_approvals_and_concurrent_resolutions(
    h: EngineHarness,
) -> None:
    log = await h.resolve("ap-nope", True)
    assert (
        isinstance(log.error, ApprovalNotFound) and log.error.metadata["approval_id"] == "ap-nope"
    )
    _, approval = await pause(h, "r33")
    both = await asyncio.gather(
        *(h.resolve(approval.approval_id, True, tools=tools()) for _ in range(2))
    )
    assert sorted(log.reason for log in both) == ["", "APPROVAL_NOT_FOUND"]
    assert executed.count("b") == 1
    again = await h.resolve(approval.approval_id, True)
    assert again.reason == "APPROVAL_NOT_FOUND"


async def test_r33_the_store_lets_exactly_one_claim_win(h: EngineHarness) -> None:
    """Two writers share a store: each loads the paused checkpoint and saves its
    resolution claiming the approval; the store lets exactly one through."""
    _, approval = await pause(h, "r33s")
    cps = [await h.get("r33s") for _ in range(2)]
    results = []
    for cp in cps:
        cp.version += 1
        try:
            await h.store.save(cp, stored_messages=len(cp.messages), claim=approval.approval_id)
            results.append("won")
        except (ApprovalNotFound, LeaseLost) as e:
            results.append(type(e).__name__)
    assert results == ["won", "ApprovalNotFound"]
    assert await h.store.get_approval(approval.approval_id) is None


async def test_r34_resolving_keeps_checkpointing_under_the_session_and_its_history(
    h: EngineHarness,
) -> None:
    _, approval = await pause(h, "r34")
    before = await h.history("r34")
    await h.resolve(approval.approval_id, True, tools=tools())
    after = await h.history("r34")
    assert len(after) > len(before)
    assert [e.checkpoint.version for e in after][-len(before) :] == [
        e.checkpoint.version for e in before
    ]
    statuses = [e.status for e in after]
    assert statuses[0] is Status.FINISHED
    assert Status.AWAITING_APPROVAL in statuses


async def test_an_expired_approval_resolves_as_rejected(h: EngineHarness) -> None:
    _, approval = await pause(h, "exp", approval_timeout_ms=1)
    assert approval.expires_at is not None
    engine = h.engine
    real_clock = engine.clock
    engine.clock = lambda: real_clock() + 60  # a minute later
    try:
        expired = await engine.expire_approvals()
    finally:
        engine.clock = real_clock
    assert expired == [approval.approval_id]
    assert (await h.get("exp")).status is Status.IN_PROGRESS
    log = await h.run("exp", resume=True, tools=tools())
    rejection = json.loads(log.of("tool.result")[0]["result_json"])
    assert rejection["rejected"] and rejection["expired"]
    assert executed == ["a", "c"]
