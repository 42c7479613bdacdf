"""R68, R69 through the gRPC API, on memory, SQLite and LMDB: ``Execute.if_busy`` on a busy
session (REJECT, ENQUEUE, INTERRUPT, ROLLBACK), the queue shown by ``GetSession``,
removed by ``DequeueInput``, kept while the session is paused, and request ids (R74) that
never queue an input twice."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.server.app import Daemon
from tests.support.harness import (
    Harness,
    agent,
    assert_valid_transcript,
    busy_with_a_tool,
    calls,
    error_info,
    execute_if_busy,
    queue_one,
    until,
    users,
)

pytestmark = pytest.mark.asyncio

SCRIPT = [
    calls(("add", {"a": 1})),
    {"text": "one done"},
    {"text": "reply 2"},
    {"text": "reply 3"},
    {"text": "reply 4"},
    {"text": "reply 5"},
]


async def test_r68_reject_is_the_default_and_an_unknown_mode_is_invalid(h: Harness) -> None:
    spec = agent(SCRIPT)
    first, call = await busy_with_a_tool(h, "rej", spec)
    refused = await execute_if_busy(h, "rej", "two", spec, pb.IF_BUSY_UNSPECIFIED)
    assert error_info(refused.error)[:2] == (grpc.StatusCode.ABORTED, "SESSION_BUSY")
    refused = await execute_if_busy(h, "rej", "two", spec, pb.IF_BUSY_REJECT)
    assert refused.reason == "SESSION_BUSY"
    bad = await execute_if_busy(h, "rej", "two", spec, 42)
    assert error_info(bad.error)[:2] == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_IF_BUSY")
    await h.submit("rej", call.id, "1")
    assert (await first).done.finish_reason == pb.FINISH_REASON_STOP
    assert users(await h.get("rej")) == ["one"]


async def test_r68_a_free_session_runs_an_enqueued_input_at_once(h: Harness) -> None:
    log = await execute_if_busy(h, "free", "hello", agent([{"text": "hi"}]), pb.IF_BUSY_ENQUEUE)
    assert log.error is None and "input.queued" not in log.types
    assert log.done.final_text == "hi"


async def test_r68_r69_enqueued_inputs_run_in_order_after_the_current_run(h: Harness) -> None:
    spec = agent(SCRIPT)
    first, call = await busy_with_a_tool(h, "enq", spec)
    waiting = [
        await queue_one(h, "enq", text, spec, pb.IF_BUSY_ENQUEUE)
        for text in ("two", "three", "four")
    ]
    shown = await h.stub.GetSession(pb.GetSessionRequest(session_id="enq"))
    assert [q.input[0].content for q in shown.queue] == ["two", "three", "four"]
    assert [q.if_busy for q in shown.queue] == [pb.IF_BUSY_ENQUEUE] * 3
    assert all(q.request_id for q in shown.queue)
    assert [q.position for q in shown.queue] == sorted(q.position for q in shown.queue)
    await h.submit("enq", call.id, "1")
    assert (await first).done.final_text == "one done"
    logs = await asyncio.gather(*waiting)
    for log, text in zip(logs, ("reply 2", "reply 3", "reply 4")):
        assert log.error is None, log.error
        assert log.types[0] == "input.queued" and log.types[1] == "run.start"
        assert log.done.final_text == text and log.done.finish_reason == pb.FINISH_REASON_STOP
    # Each caller's queue position when it was queued.
    assert [log.events[0].input_queued.ahead for log in logs] == [0, 1, 2]
    # Each queued run is the one its request id started (R74), in order.
    assert [log.events[1].run_start.request_id for log in logs] == [
        q.request_id for q in shown.queue
    ]
    cp = await h.get("enq")
    assert users(cp) == ["one", "two", "three", "four"]
    assert (await h.stub.GetSession(pb.GetSessionRequest(session_id="enq"))).queue == []
    assert_valid_transcript(cp)


async def test_r69_a_queued_input_is_removed_with_dequeue_input(h: Harness) -> None:
    spec = agent(SCRIPT)
    first, call = await busy_with_a_tool(h, "deq", spec)
    gone = await queue_one(h, "deq", "two", spec, pb.IF_BUSY_ENQUEUE, request_id="r-two")
    kept = await queue_one(h, "deq", "three", spec, pb.IF_BUSY_ENQUEUE, request_id="r-three")
    removed = await h.stub.DequeueInput(
        pb.DequeueInputRequest(session_id="deq", request_id="r-two")
    )
    assert removed.removed is True
    again = await h.stub.DequeueInput(pb.DequeueInputRequest(session_id="deq", request_id="r-two"))
    assert again.removed is False
    log = await gone
    assert error_info(log.error)[:2] == (grpc.StatusCode.ABORTED, "INPUT_DEQUEUED")
    assert error_info(log.error)[2]["request_id"] == "r-two"
    shown = await h.stub.GetSession(pb.GetSessionRequest(session_id="deq"))
    assert [q.request_id for q in shown.queue] == ["r-three"]
    await h.submit("deq", call.id, "1")
    await first
    assert (await kept).done.final_text == "reply 2"
    assert users(await h.get("deq")) == ["one", "three"]
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await h.stub.DequeueInput(pb.DequeueInputRequest(session_id="deq"))
    assert error_info(err.value)[1] == "INVALID_REQUEST_ID"


async def test_r69_r74_a_retried_enqueue_with_its_request_id_queues_once(h: Harness) -> None:
    spec = agent(SCRIPT)
    first, call = await busy_with_a_tool(h, "rid", spec)
    a = await queue_one(h, "rid", "two", spec, pb.IF_BUSY_ENQUEUE, request_id="same")
    b = await queue_one(h, "rid", "two", spec, pb.IF_BUSY_ENQUEUE, request_id="same")
    other = await execute_if_busy(h, "rid", "not two", spec, pb.IF_BUSY_ENQUEUE, request_id="same")
    assert error_info(other.error)[:2] == (grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED")
    shown = await h.stub.GetSession(pb.GetSessionRequest(session_id="rid"))
    assert [q.request_id for q in shown.queue] == ["same"]
    await h.submit("rid", call.id, "1")
    await first
    la, lb = await a, await b
    assert la.done.final_text == lb.done.final_text == "reply 2"
    assert users(await h.get("rid")) == ["one", "two"]
    # Once applied, the same request again replays that run: nothing queued or appended.
    late = await execute_if_busy(h, "rid", "two", spec, pb.IF_BUSY_ENQUEUE, request_id="same")
    assert late.done.final_text == "reply 2" and all(e.replayed for e in late.events)
    assert users(await h.get("rid")) == ["one", "two"]


async def test_r69_a_paused_session_keeps_its_queue_until_resolved(
    h: Harness, daemon: Daemon
) -> None:
    spec = agent([calls(("pay", {"eur": 5})), {"text": "paid"}, {"text": "after"}], ["pay"])
    spec.tools[0].needs_approval = True
    paused = await h.run("pause", "pay it", spec, {})
    approval = paused.of("approval.requested")[0].approval_requested.approval
    later = await queue_one(h, "pause", "and then?", spec, pb.IF_BUSY_ENQUEUE)
    await daemon.service.inputs.sweep()  # what the daemon does every queue_sweep_s
    for t in list(daemon.service.inputs._draining.values()):
        await t
    shown = await h.stub.GetSession(pb.GetSessionRequest(session_id="pause"))
    assert shown.checkpoint.status == pb.CHECKPOINT_STATUS_AWAITING_APPROVAL
    assert [q.input[0].content for q in shown.queue] == ["and then?"]
    assert not later.done()
    resolved = []
    async for resp in h.stub.Resolve(
        pb.ResolveRequest(approval_id=approval.approval_id, approved=True)
    ):
        resolved.append(resp.event)
        if resp.event.type == "tool.call":
            await h.submit("pause", resp.event.tool_call.call.id, '"ok"')
    assert resolved[-1].run_done.final_text == "paid"
    log = await later
    assert log.done.final_text == "after"
    assert users(await h.get("pause")) == ["pay it", "and then?"]


async def test_r69_get_session_shows_an_input_applied_between_its_reads(
    h: Harness, daemon: Daemon, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GetSession reads the checkpoint, then the queue. An input whose run saves it in
    between (a sweep's run, or the next input's run started by the previous run's end)
    was shown in neither: the transcript read before it was applied, the queue after (an
    applied input is not shown). ``luoshod torture`` reported that as a lost queued input
    (seed 14, R69). Here the save is made to land exactly there: the answer must show the
    input, in the transcript or in the queue."""
    spec = agent(SCRIPT)
    first, call = await busy_with_a_tool(h, "between", spec)
    waiting = await queue_one(h, "between", "two", spec, pb.IF_BUSY_ENQUEUE)
    rid = (await h.stub.GetSession(pb.GetSessionRequest(session_id="between"))).queue[0].request_id
    inputs, store = daemon.service.inputs, daemon.service.store
    shown = inputs.shown
    hooked = asyncio.Event()

    async def applied_in_between(sid: str) -> list[pb.QueuedInput]:
        if not hooked.is_set():  # the first queue read: after the checkpoint's
            hooked.set()
            await h.submit("between", call.id, "1")  # the run ends; the queued "two" runs
            for _ in range(2000):
                if await store.find_request(sid, rid) is not None:
                    break  # its save is written: the input is applied
                await asyncio.sleep(0.005)
            else:
                raise AssertionError(f"{rid} was not applied")
        return await shown(sid)

    monkeypatch.setattr(inputs, "shown", applied_in_between)
    got = await h.stub.GetSession(pb.GetSessionRequest(session_id="between"))
    assert hooked.is_set()
    in_transcript = "two" in users(got.checkpoint)
    in_queue = [q.request_id for q in got.queue] == [rid]
    assert in_transcript != in_queue, (users(got.checkpoint), list(got.queue))
    assert (await first).done.final_text == "one done"
    assert (await waiting).done.final_text == "reply 2"
    assert users(await h.get("between")) == ["one", "two"]


async def test_r68_interrupt_cancels_a_pending_tool_call_then_runs_the_new_input(
    h: Harness,
) -> None:
    spec = agent(SCRIPT)
    first, call = await busy_with_a_tool(h, "intr", spec)
    log = await execute_if_busy(h, "intr", "stop, do this instead", spec, pb.IF_BUSY_INTERRUPT)
    aborted = await first
    assert aborted.done.finish_reason == pb.FINISH_REASON_ABORTED
    assert log.error is None, log.error
    assert log.types[0] == "input.queued" and log.done.finish_reason == pb.FINISH_REASON_STOP
    cp = await h.get("intr")
    assert_valid_transcript(cp)  # R23
    roles = [(m.role, m.tool_call_id) for m in cp.messages if m.role != pb.ROLE_SYSTEM]
    assert roles[:4] == [
        (pb.ROLE_USER, ""),
        (pb.ROLE_ASSISTANT, ""),
        (pb.ROLE_TOOL, call.id),
        (pb.ROLE_USER, ""),
    ]
    result = next(m for m in cp.messages if m.role == pb.ROLE_TOOL)
    assert "cancel" in result.content.lower()
    assert users(cp) == ["one", "stop, do this instead"]
    # The late answer to the cancelled call changes nothing (R26).
    assert await h.submit("intr", call.id, "1") == pb.SUBMIT_OUTCOME_DUPLICATE


async def test_r68_rollback_restores_the_checkpoint_from_before_the_interrupted_run(
    h: Harness,
) -> None:
    spec = agent([{"text": "first answer"}, calls(("add", {"a": 1})), {"text": "instead answer"}])
    done = await h.run("rb", "first", spec, {}, business_state={"k": 1})
    assert done.done.final_text == "first answer"
    before = await h.get("rb")
    second, call = await busy_with_a_tool(h, "rb", spec)
    log = await execute_if_busy(
        h, "rb", "instead", spec, pb.IF_BUSY_ROLLBACK, tools={"add": lambda a: 1}
    )
    assert (await second).done.finish_reason == pb.FINISH_REASON_ABORTED
    assert log.error is None, log.error
    cp = await h.get("rb")
    assert users(cp) == ["first", "instead"]  # "one" and its run are gone
    assert_valid_transcript(cp)
    history = await h.stub.History(
        pb.HistoryRequest(session_id="rb", include_checkpoint=True, page_size=100)
    )
    entries = list(reversed(history.entries))  # oldest first
    run_of_one = [e for e in entries if "one" in users(e.checkpoint)]
    assert run_of_one, "History keeps the interrupted run's saves"
    after_it = entries.index(run_of_one[-1]) + 1
    restored = entries[after_it].checkpoint
    assert restored.version == run_of_one[-1].checkpoint.version + 1

    def same(cp: pb.Checkpoint) -> tuple[Any, ...]:
        return (
            list(cp.messages),
            cp.status,
            cp.finish_reason,
            cp.step_index,
            cp.usage,
            cp.business_state_json,
            cp.run_id,
        )

    assert same(restored) == same(before)


async def test_r68_rollback_of_a_first_run_starts_the_session_afresh(h: Harness) -> None:
    spec = agent([calls(("add", {"a": 1})), {"text": "fresh"}])
    first, call = await busy_with_a_tool(h, "rb0", spec)
    log = await execute_if_busy(
        h, "rb0", "instead", spec, pb.IF_BUSY_ROLLBACK, tools={"add": lambda a: 1}
    )
    await first
    assert log.error is None, log.error
    cp = await h.get("rb0")
    assert users(cp) == ["instead"]
    assert_valid_transcript(cp)


async def test_r68_r69_a_rolled_back_first_run_leaves_no_checkpoint_and_the_input_queued(
    h: Harness,
) -> None:
    """From the ROLLBACK of a session's first run (nothing before it: no checkpoint now)
    to the first save of the input's own run, GetSession answers the input queued and no
    checkpoint: not NOT_FOUND, and no checkpoint with an empty transcript. ``luoshod
    torture`` reads that answer as the rollback applied (its check once took the absent
    checkpoint for an empty one, and the rolled-back run's results for lost saves). Here
    the input's run spends 1.5 s in its model call, before that first save."""
    spec = agent([calls(("add", {"a": 1})), {"text": "never"}])
    slow = agent([{"text": "instead answer", "delay_ms": 1500}])
    first, _call = await busy_with_a_tool(h, "rbw", spec)
    redirect = asyncio.create_task(
        execute_if_busy(h, "rbw", "instead", slow, pb.IF_BUSY_ROLLBACK, request_id="rbw-r")
    )
    seen: list[pb.GetSessionResponse] = []

    async def rolled_back() -> bool:
        got = await h.stub.GetSession(pb.GetSessionRequest(session_id="rbw"))
        seen.append(got)
        return not got.HasField("checkpoint")

    await until(rolled_back, timeout=10, what=lambda: seen[-1:])
    assert [q.request_id for q in seen[-1].queue] == ["rbw-r"]
    assert (await first).done.finish_reason == pb.FINISH_REASON_ABORTED
    log = await asyncio.wait_for(redirect, 20)
    assert log.error is None, log.error
    assert log.done is not None and log.done.final_text == "instead answer"
    got = await h.stub.GetSession(pb.GetSessionRequest(session_id="rbw"))
    assert users(got.checkpoint) == ["instead"] and list(got.queue) == []
    assert_valid_transcript(got.checkpoint)


async def test_r74_an_applied_queued_request_id_with_another_body_is_refused(h: Harness) -> None:
    spec = agent(SCRIPT)
    first, call = await busy_with_a_tool(h, "rid2", spec)
    queued = await queue_one(h, "rid2", "two", spec, pb.IF_BUSY_ENQUEUE, request_id="x")
    await h.submit("rid2", call.id, "1")
    await first
    assert (await queued).done.final_text == "reply 2"
    other = await execute_if_busy(
        h, "rid2", "something else", spec, pb.IF_BUSY_ENQUEUE, request_id="x"
    )
    assert error_info(other.error)[:2] == (grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED")


async def test_r74_if_busy_is_part_of_the_request_a_retry_must_repeat(h: Harness) -> None:
    """The same request id with the same input but another ``if_busy`` is another request:
    refused, whichever mode applied it, while the same mode again replays."""
    spec = agent([{"text": "reply 1"}, {"text": "reply 2"}, {"text": "reply 3"}])
    plain = await execute_if_busy(h, "ifb", "hi", spec, pb.IF_BUSY_UNSPECIFIED, request_id="p")
    assert plain.done.final_text == "reply 1"
    for mode in (pb.IF_BUSY_ENQUEUE, pb.IF_BUSY_INTERRUPT, pb.IF_BUSY_ROLLBACK):
        other = await execute_if_busy(h, "ifb", "hi", spec, mode, request_id="p")
        assert error_info(other.error)[:2] == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "REQUEST_ID_REUSED",
        ), mode
    same = await execute_if_busy(
        h, "ifb", "hi", spec, pb.IF_BUSY_REJECT, request_id="p"
    )  # REJECT is the default
    assert same.error is None and all(e.replayed for e in same.events)
    queued = await execute_if_busy(h, "ifb", "again", spec, pb.IF_BUSY_ENQUEUE, request_id="q")
    assert queued.done.final_text == "reply 2"
    for mode in (pb.IF_BUSY_UNSPECIFIED, pb.IF_BUSY_INTERRUPT):
        other = await execute_if_busy(h, "ifb", "again", spec, mode, request_id="q")
        assert error_info(other.error)[:2] == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "REQUEST_ID_REUSED",
        ), mode
    again = await execute_if_busy(h, "ifb", "again", spec, pb.IF_BUSY_ENQUEUE, request_id="q")
    assert again.error is None and all(e.replayed for e in again.events)
    cp = await h.get("ifb")
    assert users(cp) == ["hi", "again"]  # each applied once
