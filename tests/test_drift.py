"""SEMANTICS.md R46–R50: the agent fingerprint and drift on resume."""

from __future__ import annotations

import grpc
from luosho.v1 import agent_pb2 as pb

from support import Harness, agent, calls, error_info

SCRIPT = [calls(("add", {"a": 1}), ("mul", {"a": 2})), {"text": "done"}]
TOOLS = {"add": {"type": "object"}, "mul": {"type": "object"}}


def spec(**kw) -> pb.AgentSpec:
    return agent(SCRIPT, kw.pop("tools", TOOLS), **kw)


async def crashed(h: Harness, sid: str, **kw) -> pb.Checkpoint:
    await h.run(sid, "go", spec(**kw), stop_at=lambda e: e.type == "tool.call")
    await h.idle(sid)
    return await h.get(sid)


async def test_r46_every_checkpoint_carries_the_fingerprint(h: Harness) -> None:
    cp = await crashed(h, "r46")
    fp = cp.fingerprint
    assert fp.model == "scripted:test" and set(fp.tool_schema_hashes) == {"add", "mul"}
    assert len(fp.hash) == 16 and fp.instructions_hash
    reordered = spec()
    reordered.tools.reverse()
    log = await h.run("r46", [], reordered, {"add": lambda a: 1, "mul": lambda a: 2})
    assert "agent.drift" not in log.types  # tool order does not change it


async def test_r47_r48_warn_reports_what_changed_and_continues(h: Harness) -> None:
    await crashed(h, "r48w")
    changed = spec(model="scripted:other", instructions="new rules",
                   tools={"add": {"type": "object", "title": "x"}, "div": {"type": "object"}, "mul": {"type": "object"}})
    log = await h.run("r48w", [], changed, {"add": lambda a: 1, "mul": lambda a: 2})
    assert log.types[:2] == ["run.start", "agent.drift"]
    d = log.of("agent.drift")[0].agent_drift
    assert (d.model_from, d.model_to) == ("scripted:test", "scripted:other")
    assert list(d.tools_added) == ["div"] and list(d.tools_removed) == [] and list(d.tools_changed) == ["add"]
    assert d.instructions_changed
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    assert (await h.get("r48w")).fingerprint.model == "scripted:other"  # the new writer's


async def test_r48_error_refuses_and_leaves_the_checkpoint(h: Harness) -> None:
    before = await crashed(h, "r48e")
    strict = spec(instructions="changed", on_agent_drift=pb.AGENT_DRIFT_POLICY_ERROR)
    log = await h.run("r48e", [], strict, {"add": lambda a: 1, "mul": lambda a: 2})
    code, reason, meta = error_info(log.error)
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "AGENT_DRIFT")
    assert meta["instructions_changed"] == "true" and meta["model_from"] == meta["model_to"] == "scripted:test"
    assert log.events == [] and (await h.get("r48e")) == before


async def test_r48_error_puts_the_approval_back(h: Harness) -> None:
    gated = spec()
    gated.tools[1].needs_approval = True
    log = await h.run("r48a", "go", gated, {"add": lambda a: 1})
    approval = log.of("approval.requested")[0].approval_requested.approval
    strict = spec(instructions="changed", on_agent_drift=pb.AGENT_DRIFT_POLICY_ERROR)
    strict.tools[1].needs_approval = True
    call = h.stub.Resolve(pb.ResolveRequest(approval_id=approval.approval_id, approved=True, agent=strict))
    try:
        async for _ in call:
            pass
    except grpc.aio.AioRpcError as err:
        assert error_info(err)[1] == "AGENT_DRIFT"
    listed = await h.stub.ListApprovals(pb.ListApprovalsRequest(session_id="r48a"))
    assert [a.approval_id for a in listed.approvals] == [approval.approval_id]
    # The right agent (the saved one: no agent sent) can still resolve it.
    events = []
    async for resp in h.stub.Resolve(pb.ResolveRequest(approval_id=approval.approval_id, approved=False)):
        events.append(resp.event.type)
    assert events[-1] == "run.done"


async def test_r48_ignore_says_nothing_and_same_agent_never_warns(h: Harness) -> None:
    await crashed(h, "r48i")
    quiet = spec(instructions="changed", on_agent_drift=pb.AGENT_DRIFT_POLICY_IGNORE)
    log = await h.run("r48i", [], quiet, {"add": lambda a: 1, "mul": lambda a: 2})
    assert "agent.drift" not in log.types and log.done
    await crashed(h, "same")
    log = await h.run("same", [], spec(), {"add": lambda a: 1, "mul": lambda a: 2})
    assert "agent.drift" not in log.types


async def test_r49_a_pending_call_whose_tool_is_gone_always_fails(h: Harness) -> None:
    before = await crashed(h, "r49")
    for policy in (pb.AGENT_DRIFT_POLICY_WARN, pb.AGENT_DRIFT_POLICY_IGNORE):
        log = await h.run("r49", [], spec(tools={"add": {"type": "object"}}, on_agent_drift=policy))
        code, reason, meta = error_info(log.error)
        assert (code, reason, meta["tools"]) == (grpc.StatusCode.FAILED_PRECONDITION, "RESUME_TOOL_MISSING", "mul")
    assert await h.get("r49") == before


async def test_r50_a_checkpoint_without_fingerprint_resumes_without_warning(h: Harness) -> None:
    await crashed(h, "r50")
    store = h.daemon.store
    cp = await store.load("r50")
    cp.fingerprint, cp.version = None, cp.version + 1
    await store.save(cp, stored_messages=len(cp.messages))
    log = await h.run("r50", [], spec(model="scripted:other"), {"add": lambda a: 1, "mul": lambda a: 2})
    assert "agent.drift" not in log.types and log.done


async def test_a_finished_session_continuing_is_not_compared(h: Harness) -> None:
    await h.run("fin", "go", spec(), {"add": lambda a: 1, "mul": lambda a: 2})
    log = await h.run("fin", "more", spec(model="scripted:other"), {"add": lambda a: 1, "mul": lambda a: 2})
    assert "agent.drift" not in log.types and log.done.finish_reason == pb.FINISH_REASON_STOP
    assert log.of("run.start")[0].run_start.mode == pb.RUN_MODE_CONTINUE
