"""docs/reference/rules.md R35–R45: history, fork and compare, in the engine."""

from __future__ import annotations

import json

import pytest

from luoshod.domain import FinishReason, Message, Role, Status
from luoshod.engine.forking import ForkPatch
from luoshod.errors import CheckpointNotFound, InvalidArgument, SessionExists
from luoshod.store import DEFAULT_HISTORY_LIMIT
from tests.support.engine_harness import (
    EngineHarness,
    agent,
    assert_valid_transcript,
    calls,
    tool_results,
)

SCRIPT = [calls(("add", {"a": 1})), calls(("add", {"a": 2})), {"text": "done"}]


def add(args):
    return args["a"] * 10


def result(call_id: str, result_json: str) -> Message:
    """A fork patch's tool result (what the service makes of a ToolResultPatch)."""
    return Message(Role.TOOL, result_json, (), call_id)


async def test_r35_every_save_appends_newest_first(h: EngineHarness) -> None:
    await h.run("r35", "go", agent(SCRIPT), {"add": add})
    entries = await h.history("r35")
    # R1 + result for step 1, R1 + result for step 2, finished at step 3
    assert [e.step for e in entries] == [3, 2, 2, 1, 1]
    assert entries[0].status is Status.FINISHED
    assert [e.checkpoint.version for e in entries] == [5, 4, 3, 2, 1]
    assert all(e.checkpoint.session_id == "r35" for e in entries)
    assert [e.saved_at for e in entries] == sorted((e.saved_at for e in entries), reverse=True)
    assert entries[0].checkpoint == await h.get("r35")


async def test_r35_per_session_history_limit(h: EngineHarness) -> None:
    await h.run("lim", "go", agent(SCRIPT), {"add": add}, history_limit=2)
    assert len(await h.history("lim")) == 2
    await h.run("none", "go", agent(SCRIPT), {"add": add}, history_limit=0)
    assert await h.history("none") == []


async def test_r35_the_store_limit_applies_by_default(h: EngineHarness) -> None:
    script = [calls(("add", {"a": k})) for k in range(30)]
    await h.run("dflt", "go", agent(script, max_steps=40), {"add": add})
    assert len(await h.history("dflt", limit=1000)) == DEFAULT_HISTORY_LIMIT == 50


async def test_r36_r37_same_step_twice_and_the_limit_drops_the_oldest(h: EngineHarness) -> None:
    await h.run("r36", "go", agent(SCRIPT), {"add": add}, history_limit=3)
    entries = await h.history("r36")
    assert [e.step for e in entries] == [3, 2, 2]  # limit 3: the oldest went
    assert [e.step for e in await h.history("r36", limit=1)] == [3]  # R37: the newest N
    assert await h.history("nobody") == []  # R37


async def test_r38_sessions_apart_and_delete_with_keep_history(h: EngineHarness) -> None:
    await h.run("r38a", "go", agent(SCRIPT), {"add": add})
    await h.run("r38b", "go", agent([{"text": "hi"}]))
    assert len(await h.history("r38b")) == 1
    assert await h.delete("r38b")
    assert await h.history("r38b") == []
    assert await h.delete("r38a", keep_history=True)
    kept = await h.history("r38a")
    assert len(kept) == 5
    await h.run("r38a", "again", agent([{"text": "fresh"}]))
    grown = await h.history("r38a")
    assert grown[0].step == 1
    assert [e.checkpoint.version for e in grown[1:]] == [e.checkpoint.version for e in kept]
    assert [m.content for m in (await h.get("r38a")).messages if m.role is Role.USER] == ["again"]


async def test_r39_load_returns_only_the_latest(h: EngineHarness) -> None:
    await h.run("r39", "go", agent(SCRIPT), {"add": add})
    cp = await h.get("r39")
    assert cp.status is Status.FINISHED and cp.version == 5


async def test_r40_r42_r44_fork_from_a_step_and_resume_it(h: EngineHarness) -> None:
    await h.run("trip", "go", agent(SCRIPT), {"add": add})
    source, source_history = await h.get("trip"), await h.history("trip")
    forked = await h.fork("trip", 1, patch=ForkPatch(tool_result=result("call_0_0", "999")))
    assert forked.session_id == "trip.fork-1" and forked.step == 1  # R42
    cp = forked.checkpoint
    assert cp.status is Status.IN_PROGRESS and cp.step_index == 1  # R44
    assert [m.content for m in tool_results(cp)] == ["999"]
    assert await h.get("trip") == source and await h.history("trip") == source_history  # R40
    assert (await h.fork("trip", 1)).session_id == "trip.fork-2"
    with pytest.raises(SessionExists):
        await h.fork("trip", 1, new_session_id="trip.fork-1")
    log = await h.run("trip.fork-1", resume=True, tools={"add": add})
    assert [c["call"].id for c in log.of("tool.call")] == [
        "call_1_0"
    ]  # recorded results are not re-run
    assert log.done["step_index"] == 3
    assert_valid_transcript(await h.get("trip.fork-1"))


async def test_r44_a_fork_of_a_paused_entry_goes_through_approval_again(h: EngineHarness) -> None:
    spec = agent([calls(("pay", {"eur": 1})), {"text": "paid"}], ["pay"], needs_approval=("pay",))
    paused = await h.run("pay", "go", spec)
    old = paused.of("approval.requested")[0]["approval"]
    forked = await h.fork("pay", 1)
    assert forked.checkpoint.approval_id == "" and forked.checkpoint.status is Status.IN_PROGRESS
    log = await h.run(forked.session_id, resume=True)
    new = log.of("approval.requested")[0]["approval"]
    assert new.approval_id != old.approval_id and new.session_id == forked.session_id
    assert log.types.count("tool.call") == 0


async def test_r41_unknown_session_or_step_lists_the_kept_steps(h: EngineHarness) -> None:
    await h.run("r41", "go", agent(SCRIPT), {"add": add})
    with pytest.raises(CheckpointNotFound) as err:
        await h.fork("r41", 7)
    assert "kept steps: [1, 2, 3]" in str(err.value) and err.value.metadata["kept_steps"] == "1,2,3"
    with pytest.raises(CheckpointNotFound):
        await h.fork("ghost", 1)


async def test_r43_patch_order_messages_state_result_then_input(h: EngineHarness) -> None:
    await h.run("r43", "go", agent(SCRIPT), {"add": add}, business_state={"v": 1})
    entry = (await h.history("r43"))[-1]  # step 1, before its result
    assert entry.step == 1 and not tool_results(entry.checkpoint)
    msgs = list(entry.checkpoint.messages)
    msgs[1] = Message(Role.USER, "rewritten question")
    patch = ForkPatch(
        messages=msgs,
        business_state_json='{"v": 2}',
        tool_result=result("call_0_0", '"patched"'),
        append_input="then go on",
    )
    cp = (await h.fork("r43", 1, patch=patch, new_session_id="r43-x")).checkpoint
    assert cp.messages[1].content == "rewritten question"
    assert json.loads(cp.business_state_json) == {"v": 2}
    assert cp.messages[-2].tool_call_id == "call_0_0" and cp.messages[-2].content == '"patched"'
    assert cp.messages[-2].tool_name == "add"
    assert cp.messages[-1].role is Role.USER and cp.messages[-1].content == "then go on"
    with pytest.raises(InvalidArgument) as err:
        await h.fork("r43", 1, patch=ForkPatch(tool_result=result("nope", "1")))
    assert err.value.reason == "UNKNOWN_TOOL_CALL"


async def test_r43_input_is_queued_after_pending_calls(h: EngineHarness) -> None:
    await h.run("r43q", "go", agent(SCRIPT), {"add": add})
    forked = await h.fork("r43q", 2, patch=ForkPatch(append_input="also this"))
    await h.run(forked.session_id, resume=True, tools={"add": add})
    cp = await h.get(forked.session_id)
    roles = [m.role for m in cp.messages]
    i = roles.index(Role.USER, 2)
    assert cp.messages[i].content == "also this"
    assert cp.messages[i - 1].role is Role.TOOL  # after the pending call's result
    assert_valid_transcript(cp)


async def test_r45_compare_finds_where_a_fork_diverged(h: EngineHarness) -> None:
    await h.run("cmp", "go", agent(SCRIPT), {"add": add})
    forked = await h.fork("cmp", 1, patch=ForkPatch(tool_result=result("call_0_0", "-1")))
    other = agent([calls(("add", {"a": 1})), calls(("add", {"a": 5})), {"text": "done"}])
    await h.run(forked.session_id, [], other, {"add": add})
    assert (await h.compare("cmp", "cmp")).diverged_at is None
    diff = await h.compare("cmp", forked.session_id)
    assert diff.diverged_at == 1  # the first step's result differs (steps count from 1)
    assert [len(diff.a), len(diff.b)] == [3, 3]
    assert diff.tool_order_a == diff.tool_order_b == ["add", "add"]
    (arg,) = diff.arguments
    assert (arg.step, arg.tool, json.loads(arg.a), json.loads(arg.b)) == (
        2,
        "add",
        {"a": 2},
        {"a": 5},
    )
    assert diff.finish_reason_a is diff.finish_reason_b is FinishReason.STOP
