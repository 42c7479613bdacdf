"""The wire: one test per RPC of ``luosho.v1.AgentService``, on every store of ``h``
(memory, an SQLite file, LMDB). Each checks what gRPC adds to the engine — the request
and response conversion, the status code and ErrorInfo of each error the RPC maps, the
streaming, the daemon's run registry — and leaves the rules themselves to tests/engine/,
which runs them against the engine directly. Watch is in test_watch.py, request
validation in test_bad_input.py, SESSION_BUSY in test_busy.py."""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.harness import (
    Harness,
    RunLog,
    agent,
    assert_valid_transcript,
    calls,
    error_info,
    user,
)

ONE_TOOL = [calls(("add", {"a": 1}), text="adding"), {"text": "done"}]


def add(args):
    return args.get("a", 0) * 10


async def rpc_error(coro) -> tuple[grpc.StatusCode, str, dict[str, str], str]:
    """(code, reason, metadata, details) of a unary call that must fail."""
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await coro
    return (*error_info(err.value), err.value.details())


async def resolve(h: Harness, approval_id: str, approved: bool, **kw) -> RunLog:
    """Resolve, answering the continued run's tool calls with ``add``."""
    log = RunLog()
    try:
        async for resp in h.stub.Resolve(
            pb.ResolveRequest(approval_id=approval_id, approved=approved, **kw)
        ):
            log.events.append(resp.event)
            if resp.event.type == "tool.call":
                c = resp.event.tool_call.call
                await h.submit(
                    resp.event.session_id, c.id, json.dumps(add(json.loads(c.arguments_json)))
                )
    except grpc.aio.AioRpcError as err:
        log.error = err
    return log


def gated(script=ONE_TOOL, **kw) -> pb.AgentSpec:
    spec = agent(script, **kw)
    spec.tools[0].needs_approval = True
    return spec


async def test_execute_streams_the_run_and_maps_its_errors(h: Harness) -> None:
    log = await h.run(
        "x", "go", agent(ONE_TOOL), {"add": add}, business_state={"k": 1}, history_limit=2
    )
    assert log.error is None
    assert log.types == [
        "run.start",
        "step.start",
        "model.turn",
        "tool.call",
        "tool.result",
        "step.done",
        "step.start",
        "model.turn",
        "step.done",
        "run.done",
    ]
    assert [e.seq for e in log.events] == list(range(1, 11))
    assert {e.session_id for e in log.events} == {"x"} and len({e.run_id for e in log.events}) == 1
    assert all(e.time.ToNanoseconds() > 0 for e in log.events)
    start = log.of("run.start")[0].run_start
    assert (
        start.mode == pb.RUN_MODE_NEW
        and start.step_index == 0
        and len(start.fingerprint.hash) == 16
    )
    turn = log.of("model.turn")[0].model_turn
    assert (
        turn.step == 1
        and turn.message.role == pb.ROLE_ASSISTANT
        and turn.message.content == "adding"
    )
    assert turn.usage.model_calls == 1
    call = log.of("tool.call")[0].tool_call
    assert (call.step, call.call.id, call.call.name, json.loads(call.call.arguments_json)) == (
        1,
        "call_0_0",
        "add",
        {"a": 1},
    )
    assert call.timeout_ms == 30000  # the daemon's --tool-timeout-s (conftest: 30 s)
    result = log.of("tool.result")[0].tool_result
    assert (result.tool_call_id, result.tool_name, result.result_json, result.is_error) == (
        "call_0_0",
        "add",
        "10",
        False,
    )
    done = log.done
    assert (done.finish_reason, done.status, done.final_text) == (
        pb.FINISH_REASON_STOP,
        pb.CHECKPOINT_STATUS_FINISHED,
        "done",
    )
    assert done.step_index == 2 and done.usage.model_calls == 2 and done.message_count == 5
    cp = await h.get("x")
    assert json.loads(cp.business_state_json) == {"k": 1}
    assert (
        len((await h.stub.History(pb.HistoryRequest(session_id="x", page_size=100))).entries) == 2
    )  # of 3 saves

    # Errors before the first event: the stream ends with the status, no event.
    refused = await h.run("neg", "go", agent(ONE_TOOL), history_limit=-1)  # R35
    assert error_info(refused.error)[:2] == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_HISTORY_LIMIT",
    )
    paused = await h.run("p", "go", gated())
    approval_id = paused.done.approval_id
    refused = await h.run("p", "more", gated())  # R9
    assert error_info(refused.error) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "SESSION_AWAITING_APPROVAL",
        {"session_id": "p", "approval_id": approval_id},
    )
    assert refused.events == []
    await h.run("d", "go", agent(ONE_TOOL), stop_at=lambda e: e.type == "tool.call")
    await h.idle("d")
    strict = agent(ONE_TOOL, instructions="changed", on_agent_drift=pb.AGENT_DRIFT_POLICY_ERROR)
    refused = await h.run("d", [], strict)  # R48
    code, reason, meta = error_info(refused.error)
    assert (code, reason, meta["instructions_changed"], meta["tools_added"]) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "AGENT_DRIFT",
        "true",
        "",
    )
    refused = await h.run("d", [], agent(ONE_TOOL, ["mul"]))  # R49
    assert error_info(refused.error)[:3] == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "RESUME_TOOL_MISSING",
        {"session_id": "d", "tools": "add"},
    )
    # An error after events (R6): the events came, then the status.
    failing = await h.run(
        "f", "go", agent([calls(("add", {})), {"error": "model exploded"}]), {"add": add}
    )
    assert failing.types[-1] == "step.start"
    code, reason, meta = error_info(failing.error)
    assert (code, reason, meta["provider"]) == (
        grpc.StatusCode.UNAVAILABLE,
        "PROVIDER_ERROR",
        "scripted",
    )


async def test_execute_r53_tool_results_in_input(h: Harness) -> None:
    """R53 over the wire: a result for the pending call is recorded and not asked again;
    any other tool message is INVALID_ARGUMENT/INVALID_MESSAGE naming its index and call."""

    def tool(call_id: str, body: str) -> pb.Message:
        return pb.Message(role=pb.ROLE_TOOL, tool_call_id=call_id, tool_name="add", content=body)

    refused = await h.run(
        "in-new", [user("Read gauge G-1"), tool("call_x_9", '{"bar": 1}')], agent(ONE_TOOL)
    )
    assert error_info(refused.error) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_MESSAGE",
        {"session_id": "in-new", "index": "1", "tool_call_id": "call_x_9", "field": "input[1]"},
    )
    assert refused.events == []
    assert (await rpc_error(h.get("in-new")))[:2] == (
        grpc.StatusCode.NOT_FOUND,
        "CHECKPOINT_NOT_FOUND",
    )
    dropped = await h.run("in-u", "go", agent(ONE_TOOL), stop_at=lambda e: e.type == "tool.call")
    assert dropped.dropped
    await h.idle("in-u")
    log = await h.run("in-u", [tool("call_0_0", '{"bar": 5}')], agent(ONE_TOOL), {"add": add})
    assert log.error is None and log.of("tool.call") == []
    assert [
        (e.tool_result.tool_call_id, e.tool_result.result_json) for e in log.of("tool.result")
    ] == [("call_0_0", '{"bar": 5}')]
    cp = await h.get("in-u")
    assert [m.content for m in cp.messages if m.role == pb.ROLE_TOOL] == ['{"bar": 5}']
    again = await h.run("in-u", [tool("call_0_0", '{"bar": 9}')], agent(ONE_TOOL))  # finished now
    code, reason, meta = error_info(again.error)
    assert (code, reason, meta["index"], meta["tool_call_id"]) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_MESSAGE",
        "0",
        "call_0_0",
    )
    assert (await h.get("in-u")).version == cp.version


async def test_resume_after_a_dropped_stream_and_on_a_finished_session(h: Harness) -> None:
    # Dropping the stream is a client crash: the daemon stops the run (R6), and Resume,
    # with the saved agent, runs only what is left (R10).
    spec = agent([calls(("add", {"a": 1}), ("add", {"a": 2})), {"text": "done"}])
    dropped = await h.run(
        "r",
        "go",
        spec,
        {"add": add},
        stop_at=lambda e: e.type == "tool.call" and e.tool_call.call.id == "call_0_1",
    )
    assert dropped.dropped
    await h.idle("r")
    log = await h.run("r", resume=True, tools={"add": add})
    assert log.of("run.start")[0].run_start.mode == pb.RUN_MODE_RESUME
    assert [e.tool_call.call.id for e in log.of("tool.call")] == ["call_0_1"]
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    assert_valid_transcript(await h.get("r"))
    again = await h.run("r", resume=True)  # finished: the stream ends with no run
    assert again.error is None and again.events == []
    refused = await h.run("nobody", resume=True)
    assert error_info(refused.error)[:2] == (grpc.StatusCode.NOT_FOUND, "CHECKPOINT_NOT_FOUND")


async def test_resolve_continues_the_run_and_maps_its_errors(h: Harness) -> None:
    paused = await h.run("a", "go", gated())
    approval = paused.of("approval.requested")[0].approval_requested.approval
    assert (approval.session_id, approval.tool_call.id, approval.step) == ("a", "call_0_0", 1)
    assert approval.created_at.ToNanoseconds() > 0 and not approval.HasField("expires_at")
    strict = gated(instructions="changed", on_agent_drift=pb.AGENT_DRIFT_POLICY_ERROR)
    drifted = await resolve(h, approval.approval_id, True, agent=strict)  # R48: put back
    assert error_info(drifted.error)[:2] == (grpc.StatusCode.FAILED_PRECONDITION, "AGENT_DRIFT")
    # R33 in one daemon: of two resolutions at once, the registry lets exactly one through.
    both = await asyncio.gather(
        *(resolve(h, approval.approval_id, True, note="ok") for _ in range(2))
    )
    assert sorted(log.reason for log in both) == ["", "APPROVAL_NOT_FOUND"]
    won = next(log for log in both if not log.error)
    assert won.of("run.start")[0].run_start.mode == pb.RUN_MODE_RESUME
    assert won.types.count("tool.call") == 1 and won.done.final_text == "done"
    again = await resolve(h, approval.approval_id, False)
    code, reason, meta = error_info(again.error)
    assert (code, reason, meta["approval_id"]) == (
        grpc.StatusCode.NOT_FOUND,
        "APPROVAL_NOT_FOUND",
        approval.approval_id,
    )
    missing = await resolve(h, "", True)
    assert error_info(missing.error)[:2] == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_APPROVAL_ID",
    )


async def test_submit_tool_result_r26_outcomes_and_errors(h: Harness) -> None:
    outcomes = []

    async def answer_twice(e: pb.Event) -> None:
        if e.type == "tool.call":
            c = e.tool_call.call.id
            outcomes.append(await h.submit("r26", c, '{"bad": true}', is_error=True))
            outcomes.append(await h.submit("r26", c, "2"))

    log = await h.run(
        "r26", "go", agent([calls(("add", {})), {"text": "ok"}]), on_event=answer_twice
    )
    assert outcomes == [pb.SUBMIT_OUTCOME_ACCEPTED, pb.SUBMIT_OUTCOME_DUPLICATE]
    result = log.of("tool.result")[0].tool_result
    assert (result.result_json, result.is_error) == ('{"bad": true}', True)
    assert await h.submit("r26", "call_0_0", "3") == pb.SUBMIT_OUTCOME_DUPLICATE  # after the run
    cp = await h.get("r26")
    assert [m.content for m in cp.messages if m.role == pb.ROLE_TOOL] == ['{"bad": true}']
    for sid, call_id in (("r26", "call_9_9"), ("no-such-session", "call_0_0")):
        assert (await rpc_error(h.submit(sid, call_id, "1")))[:2] == (
            grpc.StatusCode.NOT_FOUND,
            "TOOL_CALL_NOT_FOUND",
        )
    # A call of the session that no run awaits (its client crashed): resume first.
    await h.run(
        "nw",
        "go",
        agent([calls(("add", {})), {"text": "ok"}]),
        stop_at=lambda e: e.type == "tool.call",
    )
    await h.idle("nw")
    code, reason, meta, _ = await rpc_error(h.submit("nw", "call_0_0", "1"))
    assert (code, reason, meta["tool_call_id"]) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "TOOL_CALL_NOT_PENDING",
        "call_0_0",
    )


async def test_cancel_aborts_the_running_run(h: Harness) -> None:
    answers = []

    async def cancel_at_call(e: pb.Event) -> None:
        if e.type == "tool.call":
            answers.append((await h.stub.Cancel(pb.CancelRequest(session_id="c"))).cancelled)

    spec = agent([calls(("add", {"a": 1}), ("add", {"a": 2})), {"text": "after"}])
    log = await h.run("c", "go", spec, on_event=cancel_at_call)
    assert answers == [True] and log.error is None  # R3: the stream ends with run.done
    assert (log.done.finish_reason, log.done.status) == (
        pb.FINISH_REASON_ABORTED,
        pb.CHECKPOINT_STATUS_IN_PROGRESS,
    )
    assert [e.tool_result.is_error for e in log.of("tool.result")] == [True, True]
    assert not (await h.stub.Cancel(pb.CancelRequest(session_id="c"))).cancelled  # no run now
    assert not (await h.stub.Cancel(pb.CancelRequest(session_id="never"))).cancelled


async def test_get_session_converts_the_checkpoint(h: Harness) -> None:
    spec = agent(
        ONE_TOOL, {"add": {"type": "object", "title": "adder"}}, max_steps=5, tool_timeout_ms=9000
    )
    log = await h.run("g", "go", spec, {"add": add}, business_state={"cart": [1, 2]})
    cp = await h.get("g")
    assert (cp.session_id, cp.status, cp.finish_reason) == (
        "g",
        pb.CHECKPOINT_STATUS_FINISHED,
        pb.FINISH_REASON_STOP,
    )
    assert [m.role for m in cp.messages] == [
        pb.ROLE_SYSTEM,
        pb.ROLE_USER,
        pb.ROLE_ASSISTANT,
        pb.ROLE_TOOL,
        pb.ROLE_ASSISTANT,
    ]
    assert cp.messages[2].tool_calls[0].id == "call_0_0" and cp.messages[3].tool_name == "add"
    (record,) = cp.tool_calls
    assert (record.call.id, record.step, record.HasField("result_json"), record.result_json) == (
        "call_0_0",
        1,
        True,
        "10",
    )
    assert cp.step_index == 2 and cp.usage.model_calls == cp.total_usage.model_calls == 2
    assert json.loads(cp.business_state_json) == {"cart": [1, 2]}
    assert cp.fingerprint.hash == log.of("run.start")[0].run_start.fingerprint.hash
    assert set(cp.fingerprint.tool_schema_hashes) == {"add"}
    assert (cp.agent.model, cp.agent.max_steps, cp.agent.tool_timeout_ms) == (
        "scripted:test",
        5,
        9000,
    )
    assert json.loads(cp.agent.tools[0].input_schema_json) == {"type": "object", "title": "adder"}
    assert (
        cp.version == 3 and cp.run_id == log.events[0].run_id and cp.updated_at.ToNanoseconds() > 0
    )
    code, reason, meta, _ = await rpc_error(
        h.stub.GetSession(pb.GetSessionRequest(session_id="none"))
    )
    assert (code, reason, meta) == (
        grpc.StatusCode.NOT_FOUND,
        "CHECKPOINT_NOT_FOUND",
        {"session_id": "none"},
    )


async def test_list_sessions_pages_by_status(h: Harness) -> None:
    for n in range(3):
        await h.run(f"s{n}", "hi", agent([{"text": "ok"}]))
    await h.run("s-paused", "go", gated())
    page = await h.stub.ListSessions(
        pb.ListSessionsRequest(page_size=2, status=pb.CHECKPOINT_STATUS_FINISHED)
    )
    rest = await h.stub.ListSessions(
        pb.ListSessionsRequest(
            page_size=2, page_token=page.next_page_token, status=pb.CHECKPOINT_STATUS_FINISHED
        )
    )
    assert [s.session_id for s in [*page.sessions, *rest.sessions]] == [
        "s0",
        "s1",
        "s2",
    ] and rest.next_page_token == ""
    (paused,) = (
        await h.stub.ListSessions(
            pb.ListSessionsRequest(status=pb.CHECKPOINT_STATUS_AWAITING_APPROVAL)
        )
    ).sessions
    assert (paused.session_id, paused.finish_reason, paused.step_index) == (
        "s-paused",
        pb.FINISH_REASON_AWAITING_APPROVAL,
        1,
    )
    assert (
        paused.approval_id and paused.message_count == 3 and paused.updated_at.ToNanoseconds() > 0
    )
    everything = await h.stub.ListSessions(pb.ListSessionsRequest())
    assert len(everything.sessions) == 4
    code, reason, _, _ = await rpc_error(
        h.stub.ListSessions(pb.ListSessionsRequest(page_token="%%%"))
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_PAGE_TOKEN")


async def test_delete_session_with_and_without_history(h: Harness) -> None:
    await h.run("d1", "hi", agent([{"text": "ok"}]))
    await h.run("d2", "hi", agent([{"text": "ok"}]))
    assert (await h.stub.DeleteSession(pb.DeleteSessionRequest(session_id="d1"))).deleted
    assert (
        await h.stub.DeleteSession(pb.DeleteSessionRequest(session_id="d2", keep_history=True))
    ).deleted
    assert not (await h.stub.DeleteSession(pb.DeleteSessionRequest(session_id="d1"))).deleted
    for sid, kept in (("d1", 0), ("d2", 1)):
        assert (await rpc_error(h.get(sid)))[1] == "CHECKPOINT_NOT_FOUND"
        assert len((await h.stub.History(pb.HistoryRequest(session_id=sid))).entries) == kept
    code, reason, _, _ = await rpc_error(
        h.stub.DeleteSession(pb.DeleteSessionRequest(session_id="bad id"))
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_SESSION_ID")


async def test_history_pages_entries_and_keeps_the_daemons_limit(daemon, h: Harness) -> None:
    await h.run(
        "hh",
        "go",
        agent([calls(("add", {"a": 1})), calls(("add", {"a": 2})), {"text": "done"}]),
        {"add": add},
    )
    full = (
        await h.stub.History(pb.HistoryRequest(session_id="hh", include_checkpoint=True))
    ).entries
    assert [(e.step, e.version) for e in full] == [(3, 5), (2, 4), (2, 3), (1, 2), (1, 1)]
    assert (
        full[0].status == pb.CHECKPOINT_STATUS_FINISHED
        and full[-1].status == pb.CHECKPOINT_STATUS_IN_PROGRESS
    )
    assert full[0].checkpoint == await h.get("hh")
    assert full[0].saved_at.ToNanoseconds() >= full[-1].saved_at.ToNanoseconds() > 0
    page = await h.stub.History(pb.HistoryRequest(session_id="hh", page_size=2))
    assert not page.entries[0].HasField("checkpoint") and page.entries[0].message_count == len(
        full[0].checkpoint.messages
    )
    seen = list(page.entries)
    while page.next_page_token:
        page = await h.stub.History(
            pb.HistoryRequest(session_id="hh", page_size=2, page_token=page.next_page_token)
        )
        seen += page.entries
    assert [e.version for e in seen] == [5, 4, 3, 2, 1]
    # The daemon's --history-limit (default 50) reaches the store.
    long = agent([calls(("add", {"a": k})) for k in range(30)], max_steps=40)
    await h.run("long", "go", long, {"add": add})
    entries = (await h.stub.History(pb.HistoryRequest(session_id="long", page_size=1000))).entries
    assert len(entries) == daemon.config.history_limit == 50
    code, reason, _, _ = await rpc_error(
        h.stub.History(pb.HistoryRequest(session_id="hh", page_token="%%%"))
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_PAGE_TOKEN")


async def test_fork_converts_the_patch_and_maps_its_errors(h: Harness) -> None:
    await h.run("src", "go", agent(ONE_TOOL), {"add": add}, business_state={"v": 1})
    entry = (
        await h.stub.History(pb.HistoryRequest(session_id="src", include_checkpoint=True))
    ).entries[-1]
    msgs = list(entry.checkpoint.messages)
    msgs[1] = user("rewritten")
    patch = pb.ForkPatch(
        replace_messages=True,
        messages=msgs,
        business_state_json='{"v": 2}',
        tool_result=pb.ToolResultPatch(
            tool_call_id="call_0_0", result_json='"patched"', is_error=True
        ),
        append_input="then go on",
    )
    forked = await h.stub.Fork(pb.ForkRequest(session_id="src", from_step=1, patch=patch))
    assert (forked.session_id, forked.step) == ("src.fork-1", 1)
    cp = forked.checkpoint
    assert cp == await h.get("src.fork-1") and cp.status == pb.CHECKPOINT_STATUS_IN_PROGRESS
    assert cp.messages[1].content == "rewritten" and json.loads(cp.business_state_json) == {"v": 2}
    assert (cp.messages[3].tool_call_id, cp.messages[3].content, cp.messages[3].is_error) == (
        "call_0_0",
        '"patched"',
        True,
    )
    assert cp.messages[-1] == user("then go on")
    code, reason, meta, details = await rpc_error(
        h.stub.Fork(pb.ForkRequest(session_id="src", from_step=9))
    )
    assert (code, reason, meta["kept_steps"]) == (
        grpc.StatusCode.NOT_FOUND,
        "CHECKPOINT_NOT_FOUND",
        "1,2",
    )
    assert "kept steps: [1, 2]" in details  # R41
    chosen = pb.ForkRequest(session_id="src", from_step=1, new_session_id="src.fork-1")
    assert (await rpc_error(h.stub.Fork(chosen)))[:2] == (
        grpc.StatusCode.ALREADY_EXISTS,
        "SESSION_EXISTS",
    )
    unknown = pb.ForkPatch(tool_result=pb.ToolResultPatch(tool_call_id="nope", result_json="1"))
    code, reason, meta, _ = await rpc_error(
        h.stub.Fork(pb.ForkRequest(session_id="src", from_step=1, patch=unknown))
    )
    assert (code, reason, meta["tool_call_id"]) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "UNKNOWN_TOOL_CALL",
        "nope",
    )


async def test_compare_converts_both_trajectories(h: Harness) -> None:
    await h.run("ca", "go", agent(ONE_TOOL), {"add": add})
    await h.run(
        "cb", "go", agent([calls(("add", {"a": 5}), text="adding"), {"text": "done"}]), {"add": add}
    )
    same = await h.stub.Compare(pb.CompareRequest(session_id_a="ca", session_id_b="ca"))
    assert not same.HasField("diverged_at") and not same.drift.tool_order_changed
    diff = await h.stub.Compare(pb.CompareRequest(session_id_a="ca", session_id_b="cb"))
    assert diff.diverged_at == 1  # steps count from 1, as fork and the console
    step = diff.a[0]
    assert (step.index, step.text) == (1, "adding")
    (c,) = step.calls
    assert (c.tool_call_id, c.name, c.HasField("result_json"), c.result_json, c.is_error) == (
        "call_0_0",
        "add",
        True,
        "10",
        False,
    )
    assert [s.text for s in diff.b] == ["adding", "done"]
    d = diff.drift
    assert (list(d.tool_order_a), list(d.tool_order_b), d.tool_order_changed) == (
        ["add"],
        ["add"],
        False,
    )
    (arg,) = d.arguments
    assert (
        arg.step,
        arg.tool,
        json.loads(arg.arguments_json_a),
        json.loads(arg.arguments_json_b),
    ) == (1, "add", {"a": 1}, {"a": 5})
    assert (d.steps_a, d.steps_b, d.finish_reason_a, d.finish_reason_b) == (
        2,
        2,
        pb.FINISH_REASON_STOP,
        pb.FINISH_REASON_STOP,
    )
    code, reason, meta, _ = await rpc_error(
        h.stub.Compare(pb.CompareRequest(session_id_a="ca", session_id_b="ghost"))
    )
    assert (code, reason, meta) == (
        grpc.StatusCode.NOT_FOUND,
        "CHECKPOINT_NOT_FOUND",
        {"session_id": "ghost"},
    )


async def test_list_approvals_by_session_and_page(h: Harness) -> None:
    ids = {}
    for sid in ("p1", "p2", "p3"):
        ids[sid] = (await h.run(sid, "go", gated())).done.approval_id
    listed = await h.stub.ListApprovals(pb.ListApprovalsRequest(session_id="p2"))
    (only,) = listed.approvals
    assert (only.approval_id, only.session_id, only.tool_call.name) == (ids["p2"], "p2", "add")
    assert json.loads(only.tool_call.arguments_json) == {"a": 1} and list(only.remaining) == []
    assert only.fingerprint.hash == (await h.get("p2")).fingerprint.hash
    page = await h.stub.ListApprovals(pb.ListApprovalsRequest(page_size=2))
    rest = await h.stub.ListApprovals(
        pb.ListApprovalsRequest(page_size=2, page_token=page.next_page_token)
    )
    assert sorted(a.approval_id for a in [*page.approvals, *rest.approvals]) == sorted(ids.values())
    assert rest.next_page_token == ""
    code, reason, _, _ = await rpc_error(
        h.stub.ListApprovals(pb.ListApprovalsRequest(page_token="%%%"))
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_PAGE_TOKEN")
