"""Questions to a person (R88): a tool declared ``question`` pauses the run as an approval
does, the inbox lists it with its text, and ``Resolve`` answers it with text that becomes
the call's result — on every store, across a restart, and inside a sub-agent."""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.server.app import Config, Daemon
from tests.support.harness import (
    Harness,
    RunLog,
    agent,
    assert_valid_transcript,
    calls,
    error_info,
)
from tests.support.subagents import lead, lookup, task


def asking(script: list[dict], **kw) -> pb.AgentSpec:
    """An agent with a client tool ``add`` and the question tool ``ask``."""
    spec = agent(script, ("add",), **kw)
    spec.tools.append(
        pb.ToolSpec(
            name="ask",
            description="ask the person in charge",
            input_schema_json=json.dumps(
                {"type": "object", "properties": {"question": {"type": "string"}}}
            ),
            question=True,
        )
    )
    return spec


SCRIPT = [
    calls(("add", {"a": 1}), ("ask", {"question": "Which report, daily or weekly?"})),
    {"text": "done"},
]


def add(args):
    return {"sum": args.get("a", 0) + 1}


async def resolve(h: Harness, request: pb.ResolveRequest) -> RunLog:
    return await h.follow(h.stub.Resolve(request), "", {"add": add})


async def ask(h: Harness, sid: str, script=SCRIPT, **kw) -> tuple[RunLog, pb.Approval]:
    log = await h.run(sid, "go", asking(script, **kw), {"add": add})
    assert log.error is None, log.error
    return log, log.of("approval.requested")[0].approval_requested.approval


async def test_r88_a_question_pauses_the_run_and_the_inbox_lists_it(h: Harness) -> None:
    log, ap = await ask(h, "q-pause")
    assert log.done.finish_reason == pb.FINISH_REASON_AWAITING_APPROVAL
    # The question is never handed to the client; the call before it ran.
    assert [e.tool_call.call.name for e in log.of("tool.call")] == ["add"]
    assert ap.kind == pb.APPROVAL_KIND_QUESTION
    assert ap.question == "Which report, daily or weekly?"
    assert ap.tool_call.name == "ask"
    cp = await h.get("q-pause")
    assert cp.status == pb.CHECKPOINT_STATUS_AWAITING_APPROVAL and cp.approval_id == ap.approval_id
    listed = (await h.stub.ListApprovals(pb.ListApprovalsRequest(session_id="q-pause"))).approvals
    assert [(a.approval_id, a.kind, a.question) for a in listed] == [
        (ap.approval_id, pb.APPROVAL_KIND_QUESTION, "Which report, daily or weekly?")
    ]


async def test_r88_the_answer_becomes_the_calls_result_and_the_run_goes_on(h: Harness) -> None:
    _, ap = await ask(h, "q-answer")
    calls_before = h.model_calls("q-answer")
    log = await resolve(h, pb.ResolveRequest(approval_id=ap.approval_id, answer="weekly, please"))
    assert log.error is None, log.error
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    assert not log.of("tool.call")  # nobody but the person answers a question
    [resolved] = log.of("approval.resolved")
    r = resolved.approval_resolved
    assert (r.approved, r.answer, r.decided_by) == (True, "weekly, please", "anonymous")
    [result] = log.of("tool.result")
    assert json.loads(result.tool_result.result_json) == {"answer": "weekly, please"}
    assert not result.tool_result.is_error
    assert h.model_calls("q-answer") == calls_before + 1
    cp = await h.get("q-answer")
    assert_valid_transcript(cp)
    answer = next(m for m in cp.messages if m.role == pb.ROLE_TOOL and m.tool_name == "ask")
    assert json.loads(answer.content) == {"answer": "weekly, please"}
    # Resolved: out of the inbox, and a second answer finds nothing.
    listed = await h.stub.ListApprovals(pb.ListApprovalsRequest(session_id="q-answer"))
    assert not listed.approvals
    again = await resolve(h, pb.ResolveRequest(approval_id=ap.approval_id, answer="daily"))
    assert again.reason == "APPROVAL_NOT_FOUND"


async def test_r88_declining_a_question_records_a_declined_error_result(h: Harness) -> None:
    _, ap = await ask(h, "q-decline")
    log = await resolve(
        h, pb.ResolveRequest(approval_id=ap.approval_id, approved=False, note="not mine to say")
    )
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    [result] = log.of("tool.result")
    body = json.loads(result.tool_result.result_json)
    assert result.tool_result.is_error
    assert (body["error"], body["declined"], body["note"]) == ("declined", True, "not mine to say")
    assert log.of("approval.resolved")[0].approval_resolved.answer == ""


async def test_r88_approving_a_question_needs_an_answer_and_an_approval_takes_none(
    h: Harness,
) -> None:
    _, ap = await ask(h, "q-checks")
    with pytest.raises(grpc.aio.AioRpcError) as e:
        async for _ in h.stub.Resolve(pb.ResolveRequest(approval_id=ap.approval_id, approved=True)):
            pass
    assert error_info(e.value)[:2] == (grpc.StatusCode.INVALID_ARGUMENT, "ANSWER_REQUIRED")
    # Nothing was claimed: the question still waits and can be answered.
    cp = await h.get("q-checks")
    assert cp.approval_id == ap.approval_id
    # A plain approval refuses an answer.
    spec = agent([calls(("pay", {"n": 1})), {"text": "paid"}], ("add",))
    spec.tools.append(pb.ToolSpec(name="pay", input_schema_json="{}", needs_approval=True))
    log = await h.run("q-plain", "go", spec)
    plain = log.of("approval.requested")[0].approval_requested.approval
    assert plain.kind == pb.APPROVAL_KIND_APPROVAL and plain.question == ""
    with pytest.raises(grpc.aio.AioRpcError) as e:
        async for _ in h.stub.Resolve(
            pb.ResolveRequest(approval_id=plain.approval_id, approved=True, answer="yes")
        ):
            pass
    assert error_info(e.value)[:2] == (grpc.StatusCode.INVALID_ARGUMENT, "ANSWER_NOT_ALLOWED")
    assert (await h.get("q-plain")).approval_id == plain.approval_id
    log = await resolve(h, pb.ResolveRequest(approval_id=ap.approval_id, answer="daily"))
    assert log.done.finish_reason == pb.FINISH_REASON_STOP


async def test_r88_a_question_without_a_question_argument_asks_its_arguments(h: Harness) -> None:
    script = [calls(("ask", {"topic": "budget", "options": [1, 2]})), {"text": "ok"}]
    _, ap = await ask(h, "q-args", script)
    assert json.loads(ap.question) == {"topic": "budget", "options": [1, 2]}


async def test_r88_an_expired_question_is_declined(h: Harness) -> None:
    _, ap = await ask(h, "q-expire", approval_timeout_ms=1)
    assert ap.HasField("expires_at")
    await asyncio.sleep(0.05)
    log = await resolve(h, pb.ResolveRequest(approval_id=ap.approval_id, answer="too late"))
    assert log.error is None, log.error
    r = log.of("approval.resolved")[0].approval_resolved
    assert r.expired and not r.approved and r.answer == ""
    body = json.loads(log.of("tool.result")[0].tool_result.result_json)
    assert body["declined"] and body["expired"]


async def test_r88_a_subagents_question_pauses_the_whole_run_and_its_answer_reaches_it(
    h: Harness,
) -> None:
    sub = agent([calls(("ask", {"question": "Which source?"})), {"text": "r done"}], ("lookup",))
    sub.instructions = "You research."
    sub.tools.append(pb.ToolSpec(name="ask", input_schema_json="{}", question=True))
    spec = lead(
        [calls(task("researcher", "p")), {"text": "lead done"}],
        [pb.SubAgent(name="researcher", description="finds facts", agent=sub)],
    )
    log = await h.run("q-sub", "go", spec, {"lookup": lookup})
    assert log.done.finish_reason == pb.FINISH_REASON_AWAITING_APPROVAL
    ap = log.of("approval.requested")[0].approval_requested.approval
    assert ap.kind == pb.APPROVAL_KIND_QUESTION and ap.question == "Which source?"
    assert list(ap.subagent_path) == ["researcher"]
    log = await resolve(h, pb.ResolveRequest(approval_id=ap.approval_id, answer="the archive"))
    assert log.error is None, log.error
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    assert not log.of("tool.call")
    answered = [e for e in log.of("tool.result") if e.tool_result.tool_name == "ask"]
    assert json.loads(answered[0].tool_result.result_json) == {"answer": "the archive"}


async def test_r88_a_question_survives_a_restart_and_is_answered_after_it(
    config: Config,
) -> None:
    if not config.store.startswith("sqlite"):
        pytest.skip("the restart is shown on SQLite")
    first = Daemon(config)
    await first.start()
    h = Harness(first.addresses[0], first, config.scripted_call_log)
    try:
        _, ap = await ask(h, "q-restart")
    finally:
        await h.close()
        await first.stop()
    second = Daemon(config)
    await second.start()
    h = Harness(second.addresses[0], second, config.scripted_call_log)
    try:
        listed = (await h.stub.ListApprovals(pb.ListApprovalsRequest())).approvals
        assert [(a.approval_id, a.kind, a.question) for a in listed] == [
            (ap.approval_id, pb.APPROVAL_KIND_QUESTION, ap.question)
        ]
        log = await resolve(h, pb.ResolveRequest(approval_id=ap.approval_id, answer="weekly"))
        assert log.error is None, log.error
        assert log.done.finish_reason == pb.FINISH_REASON_STOP
        cp = await h.get("q-restart")
        assert_valid_transcript(cp)
        answer = next(m for m in cp.messages if m.role == pb.ROLE_TOOL and m.tool_name == "ask")
        assert json.loads(answer.content) == {"answer": "weekly"}
    finally:
        await h.close()
        await second.stop()
