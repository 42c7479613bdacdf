"""SEMANTICS.md R4, R9, R27–R34: approvals over the gRPC API."""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest
from luosho.v1 import agent_pb2 as pb

from support import Harness, RunLog, agent, assert_valid_transcript, calls, error_info

SCHEMAS = {"a": {"type": "object"}, "b": {"type": "object"}, "c": {"type": "object", "required": ["x"]}}


def gated(script, *, needs=("b",), **kw) -> pb.AgentSpec:
    spec = agent(script, SCHEMAS, **kw)
    for t in spec.tools:
        t.needs_approval = t.name in needs
    return spec


TURN = calls(("a", {"x": 1}), ("b", {"x": 2}), ("c", {"x": 3}))
SCRIPT = [TURN, {"text": "all done"}]
executed: list[str] = []


def tools() -> dict:
    def run(name):
        def fn(args):
            executed.append(name)
            return f"{name}:{args.get('x')}"

        return fn

    return {n: run(n) for n in "abc"}


async def resolve(h: Harness, approval_id: str, approved: bool, note: str = "", tools_=None, **kw) -> RunLog:
    """Resolve and answer the continued run's tool calls."""
    log = RunLog()
    call = h.stub.Resolve(pb.ResolveRequest(approval_id=approval_id, approved=approved, note=note, **kw))
    try:
        async for resp in call:
            e = resp.event
            log.events.append(e)
            if e.type == "tool.call" and tools_ is not None:
                fn = tools_[e.tool_call.call.name]
                await h.submit(e.session_id, e.tool_call.call.id, json.dumps(fn(json.loads(e.tool_call.call.arguments_json))))
    except grpc.aio.AioRpcError as err:
        log.error = err
    return log


@pytest.fixture(autouse=True)
def _reset() -> None:
    executed.clear()


async def pause(h: Harness, sid: str, script=SCRIPT, **kw) -> tuple[RunLog, pb.Approval]:
    log = await h.run(sid, "go", gated(script, **kw), tools())
    req = log.of("approval.requested")
    assert req, log.types
    return log, req[0].approval_requested.approval


async def test_r4_r27_r28_a_gated_call_pauses_the_run_before_it_runs(h: Harness) -> None:
    log, approval = await pause(h, "r27")
    assert executed == ["a"]  # R28: a ran, c did not start
    assert log.done.finish_reason == pb.FINISH_REASON_AWAITING_APPROVAL
    assert log.done.status == pb.CHECKPOINT_STATUS_AWAITING_APPROVAL
    assert approval.tool_call.name == "b" and json.loads(approval.tool_call.arguments_json) == {"x": 2}
    assert [c.name for c in approval.remaining] == ["c"]
    assert approval.session_id == "r27" and log.done.approval_id == approval.approval_id
    cp = await h.get("r27")  # R4
    assert cp.status == pb.CHECKPOINT_STATUS_AWAITING_APPROVAL and cp.approval_id == approval.approval_id
    assert [m.tool_call_id for m in cp.messages if m.role == pb.ROLE_TOOL] == ["call_0_0"]
    listed = await h.stub.ListApprovals(pb.ListApprovalsRequest())
    assert [a.approval_id for a in listed.approvals] == [approval.approval_id]
    assert approval.fingerprint.hash == cp.fingerprint.hash  # R46: the approval carries it


async def test_r9_execute_on_a_paused_session_is_refused(h: Harness) -> None:
    _, approval = await pause(h, "r9a")
    calls_before = h.model_calls("r9a")
    log = await h.run("r9a", "hello?", gated(SCRIPT), tools())
    code, reason, meta = error_info(log.error)
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "SESSION_AWAITING_APPROVAL")
    assert meta == {"session_id": "r9a", "approval_id": approval.approval_id}
    assert h.model_calls("r9a") == calls_before and executed == ["a"]


async def test_r29_approved_runs_once_then_the_rest_then_one_model_call(h: Harness) -> None:
    _, approval = await pause(h, "r29")
    calls_before = h.model_calls("r29")
    log = await resolve(h, approval.approval_id, True, tools_=tools())
    assert log.error is None and log.done.finish_reason == pb.FINISH_REASON_STOP
    assert executed == ["a", "b", "c"]
    assert h.model_calls("r29") == calls_before + 1
    cp = await h.get("r29")
    results = [m for m in cp.messages if m.role == pb.ROLE_TOOL]
    assert [m.content for m in results] == ['"a:1"', '"b:2"', '"c:3"']
    assert_valid_transcript(cp)


async def test_r30_rejected_gets_a_structured_result_and_the_rest_still_runs(h: Harness) -> None:
    _, approval = await pause(h, "r30")
    log = await resolve(h, approval.approval_id, False, "too risky", tools_=tools())
    assert executed == ["a", "c"]
    rejection = json.loads(log.of("tool.result")[0].tool_result.result_json)
    assert rejection["rejected"] is True and rejection["note"] == "too risky"
    assert rejection["tool"] == "b" and rejection["tool_call_id"] == approval.tool_call.id
    assert log.of("tool.result")[0].tool_result.is_error
    assert log.done.finish_reason == pb.FINISH_REASON_STOP


async def test_r31_a_gated_remaining_call_pauses_again_and_nothing_runs_twice(h: Harness) -> None:
    _, first = await pause(h, "r31", needs=("b", "c"))
    log = await resolve(h, first.approval_id, True, tools_=tools())
    second = log.of("approval.requested")[0].approval_requested.approval
    assert second.approval_id != first.approval_id and second.tool_call.name == "c"
    assert log.types.count("step.start") == 0  # no model call
    assert executed == ["a", "b"]
    log = await resolve(h, second.approval_id, True, tools_=tools())
    assert executed == ["a", "b", "c"] and log.done.finish_reason == pb.FINISH_REASON_STOP


async def test_r32_a_remaining_call_with_invalid_arguments_gets_its_error(h: Harness) -> None:
    script = [calls(("b", {"x": 2}), ("c", {"y": 0})), {"text": "ok"}]
    _, approval = await pause(h, "r32", script)
    log = await resolve(h, approval.approval_id, True, tools_=tools())
    results = [e.tool_result for e in log.of("tool.result")]
    assert [r.tool_name for r in results] == ["b", "c"] and [r.is_error for r in results] == [False, True]
    assert "input schema" in json.loads(results[1].result_json)["error"]
    assert executed == ["b"]


async def test_r33_unknown_or_resolved_approvals_and_concurrent_resolutions(h: Harness) -> None:
    log = await resolve(h, "ap-nope", True)
    assert error_info(log.error)[:2] == (grpc.StatusCode.NOT_FOUND, "APPROVAL_NOT_FOUND")
    _, approval = await pause(h, "r33")
    both = await asyncio.gather(*(resolve(h, approval.approval_id, True, tools_=tools()) for _ in range(2)))
    reasons = sorted(log.reason for log in both)
    assert reasons == ["", "APPROVAL_NOT_FOUND"]
    assert executed.count("b") == 1
    again = await resolve(h, approval.approval_id, True)
    assert again.reason == "APPROVAL_NOT_FOUND"


async def test_r33_the_store_lets_exactly_one_claim_win(h: Harness) -> None:
    """Two daemons share a store: each loads the paused checkpoint and saves its
    resolution claiming the approval; the store lets exactly one through."""
    from luoshod.errors import ApprovalNotFound, LeaseLost

    _, approval = await pause(h, "r33s")
    store = h.daemon.store
    cps = [await store.load("r33s") for _ in range(2)]
    results = []
    for cp in cps:
        cp.version += 1
        try:
            await store.save(cp, stored_messages=len(cp.messages), claim=approval.approval_id)
            results.append("won")
        except (ApprovalNotFound, LeaseLost) as e:
            results.append(type(e).__name__)
    assert results == ["won", "ApprovalNotFound"]
    assert await store.get_approval(approval.approval_id) is None


async def test_r34_resolving_keeps_checkpointing_under_the_session_and_its_history(h: Harness) -> None:
    _, approval = await pause(h, "r34")
    before = await h.stub.History(pb.HistoryRequest(session_id="r34"))
    await resolve(h, approval.approval_id, True, tools_=tools())
    after = await h.stub.History(pb.HistoryRequest(session_id="r34"))
    assert len(after.entries) > len(before.entries)
    assert [e.version for e in after.entries][-len(before.entries) :] == [e.version for e in before.entries]
    statuses = [e.status for e in after.entries]
    assert statuses[0] == pb.CHECKPOINT_STATUS_FINISHED
    assert pb.CHECKPOINT_STATUS_AWAITING_APPROVAL in statuses


async def test_an_expired_approval_resolves_as_rejected(h: Harness) -> None:
    _, approval = await pause(h, "exp", approval_timeout_ms=1)
    assert approval.HasField("expires_at")
    engine = h.daemon.engine
    real_clock = engine.clock
    engine.clock = lambda: real_clock() + 60  # a minute later
    try:
        expired = await engine.expire_approvals()
    finally:
        engine.clock = real_clock
    assert expired == [approval.approval_id]
    cp = await h.get("exp")
    assert cp.status == pb.CHECKPOINT_STATUS_IN_PROGRESS
    log = await h.run("exp", None, resume=True, tools=tools())
    rejection = json.loads(log.of("tool.result")[0].tool_result.result_json)
    assert rejection["rejected"] and rejection["expired"]
    assert executed == ["a", "c"]
