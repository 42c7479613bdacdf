"""SEMANTICS.md R1–R3, R5–R8: when a checkpoint is written, over the gRPC API."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import grpc
import pytest
from luosho.v1 import agent_pb2 as pb

from luoshod.errors import LeaseLost
from support import Harness, agent, assert_valid_transcript, calls, error_info

pytestmark = pytest.mark.asyncio


def add(args):
    return args.get("a", 0) + args.get("b", 0)


async def test_r1_turn_with_tools_is_saved_before_any_tool_runs(h: Harness) -> None:
    seen = []

    async def check(e: pb.Event) -> None:
        if e.type == "tool.call":
            cp = await h.get("r1")
            seen.append(cp)

    spec = agent([calls(("add", {"a": 1, "b": 2})), {"text": "3"}])
    log = await h.run("r1", "add 1 and 2", spec, {"add": add}, on_event=check)
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    cp = seen[0]
    assert cp.status == pb.CHECKPOINT_STATUS_IN_PROGRESS
    last = cp.messages[-1]
    assert last.role == pb.ROLE_ASSISTANT and [c.name for c in last.tool_calls] == ["add"]
    assert not any(m.role == pb.ROLE_TOOL for m in cp.messages)


async def test_r2_results_recorded_in_call_order_even_when_finished_out_of_order(h: Harness) -> None:
    spec = agent(
        [calls(("add", {"a": 1}), ("add", {"a": 2}), ("add", {"a": 3})), {"text": "ok"}],
        tool_concurrency=3,
    )
    got: list[pb.ToolCall] = []

    async def answer(e: pb.Event) -> None:
        if e.type == "tool.call":
            got.append(e.tool_call.call)
            if len(got) == 3:  # all three handed out at once; answer 3, 2, then 1
                for c in reversed(got):
                    await h.submit("r2", c.id, json.dumps(json.loads(c.arguments_json)["a"]))

    log = await h.run("r2", "go", spec, on_event=answer)
    assert log.done.status == pb.CHECKPOINT_STATUS_FINISHED
    ids = [c.id for c in got]
    assert [e.tool_result.tool_call_id for e in log.of("tool.result")] == ids
    # Every save during the turn holds an in-order prefix of the results, one more each time.
    history = await h.daemon.store.history("r2")
    prefixes = []
    for entry in reversed(history):
        msgs = entry.checkpoint.messages
        if entry.status.value == "in-progress":
            prefixes.append([m.tool_call_id for m in msgs if m.role.value == "tool"])
    assert prefixes == [[], ids[:1], ids[:2], ids]


async def test_r2_the_last_result_is_saved_before_the_next_model_call(h: Harness) -> None:
    """The save of a turn's last result (R2) is the one that carries ``step.done`` and the
    next ``step.start``: two synced writes a tool step (the turn with its ``tool.call``,
    the result), not three. Each write still happens before what depends on it: the
    result is in the store when the client hears of it, and before the model is called."""
    writes: list[str] = []
    store = h.daemon.store
    save, append_events = store.save, store.append_events

    async def counted_save(cp, **kw):  # type: ignore[no-untyped-def]
        writes.append("save")
        await save(cp, **kw)

    async def counted_append(session_id, events, **kw):  # type: ignore[no-untyped-def]
        writes.append("events")
        await append_events(session_id, events, **kw)

    stored_at_result: list[list[str]] = []

    async def check(e: pb.Event) -> None:
        if e.type == "tool.result":
            cp = await h.get("r2w")
            stored_at_result.append([m.tool_call_id for m in cp.messages if m.role == pb.ROLE_TOOL])

    store.save, store.append_events = counted_save, counted_append  # type: ignore[method-assign]
    try:
        spec = agent([calls(("add", {"a": k})) for k in range(3)] + [{"text": "done"}])
        log = await h.run("r2w", "go", spec, {"add": add}, on_event=check)
    finally:
        del store.save, store.append_events
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    calls_made = [e.tool_call.call.id for e in log.of("tool.call")]
    assert stored_at_result == [calls_made[: i + 1] for i in range(3)]
    # run.start and step.start; then per tool step the turn and its result; the end.
    assert writes == ["events"] + ["save", "save"] * 3 + ["save"]
    # The result's checkpoint is the model's input: the scripted model saw every result.
    history = await h.daemon.store.history("r2w")
    in_progress = [e for e in reversed(history) if e.status.value == "in-progress"]
    assert [sum(m.role.value == "tool" for m in e.checkpoint.messages) for e in in_progress] == [
        0, 1, 1, 2, 2, 3,
    ]


async def test_r3_cancel_records_cancelled_results_and_stays_in_progress(h: Harness) -> None:
    spec = agent([calls(("add", {"a": 1}), ("add", {"a": 2})), {"text": "after"}])

    async def cancel_at_call(e: pb.Event) -> None:
        if e.type == "tool.call":
            resp = await h.stub.Cancel(pb.CancelRequest(session_id="r3"))
            assert resp.cancelled

    log = await h.run("r3", "go", spec, on_event=cancel_at_call)
    assert log.error is None
    assert log.done.finish_reason == pb.FINISH_REASON_ABORTED
    cp = await h.get("r3")
    assert cp.status == pb.CHECKPOINT_STATUS_IN_PROGRESS
    assert cp.finish_reason == pb.FINISH_REASON_ABORTED
    results = [m for m in cp.messages if m.role == pb.ROLE_TOOL]
    assert len(results) == 2 and all(r.is_error for r in results)
    assert all("aborted" in json.loads(r.content)["error"] for r in results)
    assert_valid_transcript(cp)
    # The aborted run resumes: no call runs again, the model is called next.
    again = await h.run("r3", None, resume=True)
    assert again.done.finish_reason == pb.FINISH_REASON_STOP
    assert again.types.count("tool.call") == 0
    assert (await h.get("r3")).messages[-1].content == "after"


async def test_r3_cancel_during_a_model_call_stops_it(h: Harness) -> None:
    spec = agent([{"text": "slow", "delay_ms": 30000}])

    async def cancel_at_step(e: pb.Event) -> None:
        if e.type == "step.start":
            await h.stub.Cancel(pb.CancelRequest(session_id="r3m"))

    log = await asyncio.wait_for(h.run("r3m", "go", spec, on_event=cancel_at_step), 10)
    assert log.done.finish_reason == pb.FINISH_REASON_ABORTED
    cp = await h.get("r3m")
    assert cp.status == pb.CHECKPOINT_STATUS_IN_PROGRESS and cp.step_index == 0
    assert [m.role for m in cp.messages] == [pb.ROLE_SYSTEM, pb.ROLE_USER]


async def test_r5_finished_when_model_stops_calling_tools(h: Harness) -> None:
    log = await h.run("r5", "hi", agent([calls(("add", {"a": 1})), {"text": "bye"}]), {"add": add})
    cp = await h.get("r5")
    assert cp.status == pb.CHECKPOINT_STATUS_FINISHED
    assert cp.finish_reason == pb.FINISH_REASON_STOP
    assert log.done.final_text == "bye" and log.done.step_index == 2


async def test_r5_finished_when_max_steps_runs_out(h: Harness) -> None:
    script = [calls(("add", {"a": k})) for k in range(5)]
    log = await h.run("r5m", "loop", agent(script, max_steps=2), {"add": add})
    assert log.done.finish_reason == pb.FINISH_REASON_MAX_STEPS
    cp = await h.get("r5m")
    assert cp.status == pb.CHECKPOINT_STATUS_FINISHED and cp.step_index == 2
    assert cp.usage.model_calls == 2
    assert_valid_transcript(cp)


async def test_r6_provider_failure_keeps_the_last_in_progress_checkpoint(h: Harness) -> None:
    spec = agent([calls(("add", {"a": 1})), {"error": "model exploded"}])
    log = await h.run("r6", "go", spec, {"add": add})
    code, reason, meta = error_info(log.error)
    assert (code, reason) == (grpc.StatusCode.UNAVAILABLE, "PROVIDER_ERROR")
    cp = await h.get("r6")
    assert cp.status == pb.CHECKPOINT_STATUS_IN_PROGRESS
    assert cp.messages[-1].role == pb.ROLE_TOOL  # the last save: the tool result
    before = cp.version
    # Resuming with a script that no longer fails continues from there (settings are not
    # part of the fingerprint, so this is no drift).
    fixed = agent([calls(("add", {"a": 1})), {"text": "recovered"}])
    again = await h.run("r6", None, fixed, resume=True)
    assert again.done.final_text == "recovered"
    assert (await h.get("r6")).version == before + 1


async def test_r7_saves_are_strictly_ordered(h: Harness) -> None:
    script = [calls(("add", {"a": k}), ("add", {"a": k + 1})) for k in range(3)] + [{"text": "x"}]
    await h.run("r7", "go", agent(script, tool_concurrency=2), {"add": add})
    history = await h.daemon.store.history("r7")
    versions = [e.checkpoint.version for e in history]
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions)
    assert versions[0] == (await h.get("r7")).version
    # An older save can never land last: the store refuses a stale version.
    stale = dataclasses.replace(history[1].checkpoint)
    stale.version = history[0].checkpoint.version
    with pytest.raises(LeaseLost):
        await h.daemon.store.save(stale, stored_messages=0)
    assert (await h.get("r7")).version == versions[0]


async def test_r8_turn_save_and_result_saves_share_the_step(h: Harness) -> None:
    script = [calls(("add", {"a": 1}), ("add", {"a": 2})), calls(("add", {"a": 3})), {"text": "x"}]
    await h.run("r8", "go", agent(script), {"add": add})
    history = list(reversed(await h.daemon.store.history("r8")))
    by_step: dict[int, list[int]] = {}
    for e in history:
        results = sum(1 for m in e.checkpoint.messages if m.role.value == "tool")
        by_step.setdefault(e.step, []).append(results)
    assert by_step[1] == [0, 1, 2]  # the turn's save, then one per result, all step 1
    assert by_step[2] == [2, 3]
    assert by_step[3] == [3]  # finished
