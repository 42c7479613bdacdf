"""docs/reference/rules.md R46–R50: the agent fingerprint and drift on resume, in the engine."""

from __future__ import annotations

import dataclasses
import logging

import pytest

from luoshod.domain import AgentSpec, Checkpoint, DriftPolicy, FinishReason, ToolSpec
from luoshod.engine.fingerprint import drift, fingerprint
from luoshod.errors import AgentDrift, ResumeToolMissing
from tests.support.engine_harness import EngineHarness, agent, calls

SCRIPT = [calls(("add", {"a": 1}), ("mul", {"a": 2})), {"text": "done"}]
TOOLS = {"add": {"type": "object"}, "mul": {"type": "object"}}
ANSWERS = {"add": lambda a: 1, "mul": lambda a: 2}


def spec(**kw) -> AgentSpec:
    return agent(SCRIPT, kw.pop("tools", TOOLS), **kw)


async def crashed(h: EngineHarness, sid: str, **kw) -> Checkpoint:
    await h.run(sid, "go", spec(**kw), stop_at=lambda e: e.type == "tool.call")
    return await h.get(sid)


def test_r46_fingerprint_ignores_tool_order_and_key_order() -> None:
    a = AgentSpec(
        "p:m",
        "x",
        (ToolSpec("a", input_schema_json='{"type":"object","title":"t"}'), ToolSpec("b")),
    )
    b = AgentSpec(
        "p:m",
        "x",
        (ToolSpec("b"), ToolSpec("a", input_schema_json='{"title":"t","type":"object"}')),
    )
    assert fingerprint(a) == fingerprint(b)
    c = AgentSpec("p:n", "y", (ToolSpec("a", input_schema_json='{"type":"string"}'), ToolSpec("c")))
    d = drift(fingerprint(a), fingerprint(c))
    assert (d.model_from, d.model_to) == ("p:m", "p:n")
    assert (d.tools_added, d.tools_removed, d.tools_changed) == (("c",), ("b",), ("a",))
    assert d.instructions_changed
    assert drift(None, fingerprint(a)) is None  # R50


async def test_r46_every_checkpoint_carries_the_fingerprint(h: EngineHarness) -> None:
    cp = await crashed(h, "r46")
    fp = cp.fingerprint
    assert fp.model == "scripted:test" and set(fp.tool_schema_hashes) == {"add", "mul"}
    assert len(fp.hash) == 16 and fp.instructions_hash
    assert all(e.checkpoint.fingerprint == fp for e in await h.history("r46"))
    reordered = dataclasses.replace(spec(), tools=tuple(reversed(spec().tools)))
    log = await h.run("r46", [], reordered, ANSWERS)
    assert "agent.drift" not in log.types  # tool order does not change it


async def test_r47_r48_warn_reports_what_changed_and_continues(
    h: EngineHarness, caplog: pytest.LogCaptureFixture
) -> None:
    await crashed(h, "r48w")
    caplog.set_level(logging.WARNING, logger="luoshod.engine")
    changed = spec(
        model="scripted:other",
        instructions="new rules",
        tools={
            "add": {"type": "object", "title": "x"},
            "div": {"type": "object"},
            "mul": {"type": "object"},
        },
    )
    log = await h.run("r48w", [], changed, ANSWERS)
    assert log.types[:2] == ["run.start", "agent.drift"]
    d = log.of("agent.drift")[0]["drift"]
    assert (d.model_from, d.model_to) == ("scripted:test", "scripted:other")
    assert (d.tools_added, d.tools_removed, d.tools_changed) == (("div",), (), ("add",))
    assert d.instructions_changed
    assert log.done["finish_reason"] is FinishReason.STOP
    assert (await h.get("r48w")).fingerprint.model == "scripted:other"  # the new writer's
    (line,) = [r.getMessage() for r in caplog.records if "agent drift" in r.getMessage()]
    assert "session=r48w" in line and "scripted:other" in line  # and a log line


async def test_r47_drift_is_checked_before_any_model_call_or_tool(h: EngineHarness) -> None:
    await crashed(h, "r47")
    before = h.model_calls("r47")
    strict = spec(instructions="changed", on_agent_drift=DriftPolicy.ERROR)
    log = await h.run("r47", [], strict, ANSWERS)
    assert isinstance(log.error, AgentDrift)
    assert h.model_calls("r47") == before and log.events == []


async def test_r48_error_refuses_and_leaves_the_checkpoint(h: EngineHarness) -> None:
    before = await crashed(h, "r48e")
    strict = spec(instructions="changed", on_agent_drift=DriftPolicy.ERROR)
    log = await h.run("r48e", [], strict, ANSWERS)
    assert isinstance(log.error, AgentDrift) and log.reason == "AGENT_DRIFT"
    meta = log.error.metadata
    assert (
        meta["instructions_changed"] == "true"
        and meta["model_from"] == meta["model_to"] == "scripted:test"
    )
    assert log.events == [] and (await h.get("r48e")) == before


async def test_r48_error_puts_the_approval_back(h: EngineHarness) -> None:
    log = await h.run("r48a", "go", spec(needs_approval=("mul",)), {"add": lambda a: 1})
    approval = log.of("approval.requested")[0]["approval"]
    strict = spec(instructions="changed", on_agent_drift=DriftPolicy.ERROR, needs_approval=("mul",))
    refused = await h.resolve(approval.approval_id, True, agent=strict)
    assert refused.reason == "AGENT_DRIFT" and refused.events == []
    listed, _ = await h.store.list_approvals(session_id="r48a", page_size=10, page_token="")
    assert [a.approval_id for a in listed] == [approval.approval_id]
    # The right agent (the saved one: no agent sent) can still resolve it.
    done = await h.resolve(approval.approval_id, False)
    assert done.types[-1] == "run.done" and done.error is None


async def test_r48_ignore_says_nothing_and_same_agent_never_warns(h: EngineHarness) -> None:
    await crashed(h, "r48i")
    quiet = spec(instructions="changed", on_agent_drift=DriftPolicy.IGNORE)
    log = await h.run("r48i", [], quiet, ANSWERS)
    assert "agent.drift" not in log.types and log.done
    await crashed(h, "same")
    log = await h.run("same", [], spec(), ANSWERS)
    assert "agent.drift" not in log.types


async def test_r49_a_pending_call_whose_tool_is_gone_always_fails(h: EngineHarness) -> None:
    before = await crashed(h, "r49")
    for policy in (DriftPolicy.WARN, DriftPolicy.IGNORE):
        log = await h.run("r49", [], spec(tools={"add": {"type": "object"}}, on_agent_drift=policy))
        assert isinstance(log.error, ResumeToolMissing) and log.error.metadata["tools"] == "mul"
    assert await h.get("r49") == before


async def test_r50_a_checkpoint_without_fingerprint_resumes_without_warning(
    h: EngineHarness,
) -> None:
    await crashed(h, "r50")
    cp = await h.get("r50")
    cp.fingerprint, cp.version = None, cp.version + 1
    await h.store.save(cp, stored_messages=len(cp.messages))
    log = await h.run("r50", [], spec(model="scripted:other"), ANSWERS)
    assert "agent.drift" not in log.types and log.done


async def test_r47_a_finished_session_continuing_is_not_compared(h: EngineHarness) -> None:
    await h.run("fin", "go", spec(), ANSWERS)
    log = await h.run("fin", "more", spec(model="scripted:other"), ANSWERS)
    assert "agent.drift" not in log.types and log.done["finish_reason"] is FinishReason.STOP
    assert log.of("run.start")[0]["mode"] == "continue"
