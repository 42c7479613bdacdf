"""docs/reference/rules.md R1–R3, R5–R8: when a checkpoint is written, in the engine."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest

from luoshod.domain import FinishReason, Role, Status, ToolCall
from luoshod.errors import LeaseLost, ProviderError
from tests.support.engine_harness import (
    EngineHarness,
    agent,
    assert_valid_transcript,
    calls,
    tool_results,
)


def add(args):
    return args.get("a", 0) + args.get("b", 0)


async def test_r1_turn_with_tools_is_saved_before_any_tool_runs(h: EngineHarness) -> None:
    seen = []

    async def check(e, port, control) -> None:
        if e.type == "tool.call":
            seen.append(await h.get("r1"))

    spec = agent([calls(("add", {"a": 1, "b": 2})), {"text": "3"}])
    log = await h.run("r1", "add 1 and 2", spec, {"add": add}, on_event=check)
    assert log.done["finish_reason"] is FinishReason.STOP
    cp = seen[0]
    assert cp.status is Status.IN_PROGRESS
    last = cp.messages[-1]
    assert last.role is Role.ASSISTANT and [c.name for c in last.tool_calls] == ["add"]
    assert not tool_results(cp)


async def test_r2_results_recorded_in_call_order_even_when_finished_out_of_order(
    h: EngineHarness,
) -> None:
    spec = agent(
        [calls(("add", {"a": 1}), ("add", {"a": 2}), ("add", {"a": 3})), {"text": "ok"}],
        tool_concurrency=3,
    )
    got: list[ToolCall] = []

    def answer(e, port, control) -> None:
        if e.type == "tool.call":
            got.append(e.data["call"])
            if len(got) == 3:  # all three handed out at once; answer 3, 2, then 1
                for c in reversed(got):
                    assert port.deliver(c.id, json.dumps(json.loads(c.arguments_json)["a"]))

    log = await h.run("r2", "go", spec, on_event=answer)
    assert log.done["status"] is Status.FINISHED
    ids = [c.id for c in got]
    assert [r["tool_call_id"] for r in log.of("tool.result")] == ids
    # Every save during the turn holds an in-order prefix of the results, one more each time.
    prefixes = [
        [m.tool_call_id for m in tool_results(entry.checkpoint)]
        for entry in reversed(await h.history("r2"))
        if entry.status is Status.IN_PROGRESS
    ]
    assert prefixes == [[], ids[:1], ids[:2], ids]


async def test_r2_the_last_result_is_saved_before_the_next_model_call(h: EngineHarness) -> None:
    """The save of a turn's last result (R2) is the one that carries ``step.done`` and the
    next ``step.start``: two synced writes a tool step (the turn with its ``tool.call``,
    the result), not three. Each write still happens before what depends on it: the
    result is in the store when the client hears of it, and before the model is called."""
    writes: list[str] = []
    store = h.store
    save, append_events = store.save, store.append_events

    async def counted_save(cp, **kw):  # type: ignore[no-untyped-def]
        writes.append("save")
        await save(cp, **kw)

    async def counted_append(session_id, events, **kw):  # type: ignore[no-untyped-def]
        writes.append("events")
        await append_events(session_id, events, **kw)

    stored_at_result: list[list[str]] = []

    async def check(e, port, control) -> None:
        if e.type == "tool.result":
            stored_at_result.append([m.tool_call_id for m in tool_results(await h.get("r2w"))])

    store.save, store.append_events = counted_save, counted_append  # type: ignore[method-assign]
    try:
        spec = agent([calls(("add", {"a": k})) for k in range(3)] + [{"text": "done"}])
        log = await h.run("r2w", "go", spec, {"add": add}, on_event=check)
    finally:
        del store.save, store.append_events
    assert log.done["finish_reason"] is FinishReason.STOP
    calls_made = [c["call"].id for c in log.of("tool.call")]
    assert stored_at_result == [calls_made[: i + 1] for i in range(3)]
    # run.start and step.start; then per tool step the turn and its result; the end.
    assert writes == ["events"] + ["save", "save"] * 3 + ["save"]
    # The result's checkpoint is the model's input: the scripted model saw every result.
    in_progress = [e for e in reversed(await h.history("r2w")) if e.status is Status.IN_PROGRESS]
    assert [len(tool_results(e.checkpoint)) for e in in_progress] == [0, 1, 1, 2, 2, 3]


async def test_r3_abort_records_cancelled_results_and_stays_in_progress(h: EngineHarness) -> None:
    spec = agent([calls(("add", {"a": 1}), ("add", {"a": 2})), {"text": "after"}])

    def abort_at_call(e, port, control) -> None:
        if e.type == "tool.call":
            control.abort()

    log = await h.run("r3", "go", spec, on_event=abort_at_call)
    assert log.error is None
    assert log.done["finish_reason"] is FinishReason.ABORTED
    cp = await h.get("r3")
    assert cp.status is Status.IN_PROGRESS and cp.finish_reason is FinishReason.ABORTED
    results = tool_results(cp)
    assert len(results) == 2 and all(r.is_error for r in results)
    assert all("aborted" in json.loads(r.content)["error"] for r in results)
    assert_valid_transcript(cp)
    # The aborted run resumes: no call runs again, the model is called next.
    again = await h.run("r3", resume=True)
    assert again.done["finish_reason"] is FinishReason.STOP
    assert again.types.count("tool.call") == 0
    assert (await h.get("r3")).messages[-1].content == "after"


async def test_r3_abort_during_a_model_call_stops_it(h: EngineHarness) -> None:
    spec = agent([{"text": "slow", "delay_ms": 30000}])

    def abort_at_step(e, port, control) -> None:
        if e.type == "step.start":
            control.abort()

    log = await asyncio.wait_for(h.run("r3m", "go", spec, on_event=abort_at_step), 10)
    assert log.done["finish_reason"] is FinishReason.ABORTED
    cp = await h.get("r3m")
    assert cp.status is Status.IN_PROGRESS and cp.step_index == 0
    assert [m.role for m in cp.messages] == [Role.SYSTEM, Role.USER]


async def test_r5_finished_when_model_stops_calling_tools(h: EngineHarness) -> None:
    log = await h.run("r5", "hi", agent([calls(("add", {"a": 1})), {"text": "bye"}]), {"add": add})
    cp = await h.get("r5")
    assert cp.status is Status.FINISHED and cp.finish_reason is FinishReason.STOP
    assert log.done["final_text"] == "bye" and log.done["step_index"] == 2


async def test_r5_finished_when_max_steps_runs_out(h: EngineHarness) -> None:
    script = [calls(("add", {"a": k})) for k in range(5)]
    log = await h.run("r5m", "loop", agent(script, max_steps=2), {"add": add})
    assert log.done["finish_reason"] is FinishReason.MAX_STEPS
    cp = await h.get("r5m")
    assert cp.status is Status.FINISHED and cp.step_index == 2
    assert cp.usage.model_calls == 2
    assert_valid_transcript(cp)


async def test_r6_provider_failure_keeps_the_last_in_progress_checkpoint(h: EngineHarness) -> None:
    spec = agent([calls(("add", {"a": 1})), {"error": "model exploded"}])
    log = await h.run("r6", "go", spec, {"add": add})
    assert isinstance(log.error, ProviderError) and log.reason == "PROVIDER_ERROR"
    cp = await h.get("r6")
    assert cp.status is Status.IN_PROGRESS
    assert cp.messages[-1].role is Role.TOOL  # the last save: the tool result
    before = cp.version
    # Resuming with a script that no longer fails continues from there (settings are not
    # part of the fingerprint, so this is no drift).
    fixed = agent([calls(("add", {"a": 1})), {"text": "recovered"}])
    again = await h.run("r6", None, fixed, resume=True)
    assert again.done["final_text"] == "recovered"
    assert (await h.get("r6")).version == before + 1


async def test_r7_saves_are_strictly_ordered(h: EngineHarness) -> None:
    script = [calls(("add", {"a": k}), ("add", {"a": k + 1})) for k in range(3)] + [{"text": "x"}]
    await h.run("r7", "go", agent(script, tool_concurrency=2), {"add": add})
    history = await h.history("r7")
    versions = [e.checkpoint.version for e in history]
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions)
    assert versions[0] == (await h.get("r7")).version
    # An older save can never land last: the store refuses a stale version.
    stale = dataclasses.replace(history[1].checkpoint)
    stale.version = history[0].checkpoint.version
    with pytest.raises(LeaseLost):
        await h.store.save(stale, stored_messages=0)
    assert (await h.get("r7")).version == versions[0]


async def test_r8_turn_save_and_result_saves_share_the_step(h: EngineHarness) -> None:
    script = [calls(("add", {"a": 1}), ("add", {"a": 2})), calls(("add", {"a": 3})), {"text": "x"}]
    await h.run("r8", "go", agent(script), {"add": add})
    by_step: dict[int, list[int]] = {}
    for e in reversed(await h.history("r8")):
        by_step.setdefault(e.step, []).append(len(tool_results(e.checkpoint)))
    assert by_step[1] == [0, 1, 2]  # the turn's save, then one per result, all step 1
    assert by_step[2] == [2, 3]
    assert by_step[3] == [3]  # finished
