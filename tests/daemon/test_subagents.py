"""Sub-agents through the gRPC API (docs/reference/rules.md R55–R59), on every store of ``h``
(memory, an SQLite file, LMDB). The lead and its sub-agents are driven by the scripted
provider, each by its own script; the sub-agents' tools are answered by the test as a
client would, by the qualified call id of the ``tool.call`` event."""

from __future__ import annotations

import json

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.domain import AgentSpec, Message, Role, SubAgent, ToolSpec
from luoshod.engine.subagents import model_view
from tests.support.harness import Harness, agent, assert_valid_transcript, calls, error_info, user
from tests.support.subagents import (
    RESEARCHER_INSTRUCTIONS,
    helper,
    lead,
    lookup,
    researcher,
    result_of,
    task,
)

# -- R55: the task tool and the system-prompt block ----------------------------------------


def test_r55_the_lead_model_sees_the_task_tool_and_one_line_per_subagent() -> None:
    sub = SubAgent("researcher", "finds facts", AgentSpec("scripted:r"))
    spec = AgentSpec("scripted:l", "You lead.", (ToolSpec("add"),), subagents=(sub,))
    shown, messages = model_view(
        spec, [Message(Role.SYSTEM, "You lead."), Message(Role.USER, "hi")]
    )
    assert [t.name for t in shown.tools] == ["add", "task"]
    assert json.loads(shown.tool("task").input_schema_json)["required"] == ["agent", "prompt"]
    assert messages[0].content.startswith("You lead.\n\n")
    assert "- researcher: finds facts" in messages[0].content
    assert "sees only the prompt" in messages[0].content
    assert messages[1:] == [Message(Role.USER, "hi")]
    # Without sub-agents nothing changes, and the spec saved (the fingerprint) never has it.
    plain = AgentSpec("scripted:l", "You lead.", (ToolSpec("add"),))
    assert model_view(plain, messages) == (plain, messages)
    assert spec.tools == (ToolSpec("add"),)


# -- R56: a clean context, the result and its footer, usage --------------------------------


async def test_r56_a_task_runs_the_subagent_on_its_prompt_alone(h: Harness) -> None:
    long_history = "x" * 4000  # in the lead's context, never in the sub-agent's
    sub = researcher([calls(("lookup", {"q": "tides"})), {"text": "tides follow the moon"}])
    spec = lead([calls(task("researcher", "why tides?")), {"text": "all done"}], [sub])
    log = await h.run("r56", long_history, spec, {"lookup": lookup})
    assert log.error is None, log.error
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    cp = await h.get("r56")
    assert_valid_transcript(cp)
    result = result_of(cp, "call_0_0")
    assert not result.is_error
    text = json.loads(result.content)
    assert text == (
        "tides follow the moon\n\n"
        "[sub-agent 'researcher': 2 step(s), finish reason 'stop', task_id 'task_1']"
    )
    # The sub-agent's first model call saw its instructions and prompt alone (the scripted
    # provider's prompt estimate is a quarter of the characters it was given).
    sub_turns = [e for e in log.of("model.turn") if e.HasField("subagent")]
    first = sub_turns[0].model_turn.usage.prompt_tokens
    assert first == (len(RESEARCHER_INSTRUCTIONS) + len("why tides?")) // 4 + 1
    # Its usage is the lead's too, and reported apart as delegated usage.
    sub_usage = sum(e.model_turn.usage.total_tokens for e in sub_turns)
    assert cp.delegated_usage.model_calls == 2
    assert cp.delegated_usage.total_tokens == sub_usage
    assert cp.usage.model_calls == 4  # 2 of the lead, 2 of the sub-agent
    assert log.done.usage.model_calls == 4
    assert (
        len(cp.messages) == 5
    )  # system, user, the task call, its result, the answer: the lead's only
    assert not any(
        m.content == "tides follow the moon" for m in cp.messages if m.role == pb.ROLE_ASSISTANT
    )


async def test_r56_an_unknown_name_and_an_unfinished_subagent_give_error_results(
    h: Harness,
) -> None:
    sub = researcher([calls(("lookup", {})), calls(("lookup", {})), {"text": "never"}], max_steps=1)
    spec = lead([calls(task("nobody", "p"), task("researcher", "p")), {"text": "ok"}], [sub])
    log = await h.run("r56e", "go", spec, {"lookup": lookup})
    assert log.error is None, log.error
    cp = await h.get("r56e")
    unknown = json.loads(result_of(cp, "call_0_0").content)
    assert result_of(cp, "call_0_0").is_error
    assert unknown["error"] == "unknown sub-agent 'nobody' (valid sub-agents: researcher)"
    spent = result_of(cp, "call_0_1")
    assert spent.is_error
    body = json.loads(spent.content)
    assert "max_steps (1) ran out" in body["error"]
    assert body["finish_reason"] == "max_steps" and body["task_id"] == "task_1"
    assert_valid_transcript(cp)


async def test_r56_a_subagent_provider_error_is_its_error_result(h: Harness) -> None:
    sub = researcher([{"error": "boom"}])
    spec = lead([calls(task("researcher", "p")), {"text": "ok"}], [sub])
    log = await h.run("r56p", "go", spec)
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    body = json.loads(result_of(await h.get("r56p"), "call_0_0").content)
    assert "its model call failed" in body["error"] and "boom" in body["error"]


# -- R57: depth ---------------------------------------------------------------------------


async def test_r57_a_task_deeper_than_max_subagent_depth_runs_nothing(h: Harness) -> None:
    deep = helper([{"text": "helped"}])
    sub = researcher([calls(task("helper", "p")), {"text": "r done"}], subagents=[deep])
    spec = lead([calls(task("researcher", "p")), {"text": "ok"}], [sub])  # depth 1: default
    log = await h.run("r57", "go", spec)
    assert log.error is None, log.error
    depths = {e.subagent.depth for e in log.events if e.HasField("subagent")}
    assert depths == {1}  # the helper never ran
    inner = [e for e in log.of("tool.result") if e.tool_result.tool_call_id == "call_0_0/call_0_0"]
    assert len(inner) == 1 and inner[0].tool_result.is_error
    assert "over this run's max_subagent_depth of 1" in inner[0].tool_result.result_json

    spec2 = lead([calls(task("researcher", "p")), {"text": "ok"}], [sub], max_subagent_depth=2)
    log2 = await h.run("r57b", "go", spec2)
    helper_events = [e for e in log2.events if e.HasField("subagent") and e.subagent.depth == 2]
    assert helper_events and all(
        list(e.subagent.path) == ["researcher", "helper"] for e in helper_events
    )
    body = json.loads(result_of(await h.get("r57b"), "call_0_0").content)
    assert body.startswith("r done") and "task_id 'task_1'" in body
    assert h.model_calls("r57b") == 2 + 2 + 1


# -- R58: qualified call ids, tagged events -----------------------------------------------


async def test_r58_subagent_calls_reach_the_client_by_qualified_id_and_events_are_tagged(
    h: Harness,
) -> None:
    deep = helper([calls(("lookup", {"q": "deep"})), {"text": "helped"}])
    sub = researcher(
        [calls(("lookup", {"q": "a"}), task("helper", "p")), {"text": "r done"}], subagents=[deep]
    )
    spec = lead([calls(task("researcher", "p")), {"text": "ok"}], [sub], max_subagent_depth=2)
    seen: list[str] = []

    def answer(args):
        seen.append(args["q"])
        return lookup(args)

    log = await h.run("r58", "go", spec, {"lookup": answer})
    assert log.error is None, log.error
    ids = [e.tool_call.call.id for e in log.of("tool.call")]
    assert ids == ["call_0_0/call_0_0", "call_0_0/call_0_1/call_0_0"]
    assert seen == ["a", "deep"]
    for e in log.of("run.start") + log.of("run.done"):
        assert not e.HasField("subagent")
    tagged = [e for e in log.events if e.HasField("subagent")]
    assert {e.type for e in tagged} >= {
        "step.start",
        "model.turn",
        "tool.call",
        "tool.result",
        "step.done",
    }
    first = log.of("tool.call")[0].subagent
    assert (first.name, first.depth, list(first.path), first.task_id) == (
        "researcher",
        1,
        ["researcher"],
        "task_1",
    )
    second = log.of("tool.call")[1].subagent
    assert (second.name, second.depth, list(second.path), second.task_id) == (
        "helper",
        2,
        ["researcher", "helper"],
        "task_2",
    )
    # The lead's own events are not tagged.
    lead_turns = [e for e in log.of("model.turn") if not e.HasField("subagent")]
    assert len(lead_turns) == 2
    cp = await h.get("r58")
    assert_valid_transcript(cp)
    assert not any(
        "/" in c.call.id for c in cp.tool_calls
    )  # the lead's transcript keeps its own ids


async def test_r58_tasks_of_one_turn_run_concurrently_and_results_keep_call_order(
    h: Harness,
) -> None:
    a = researcher([calls(("lookup", {"q": "a"})), {"text": "A"}])
    b = pb.SubAgent(
        name="writer",
        description="writes",
        agent=agent([calls(("lookup", {"q": "b"})), {"text": "B"}], ("lookup",)),
    )
    spec = lead(
        [calls(task("researcher", "p"), task("writer", "p")), {"text": "ok"}],
        [a, b],
        tool_concurrency=2,
    )
    outstanding: dict[str, pb.ToolCall] = {}

    async def on_event(e: pb.Event) -> None:
        if e.type == "tool.call":
            outstanding[e.tool_call.call.id] = e.tool_call.call
            if len(outstanding) == 2:  # both sub-agents are waiting at once: answer in reverse
                for cid in reversed(list(outstanding)):
                    await h.submit("r58c", cid, json.dumps({"fact": cid}))

    log = await h.run("r58c", "go", spec, on_event=on_event)
    assert log.error is None, log.error
    assert sorted(outstanding) == ["call_0_0/call_0_0", "call_0_1/call_0_0"]
    cp = await h.get("r58c")
    results = [m.tool_call_id for m in cp.messages if m.role == pb.ROLE_TOOL]
    assert results == ["call_0_0", "call_0_1"]
    assert json.loads(result_of(cp, "call_0_0").content).startswith("A")
    assert json.loads(result_of(cp, "call_0_1").content).startswith("B")


# -- R59: a sub-agent resumes exactly where it was ----------------------------------------


async def test_r59_a_subagent_resumes_where_it_was_after_the_client_went_away(h: Harness) -> None:
    sub = researcher([calls(("lookup", {"q": "a"}), ("lookup", {"q": "b"})), {"text": "r done"}])
    spec = lead([calls(task("researcher", "p")), {"text": "ok"}], [sub])
    ran: list[str] = []

    def answer(args):
        ran.append(args["q"])
        return lookup(args)

    # The client goes away at the sub-agent's second call: its turn and first result are saved.
    dropped = await h.run(
        "r59",
        "go",
        spec,
        {"lookup": answer},
        stop_at=lambda e: e.type == "tool.call" and e.tool_call.call.id == "call_0_0/call_0_1",
    )
    assert dropped.dropped
    await h.idle("r59")
    cp = await h.get("r59")
    assert cp.status == pb.CHECKPOINT_STATUS_IN_PROGRESS
    calls_before = h.model_calls("r59")
    assert calls_before == 2  # the lead's turn and the sub-agent's first turn
    log = await h.run("r59", agent=spec, tools={"lookup": answer}, resume=True)
    assert log.error is None, log.error
    assert ran == ["a", "b"]  # the recorded result was not run again
    assert [e.tool_call.call.id for e in log.of("tool.call")] == ["call_0_0/call_0_1"]
    # No model turn generated twice: the sub-agent's last turn and the lead's last turn only.
    assert h.model_calls("r59") == calls_before + 2
    resumed = [e for e in log.of("model.turn") if e.HasField("subagent")]
    assert len(resumed) == 1 and resumed[0].model_turn.step == 2
    done = await h.get("r59")
    assert_valid_transcript(done)
    assert done.status == pb.CHECKPOINT_STATUS_FINISHED
    body = json.loads(result_of(done, "call_0_0").content)
    assert (
        body
        == "r done\n\n[sub-agent 'researcher': 2 step(s), finish reason 'stop', task_id 'task_1']"
    )


# -- bad input: INVALID_ARGUMENT with ErrorInfo, nothing stored ----------------------------


def _bad_specs() -> dict[str, pb.AgentSpec]:
    ok = researcher([{"text": "x"}])
    no_desc = pb.SubAgent(name="researcher", description="  ", agent=ok.agent)
    clash = lead([{"text": "x"}], [ok], tools=("add", "task"))
    bad_name = pb.SubAgent(name="re searcher", description="d", agent=ok.agent)
    huge = pb.SubAgent(
        name="big", description="d", agent=agent([{"text": "x"}], instructions="y" * 70_000)
    )
    deep = lead([{"text": "x"}], [ok], max_subagent_depth=5)
    # Declared five levels deep: over the daemon's limit of 4 whatever the depth asked.
    nested = pb.SubAgent(name="l5", description="d", agent=agent([{"text": "x"}]))
    for n in range(4, 0, -1):
        spec = agent([{"text": "x"}])
        spec.subagents.append(nested)
        nested = pb.SubAgent(name=f"l{n}", description="d", agent=spec)
    return {
        "SUBAGENT_DESCRIPTION_REQUIRED": lead([{"text": "x"}], [no_desc]),
        "TASK_TOOL_CLASH": clash,
        "INVALID_SUBAGENT_NAME": lead([{"text": "x"}], [bad_name]),
        "SUBAGENT_SPEC_TOO_LARGE": lead([{"text": "x"}], [huge]),
        "SUBAGENT_DEPTH_OVER_LIMIT": deep,
        "SUBAGENT_DEPTH_OVER_LIMIT:declared": lead([{"text": "x"}], [nested]),
        "DUPLICATE_SUBAGENT_NAME": lead([{"text": "x"}], [ok, ok]),
    }


@pytest.mark.parametrize("case", sorted(_bad_specs()))
async def test_bad_subagent_declarations_are_invalid_argument_and_store_nothing(
    h: Harness, case: str
) -> None:
    spec = _bad_specs()[case]
    with pytest.raises(grpc.aio.AioRpcError) as err:
        async for _ in h.stub.Execute(
            pb.ExecuteRequest(session_id="bad", input=[user("go")], agent=spec)
        ):
            pass
    code, reason, meta = error_info(err.value)
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert reason == case.split(":")[0]
    assert "Traceback" not in err.value.details()
    assert meta  # the variables of the message, e.g. the field
    with pytest.raises(grpc.aio.AioRpcError) as missing:
        await h.get("bad")
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND


async def test_an_unknown_subagent_model_is_refused_before_anything_is_stored(h: Harness) -> None:
    sub = pb.SubAgent(name="researcher", description="d", agent=pb.AgentSpec(model="nope:model"))
    with pytest.raises(grpc.aio.AioRpcError) as err:
        async for _ in h.stub.Execute(
            pb.ExecuteRequest(session_id="bad-m", input=[user("go")], agent=lead([], [sub]))
        ):
            pass
    assert error_info(err.value)[:2] == (grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_PROVIDER")
    with pytest.raises(grpc.aio.AioRpcError):
        await h.get("bad-m")


async def test_the_spec_round_trips_with_its_subagents(h: Harness) -> None:
    sub = researcher([{"text": "x"}])
    spec = lead([{"text": "done"}], [sub], max_subagent_depth=2)
    await h.run("rt", "go", spec)
    saved = (await h.get("rt")).agent
    assert [s.name for s in saved.subagents] == ["researcher"]
    assert saved.subagents[0].description == "finds facts"
    assert saved.subagents[0].agent.instructions == RESEARCHER_INSTRUCTIONS
    assert saved.max_subagent_depth == 2


# -- R60–R63: approvals inside sub-agents --------------------------------------------------


def gated_researcher(script: list[dict], **kw) -> pb.SubAgent:
    spec = agent(script, ("lookup",), instructions=RESEARCHER_INSTRUCTIONS, **kw)
    spec.tools.append(pb.ToolSpec(name="delete", input_schema_json="{}", needs_approval=True))
    return pb.SubAgent(name="researcher", description="finds facts", agent=spec)


async def resolve(h: Harness, approval_id: str, approved: bool, tools, note: str = "", agent=None):
    from tests.support.harness import RunLog

    log = RunLog()
    request = pb.ResolveRequest(approval_id=approval_id, approved=approved, note=note, agent=agent)
    try:
        async for resp in h.stub.Resolve(request):
            log.events.append(resp.event)
            if resp.event.type == "tool.call":
                c = resp.event.tool_call.call
                await h.submit(
                    resp.event.session_id,
                    c.id,
                    json.dumps(tools[c.name](json.loads(c.arguments_json))),
                )
    except grpc.aio.AioRpcError as err:
        log.error = err
    return log


async def test_r60_r61_a_gated_call_in_a_subagent_pauses_the_whole_run_and_resumes_there(
    h: Harness,
) -> None:
    deleted: list[dict] = []
    tools = {"lookup": lookup, "delete": lambda a: deleted.append(a) or {"ok": True}}
    sub = gated_researcher(
        [
            calls(("lookup", {"q": "a"}), ("delete", {"id": 7}), ("lookup", {"q": "c"})),
            {"text": "cleaned"},
        ]
    )
    spec = lead([calls(task("researcher", "clean up")), {"text": "lead done"}], [sub])
    log = await h.run("r60", "go", spec, tools)
    assert log.error is None, log.error
    assert log.done.finish_reason == pb.FINISH_REASON_AWAITING_APPROVAL
    (req,) = log.of("approval.requested")
    assert not req.HasField("subagent")  # one top-level approval.requested
    ap = req.approval_requested.approval
    assert list(ap.subagent_path) == ["researcher"]
    assert (ap.tool_call.id, ap.tool_call.name) == ("call_0_0/call_0_1", "delete")
    assert json.loads(ap.tool_call.arguments_json) == {"id": 7}
    assert [c.id for c in ap.remaining] == ["call_0_0/call_0_2"]
    cp = await h.get("r60")
    assert cp.status == pb.CHECKPOINT_STATUS_AWAITING_APPROVAL and cp.approval_id == ap.approval_id
    stored = (await h.stub.ListApprovals(pb.ListApprovalsRequest(session_id="r60"))).approvals
    assert [list(a.subagent_path) for a in stored] == [["researcher"]]
    # R9 while paused.
    again = await h.run("r60", "more", spec, tools)
    assert again.reason == "SESSION_AWAITING_APPROVAL"
    calls_before = h.model_calls("r60")

    done = await resolve(h, ap.approval_id, True, tools)
    assert done.error is None, done.error
    assert deleted == [{"id": 7}]  # exactly once
    assert [e.tool_call.call.id for e in done.of("tool.call")] == [
        "call_0_0/call_0_1",
        "call_0_0/call_0_2",
    ]
    assert h.model_calls("r60") == calls_before + 2  # the sub-agent's last turn, the lead's
    finished = await h.get("r60")
    assert finished.status == pb.CHECKPOINT_STATUS_FINISHED
    assert_valid_transcript(finished)
    body = json.loads(result_of(finished, "call_0_0").content)
    assert body.startswith("cleaned\n\n[sub-agent 'researcher': 2 step(s)")
    # No placeholder in the lead's transcript: one result for the task call.
    assert [m.tool_call_id for m in finished.messages if m.role == pb.ROLE_TOOL] == ["call_0_0"]


async def test_r61_rejected_the_subagent_gets_the_rejection_and_carries_on(h: Harness) -> None:
    tools = {"lookup": lookup, "delete": lambda a: pytest.fail("a rejected call ran")}
    sub = gated_researcher([calls(("delete", {"id": 1})), {"text": "gave up"}])
    spec = lead([calls(task("researcher", "p")), {"text": "lead done"}], [sub])
    log = await h.run("r61", "go", spec, tools)
    ap = log.of("approval.requested")[0].approval_requested.approval
    done = await resolve(h, ap.approval_id, False, tools, note="no deleting")
    assert done.error is None, done.error
    rejected = [
        e.tool_result
        for e in done.of("tool.result")
        if e.tool_result.tool_call_id == "call_0_0/call_0_0"
    ]
    assert len(rejected) == 1 and rejected[0].is_error
    body = json.loads(rejected[0].result_json)
    assert body["rejected"] is True and body["note"] == "no deleting"
    assert done.done.finish_reason == pb.FINISH_REASON_STOP
    assert json.loads(result_of(await h.get("r61"), "call_0_0").content).startswith("gave up")


async def test_r62_a_resumed_subagent_that_pauses_again_gets_a_new_approval(h: Harness) -> None:
    count = {"n": 0}

    def delete(args):
        count["n"] += 1
        return {"ok": True}

    tools = {"lookup": lookup, "delete": delete}
    sub = gated_researcher(
        [calls(("delete", {"id": 1})), calls(("delete", {"id": 2})), {"text": "both"}]
    )
    spec = lead([calls(task("researcher", "p")), {"text": "lead done"}], [sub])
    log = await h.run("r62", "go", spec, tools)
    first = log.of("approval.requested")[0].approval_requested.approval
    again = await resolve(h, first.approval_id, True, tools)
    assert again.done.finish_reason == pb.FINISH_REASON_AWAITING_APPROVAL
    second = again.of("approval.requested")[0].approval_requested.approval
    assert second.approval_id != first.approval_id
    assert second.tool_call.id == "call_0_0/call_1_0" and list(second.subagent_path) == [
        "researcher"
    ]
    cp = await h.get("r62")
    assert (
        cp.status == pb.CHECKPOINT_STATUS_AWAITING_APPROVAL and cp.approval_id == second.approval_id
    )
    stale = await resolve(h, first.approval_id, True, tools)
    assert stale.reason == "APPROVAL_NOT_FOUND"
    done = await resolve(h, second.approval_id, True, tools)
    assert done.done.finish_reason == pb.FINISH_REASON_STOP
    assert count["n"] == 2
    assert_valid_transcript(await h.get("r62"))


async def test_r60_at_depth_2_the_path_is_outermost_first(h: Harness) -> None:
    deleted: list[dict] = []
    tools = {"lookup": lookup, "delete": lambda a: deleted.append(a) or {"ok": True}}
    inner = gated_researcher([calls(("delete", {"id": 9})), {"text": "inner done"}])
    inner.name = "helper"
    sub = researcher([calls(task("helper", "p")), {"text": "outer done"}], subagents=[inner])
    spec = lead(
        [calls(task("researcher", "p")), {"text": "lead done"}], [sub], max_subagent_depth=2
    )
    log = await h.run("r60d", "go", spec, tools)
    ap = log.of("approval.requested")[0].approval_requested.approval
    assert list(ap.subagent_path) == ["researcher", "helper"]
    assert ap.tool_call.id == "call_0_0/call_0_0/call_0_0"
    calls_before = h.model_calls("r60d")
    done = await resolve(h, ap.approval_id, True, tools)
    assert done.done.finish_reason == pb.FINISH_REASON_STOP
    assert deleted == [{"id": 9}]
    assert h.model_calls("r60d") == calls_before + 3  # helper, researcher, lead: once each
    cp = await h.get("r60d")
    assert json.loads(result_of(cp, "call_0_0").content).startswith("outer done")


async def test_r63_two_tasks_needing_approval_pause_one_after_the_other(h: Harness) -> None:
    deleted: list[int] = []
    tools = {"lookup": lookup, "delete": lambda a: deleted.append(a["id"]) or {"ok": True}}
    a = gated_researcher([calls(("delete", {"id": 1})), {"text": "A"}])
    b = gated_researcher([calls(("delete", {"id": 2})), {"text": "B"}])
    b.name = "writer"
    spec = lead(
        [calls(task("researcher", "p"), task("writer", "p")), {"text": "lead done"}],
        [a, b],
        tool_concurrency=2,
    )
    log = await h.run("r63", "go", spec, tools)
    first = log.of("approval.requested")[0].approval_requested.approval
    assert list(first.subagent_path) == ["researcher"]
    again = await resolve(h, first.approval_id, True, tools)
    second = again.of("approval.requested")[0].approval_requested.approval
    assert list(second.subagent_path) == ["writer"]
    done = await resolve(h, second.approval_id, True, tools)
    assert done.done.finish_reason == pb.FINISH_REASON_STOP
    assert deleted == [1, 2]
    cp = await h.get("r63")
    assert_valid_transcript(cp)
    assert json.loads(result_of(cp, "call_0_0").content).startswith("A")
    assert json.loads(result_of(cp, "call_0_1").content).startswith("B")


# -- R64: drift per level ------------------------------------------------------------------


def _paused_spec(
    instructions: str = RESEARCHER_INSTRUCTIONS,
    policy=pb.AGENT_DRIFT_POLICY_WARN,
    tools=("lookup",),
) -> pb.AgentSpec:
    sub = gated_researcher([calls(("delete", {"id": 1})), {"text": "r done"}])
    sub.agent.instructions = instructions
    del sub.agent.tools[:]
    sub.agent.tools.extend(pb.ToolSpec(name=n, input_schema_json="{}") for n in tools)
    sub.agent.tools.append(pb.ToolSpec(name="delete", input_schema_json="{}", needs_approval=True))
    return lead(
        [calls(task("researcher", "p")), {"text": "lead done"}], [sub], on_agent_drift=policy
    )


DELETE_TOOLS = {"lookup": lookup, "delete": lambda a: {"ok": True}}


async def _pause(h: Harness, sid: str) -> pb.Approval:
    log = await h.run(sid, "go", _paused_spec(), {"lookup": lookup})
    return log.of("approval.requested")[0].approval_requested.approval


async def test_r64_warn_gives_one_drift_event_per_drifted_level_carrying_subagent(
    h: Harness,
) -> None:
    ap = await _pause(h, "r64w")
    changed = _paused_spec("You research, differently.")
    events = (await resolve(h, ap.approval_id, True, DELETE_TOOLS, agent=changed)).events
    drifts = [e for e in events if e.type == "agent.drift"]
    assert (
        len(drifts) == 1
    )  # the lead's own fingerprint is unchanged: task and sub-agents do not count
    assert drifts[0].subagent.name == "researcher" and list(drifts[0].subagent.path) == [
        "researcher"
    ]
    assert drifts[0].agent_drift.instructions_changed
    assert events[-1].run_done.finish_reason == pb.FINISH_REASON_STOP


async def test_r64_error_fails_with_agent_drift_and_keeps_the_approval(h: Harness) -> None:
    ap = await _pause(h, "r64e")
    changed = _paused_spec("You research, differently.", pb.AGENT_DRIFT_POLICY_ERROR)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        async for _ in h.stub.Resolve(
            pb.ResolveRequest(approval_id=ap.approval_id, approved=True, agent=changed)
        ):
            pass
    code, reason, meta = error_info(err.value)
    assert (code, reason, meta["subagent_path"]) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "AGENT_DRIFT",
        "researcher",
    )
    cp = await h.get("r64e")
    assert cp.status == pb.CHECKPOINT_STATUS_AWAITING_APPROVAL and cp.approval_id == ap.approval_id
    same = _paused_spec(policy=pb.AGENT_DRIFT_POLICY_ERROR)
    events = (await resolve(h, ap.approval_id, True, DELETE_TOOLS, agent=same)).events
    assert events[-1].run_done.finish_reason == pb.FINISH_REASON_STOP
    assert not [e for e in events if e.type == "agent.drift"]


async def test_r64_a_paused_subagent_no_longer_declared_or_its_tool_gone_is_resume_tool_missing(
    h: Harness,
) -> None:
    ap = await _pause(h, "r64m")
    gone = lead(
        [calls(task("researcher", "p")), {"text": "lead done"}], [researcher([{"text": "x"}])]
    )
    gone.subagents[0].name = "writer"
    no_tool = _paused_spec()
    del no_tool.subagents[0].agent.tools[-1]  # "delete", the pending call's tool
    for spec, what in ((gone, "no longer declared"), (no_tool, "no longer declares: delete")):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            async for _ in h.stub.Resolve(
                pb.ResolveRequest(approval_id=ap.approval_id, approved=True, agent=spec)
            ):
                pass
        code, reason, meta = error_info(err.value)
        assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "RESUME_TOOL_MISSING")
        assert what in err.value.details() and meta["subagent_path"] == "researcher"
        assert (await h.get("r64m")).approval_id == ap.approval_id


# -- R66: Cancel aborts the sub-agents too -------------------------------------------------


async def test_r66_cancel_gives_every_call_at_every_level_its_cancelled_result(h: Harness) -> None:
    deep = helper([calls(("lookup", {"q": "x"}), ("lookup", {"q": "y"})), {"text": "helped"}])
    sub = researcher(
        [calls(task("helper", "p"), ("lookup", {"q": "z"})), {"text": "r"}], subagents=[deep]
    )
    spec = lead(
        [calls(task("researcher", "p"), ("add", {"a": 1})), {"text": "after"}],
        [sub],
        max_subagent_depth=2,
    )

    async def cancel_at_call(e: pb.Event) -> None:
        if e.type == "tool.call":
            assert (await h.stub.Cancel(pb.CancelRequest(session_id="r66"))).cancelled

    log = await h.run("r66", "go", spec, on_event=cancel_at_call)
    assert log.error is None, log.error
    assert (log.done.finish_reason, log.done.status) == (
        pb.FINISH_REASON_ABORTED,
        pb.CHECKPOINT_STATUS_IN_PROGRESS,
    )
    results = {e.tool_result.tool_call_id: e.tool_result for e in log.of("tool.result")}
    assert sorted(results) == sorted(
        [
            "call_0_0/call_0_0/call_0_0",
            "call_0_0/call_0_0/call_0_1",  # the helper's calls
            "call_0_0/call_0_0",
            "call_0_0/call_0_1",  # the researcher's: its task call, its lookup
            "call_0_0",
            "call_0_1",  # the lead's
        ]
    )
    for r in results.values():
        assert r.is_error and json.loads(r.result_json)["cancelled"] is True
    assert len(log.of("tool.result")) == 6  # one each
    cp = await h.get("r66")
    assert_valid_transcript(cp)
    again = await h.run("r66", agent=spec, resume=True, tools={"add": lambda a: 1})
    assert again.done.finish_reason == pb.FINISH_REASON_STOP  # no call left: the model goes on
    assert not again.of("tool.call")


# -- R67 (the part built): a fork taken inside a sub-agent resumes that sub-agent -----------


async def test_r67_a_fork_of_an_entry_taken_inside_a_subagent_resumes_that_subagent(
    h: Harness,
) -> None:
    deleted: list[dict] = []
    tools = {"lookup": lookup, "delete": lambda a: deleted.append(a) or {"ok": True}}
    sub = gated_researcher(
        [calls(("lookup", {"q": "a"}), ("delete", {"id": 5})), {"text": "r done"}]
    )
    spec = lead([calls(task("researcher", "p")), {"text": "lead done"}], [sub])
    log = await h.run("r67", "go", spec, tools)
    source_ap = log.of("approval.requested")[0].approval_requested.approval
    entries = (await h.stub.History(pb.HistoryRequest(session_id="r67"))).entries
    assert entries[0].status == pb.CHECKPOINT_STATUS_AWAITING_APPROVAL
    forked = await h.stub.Fork(pb.ForkRequest(session_id="r67", from_step=entries[0].step))
    assert forked.checkpoint.status == pb.CHECKPOINT_STATUS_IN_PROGRESS
    calls_before = h.model_calls(forked.session_id)
    # R44: the fork goes through approval gating again, inside the same sub-agent.
    again = await h.run(forked.session_id, agent=spec, tools=tools, resume=True)
    ap = again.of("approval.requested")[0].approval_requested.approval
    assert ap.approval_id != source_ap.approval_id
    assert list(ap.subagent_path) == ["researcher"] and ap.tool_call.id == "call_0_0/call_0_1"
    assert not again.of("tool.call")  # the recorded lookup result is not run again
    done = await resolve(h, ap.approval_id, True, tools)
    assert done.done.finish_reason == pb.FINISH_REASON_STOP
    assert deleted == [{"id": 5}]
    assert (
        h.model_calls(forked.session_id) == calls_before + 2
    )  # the sub-agent's last turn, the lead's
    # The source is unchanged: still paused on its own approval.
    assert (await h.get("r67")).approval_id == source_ap.approval_id


async def test_r53_a_task_call_is_never_answered_by_the_input(h: Harness) -> None:
    sub = researcher([calls(("lookup", {"q": "a"})), {"text": "r done"}])
    spec = lead([calls(task("researcher", "p")), {"text": "ok"}], [sub])
    await h.run("r53t", "go", spec, stop_at=lambda e: e.type == "tool.call")
    await h.idle("r53t")
    answer = pb.Message(
        role=pb.ROLE_TOOL, tool_call_id="call_0_0", tool_name="task", content='"made up"'
    )
    log = await h.run("r53t", [answer], spec)
    assert log.reason == "INVALID_MESSAGE"  # the task's result is its sub-agent's answer
    done = await h.run("r53t", agent=spec, tools={"lookup": lookup}, resume=True)
    assert done.done.finish_reason == pb.FINISH_REASON_STOP
    assert json.loads(result_of(await h.get("r53t"), "call_0_0").content).startswith("r done")
