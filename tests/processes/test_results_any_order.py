"""R76: tool results in any order. A result submitted before an earlier call of its turn
has one is saved at once, outside the transcript, and answered ``ACCEPTED``; it enters
the transcript when the earlier calls have theirs (R2 keeps call order); a daemon killed
after that ``ACCEPTED`` never hands the call out again."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.daemon_process import DaemonProcess
from tests.support.harness import Harness, agent, assert_valid_transcript, calls

pytestmark = pytest.mark.asyncio

#: One turn of three calls run at once, then a final answer.
SPEC = agent(
    [calls(("add", {"a": 1}), ("add", {"a": 2}), ("add", {"a": 3})), {"text": "done"}],
    tool_concurrency=3,
)


def results(cp: pb.Checkpoint) -> list[str]:
    return [m.tool_call_id for m in cp.messages if m.role == pb.ROLE_TOOL]


async def handed_out(
    h: Harness, sid: str, n: int
) -> tuple[asyncio.Task[object], list[pb.ToolCall]]:
    """Start ``sid``'s run and wait until its first ``n`` tool calls are handed out."""
    got: list[pb.ToolCall] = []
    all_out = asyncio.Event()

    def collect(e: pb.Event) -> None:
        if e.type == "tool.call":
            got.append(e.tool_call.call)
            if len(got) == n:
                all_out.set()

    run = asyncio.create_task(h.run(sid, "go", SPEC, on_event=collect))
    await asyncio.wait_for(all_out.wait(), 15)
    return run, got


async def test_r76_results_submitted_in_reverse_order_are_each_accepted_at_once(h: Harness) -> None:
    run, got = await handed_out(h, "any-order", 3)
    first, second, third = got
    # The last call's result, with the first two unanswered: durable and answered at once
    # (before R76 it waited for the other two until its deadline).
    outcome = await asyncio.wait_for(h.submit("any-order", third.id, "3"), 5)
    assert outcome == pb.SUBMIT_OUTCOME_ACCEPTED
    cp = await h.get("any-order")
    assert results(cp) == []  # saved, but not in the transcript ahead of calls 1 and 2 (R2)
    assert [(m.tool_call_id, m.content) for m in cp.early_results] == [(third.id, "3")]
    assert await h.submit("any-order", third.id, "3") == pb.SUBMIT_OUTCOME_DUPLICATE
    assert (
        await asyncio.wait_for(h.submit("any-order", second.id, "2"), 5)
        == pb.SUBMIT_OUTCOME_ACCEPTED
    )
    assert (
        await asyncio.wait_for(h.submit("any-order", first.id, "1"), 5)
        == pb.SUBMIT_OUTCOME_ACCEPTED
    )
    log = await asyncio.wait_for(run, 15)
    assert log.done is not None and log.done.status == pb.CHECKPOINT_STATUS_FINISHED
    cp = await h.get("any-order")
    assert_valid_transcript(cp)
    assert not cp.early_results  # moved into the transcript, in call order
    assert results(cp) == [first.id, second.id, third.id]
    assert [m.content for m in cp.messages if m.role == pb.ROLE_TOOL] == ["1", "2", "3"]
    # Each result is announced once, in call order.
    assert [e.tool_result.tool_call_id for e in log.events if e.type == "tool.result"] == [
        first.id,
        second.id,
        third.id,
    ]


async def test_r76_one_at_a_time_in_completion_order_never_waits_on_another_call(
    h: Harness,
) -> None:
    """A client that submits each result as its tool finishes (here 2, 3, 1), waiting for
    each answer before the next, is never held up by a call it has not answered yet."""
    run, got = await handed_out(h, "completion-order", 3)
    for c in (got[1], got[2], got[0]):
        value = json.loads(c.arguments_json)["a"]
        assert await asyncio.wait_for(h.submit("completion-order", c.id, str(value)), 5) == (
            pb.SUBMIT_OUTCOME_ACCEPTED
        )
    log = await asyncio.wait_for(run, 15)
    assert log.done is not None and log.done.status == pb.CHECKPOINT_STATUS_FINISHED
    assert results(await h.get("completion-order")) == [c.id for c in got]


@pytest.mark.parametrize("store", ["sqlite", "lmdb"])
async def test_r76_a_daemon_killed_after_accepted_never_asks_for_that_call_again(
    tmp_path: Path, store: str
) -> None:
    url = f"sqlite:///{tmp_path}/l.db" if store == "sqlite" else f"lmdb://{tmp_path}/lmdb"
    await killed_after_an_early_result(tmp_path, url)


async def test_r76_a_daemon_killed_after_accepted_never_asks_again_on_postgres(
    tmp_path: Path, postgres_url: str
) -> None:
    await killed_after_an_early_result(tmp_path, postgres_url)


async def killed_after_an_early_result(tmp_path: Path, url: str) -> None:
    log_file = tmp_path / "calls.jsonl"
    args = ("--store", url, "--scripted-call-log", str(log_file), "--lease-owner", "d1")
    sid = f"early-kill-{tmp_path.name[-12:]}"
    asked: Counter[str] = Counter()
    first = DaemonProcess(*args).start()
    try:
        h = Harness(first.address, call_log=log_file)
        run, got = await handed_out(h, sid, 3)
        for c in got:
            asked[c.id] += 1
        assert (
            await asyncio.wait_for(h.submit(sid, got[2].id, "3"), 5) == pb.SUBMIT_OUTCOME_ACCEPTED
        )
        first.kill9()
        await asyncio.wait_for(run, 15)
        await h.close()
    finally:
        first.stop()
    second = DaemonProcess(*args).start()
    try:
        h = Harness(second.address, call_log=log_file)

        async def answer(e: pb.Event) -> None:
            if e.type == "tool.call":
                c = e.tool_call.call
                asked[c.id] += 1
                await h.submit(sid, c.id, str(json.loads(c.arguments_json)["a"]))

        log = await asyncio.wait_for(h.run(sid, resume=True, agent=SPEC, on_event=answer), 20)
        assert log.done is not None and log.done.status == pb.CHECKPOINT_STATUS_FINISHED, log.error
        # The early result's call was handed out once, before the kill; the others twice.
        assert asked == {got[0].id: 2, got[1].id: 2, got[2].id: 1}
        cp = await h.get(sid)
        assert_valid_transcript(cp)
        assert results(cp) == [c.id for c in got]
        assert [m.content for m in cp.messages if m.role == pb.ROLE_TOOL] == ["1", "2", "3"]
        assert h.model_calls(sid) == 2  # the turn was not generated again (R22)
        await h.close()
    finally:
        second.stop()
