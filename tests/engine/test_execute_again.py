"""docs/reference/rules.md R9–R19: executing again under the same session id, in the engine."""

from __future__ import annotations

import dataclasses
import json

import pytest

from luoshod.domain import Checkpoint, FinishReason, Role, Status
from luoshod.engine.events import Event
from luoshod.errors import SessionAwaitingApproval
from tests.support.engine_harness import (
    EngineHarness,
    agent,
    assert_valid_transcript,
    calls,
    system,
    user,
)


def add(args):
    return args.get("a", 0) + args.get("b", 0)


def nth_call(n: int):
    """stop_at predicate: drop the run at the n-th tool.call event (1-based)."""
    seen = []

    def stop(e: Event) -> bool:
        if e.type == "tool.call":
            seen.append(e)
        return len(seen) == n

    return stop


THREE_CALLS = [calls(("add", {"a": 1}), ("add", {"a": 2}), ("add", {"a": 3})), {"text": "sum done"}]


async def crash_mid_turn(
    h: EngineHarness, sid: str, script=THREE_CALLS, n: int = 2, **kw
) -> Checkpoint:
    """Run until the n-th tool.call, then drop the run as a crashed client would."""
    log = await h.run(sid, "start", agent(script, **kw), {"add": add}, stop_at=nth_call(n))
    assert log.dropped
    return await h.get(sid)


def users(cp: Checkpoint) -> list[str]:
    return [m.content for m in cp.messages if m.role is Role.USER]


async def test_r9_paused_session_refuses_execute_and_changes_nothing(h: EngineHarness) -> None:
    await h.run("r9", "hi", agent([{"text": "hello"}]))
    cp = await h.get("r9")
    paused = dataclasses.replace(
        cp, status=Status.AWAITING_APPROVAL, approval_id="ap-1", version=cp.version + 1
    )
    await h.store.save(paused, stored_messages=len(cp.messages))
    calls_before = h.model_calls("r9")
    log = await h.run("r9", "more", agent([{"text": "never"}]))
    assert isinstance(log.error, SessionAwaitingApproval)
    assert log.error.metadata == {"session_id": "r9", "approval_id": "ap-1"}
    assert log.events == []
    assert h.model_calls("r9") == calls_before
    after = await h.get("r9")
    assert after.version == paused.version and len(after.messages) == len(cp.messages)


async def test_r10_resume_runs_exactly_the_unanswered_calls_first(h: EngineHarness) -> None:
    cp = await crash_mid_turn(h, "r10")
    assert [m.role for m in cp.messages[-2:]] == [Role.ASSISTANT, Role.TOOL]
    model_calls = h.model_calls("r10")
    log = await h.run("r10", [], agent(THREE_CALLS), {"add": add})
    assert log.done["final_text"] == "sum done"
    assert [c["call"].id for c in log.of("tool.call")] == ["call_0_1", "call_0_2"]
    assert h.model_calls("r10") == model_calls + 1  # only the next turn, not the paused one
    assert log.of("run.start")[0]["mode"] == "resume"
    assert_valid_transcript(await h.get("r10"))


async def test_r10_unanswered_calls_go_through_validation_again(h: EngineHarness) -> None:
    script = [calls(("add", {"a": 1}), ("add", {"a": "not a number"})), {"text": "ok"}]
    schema = {"add": {"type": "object", "properties": {"a": {"type": "number"}}}}
    await h.run("r10v", "go", agent(script, schema), {"add": add}, stop_at=nth_call(1))
    again = await h.run("r10v", [], agent(script, schema), {"add": add})
    assert [r["is_error"] for r in again.of("tool.result")] == [False, True]
    assert len(again.of("tool.call")) == 1


async def test_r11_steps_usage_and_budget_continue_from_the_checkpoint(h: EngineHarness) -> None:
    script = [calls(("add", {"a": k})) for k in range(6)]
    cp = await crash_mid_turn(h, "r11", script, n=3, max_steps=4)
    assert cp.step_index == 3 and cp.usage.model_calls == 3
    log = await h.run("r11", [], agent(script, max_steps=4), {"add": add})
    assert log.of("run.start")[0]["step_index"] == 3
    assert log.done["finish_reason"] is FinishReason.MAX_STEPS
    assert log.done["step_index"] == 4  # one model call left of the budget
    assert log.done["usage"].model_calls == 4
    records = (await h.get("r11")).tool_call_records()
    assert [r.step for r in records] == [1, 2, 3, 4] and all(r.result is not None for r in records)


async def test_r12_new_input_goes_after_the_pending_results(h: EngineHarness) -> None:
    await crash_mid_turn(h, "r12")
    await h.run("r12", "actually, stop", agent(THREE_CALLS), {"add": add})
    cp = await h.get("r12")
    roles = [m.role for m in cp.messages]
    i = roles.index(Role.ASSISTANT)
    assert roles[i : i + 5] == [Role.ASSISTANT] + [Role.TOOL] * 3 + [Role.USER]
    assert cp.messages[i + 4].content == "actually, stop"
    assert_valid_transcript(cp)


@pytest.mark.parametrize("retry", ["same-message", "empty", "whole-history"])
async def test_r13_retry_of_the_starting_message_appends_nothing(
    h: EngineHarness, retry: str
) -> None:
    sid = f"r13-{retry}"
    cp = await crash_mid_turn(h, sid)
    if retry == "same-message":
        input = [user("start")]
    elif retry == "empty":
        input = []
    else:
        input = [m for m in cp.messages if m.role is not Role.SYSTEM][:1]
    await h.run(sid, input, agent(THREE_CALLS), {"add": add})
    done = await h.get(sid)
    assert users(done) == ["start"]
    assert_valid_transcript(done)


async def test_r14_finished_session_continues_as_a_conversation(h: EngineHarness) -> None:
    script = [calls(("add", {"a": 1})), {"text": "one"}, calls(("add", {"a": 2})), {"text": "two"}]
    await h.run("r14", "first", agent(script), {"add": add})
    before = await h.get("r14")
    log = await h.run("r14", "second", agent(script), {"add": add})
    assert log.of("run.start")[0]["mode"] == "continue"
    assert log.done["step_index"] == 2 and log.done["usage"].model_calls == 2  # counted from zero
    cp = await h.get("r14")
    assert cp.messages[: len(before.messages)] == before.messages
    assert users(cp) == ["first", "second"]
    assert [r.call.id for r in cp.tool_call_records()] == ["call_2_0"]  # only this run's calls
    assert cp.total_usage.model_calls == 4
    assert log.done["message_count"] == len(cp.messages)


async def test_r15_resent_history_is_recognised(h: EngineHarness) -> None:
    spec = agent([{"text": "a1"}, {"text": "a2"}])
    await h.run("r15", "q1", spec)
    stored = [m for m in (await h.get("r15")).messages if m.role is not Role.SYSTEM]
    await h.run("r15", stored + [user("q2")], spec)
    cp = await h.get("r15")
    assert [m.content for m in cp.messages if m.role is not Role.SYSTEM] == ["q1", "a1", "q2", "a2"]


async def test_r16_repeating_an_earlier_user_message_is_a_new_turn(h: EngineHarness) -> None:
    spec = agent([{"text": "a1"}, {"text": "a2"}])
    await h.run("r16", "again?", spec)
    await h.run("r16", "again?", spec)
    assert users(await h.get("r16")) == ["again?", "again?"]


async def test_r17_system_messages_in_input_are_ignored_for_existing_sessions(
    h: EngineHarness,
) -> None:
    spec = agent([{"text": "a1"}, {"text": "a2"}], instructions="original prompt")
    await h.run("r17", "q1", spec)
    await h.run("r17", [system("new prompt!"), user("q2")], spec)
    cp = await h.get("r17")
    assert [m.content for m in cp.messages if m.role is Role.SYSTEM] == ["original prompt"]
    assert users(cp) == ["q1", "q2"]


async def test_r18_business_state_inherited_or_replaced(h: EngineHarness) -> None:
    spec = agent([{"text": "a"}] * 4)
    await h.run("r18", "1", spec, business_state={"cart": [1]})
    assert json.loads((await h.get("r18")).business_state_json) == {"cart": [1]}
    await h.run("r18", "2", spec)  # omitted: inherited
    assert json.loads((await h.get("r18")).business_state_json) == {"cart": [1]}
    await h.run("r18", "3", spec, business_state=None)  # JSON null replaces it
    assert (await h.get("r18")).business_state_json == "null"
    await h.run("r18", "4", spec, business_state={"cart": []})
    assert json.loads((await h.get("r18")).business_state_json) == {"cart": []}


async def test_r19_delete_then_execute_starts_afresh(h: EngineHarness) -> None:
    spec = agent([calls(("add", {"a": 1})), {"text": "x"}, {"text": "y"}])
    await h.run("r19", "old", spec, {"add": add}, business_state={"k": 1})
    assert await h.delete("r19")
    assert await h.store.load("r19") is None
    log = await h.run("r19", "new", spec, {"add": add})
    assert log.of("run.start")[0]["mode"] == "new"
    cp = await h.get("r19")
    assert users(cp) == ["new"]
    assert cp.business_state_json == "null" and cp.total_usage.model_calls == 2
    assert not await h.delete("nope")
