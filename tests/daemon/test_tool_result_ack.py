"""R54 in the service: ``SubmitToolResult`` returns once its result is saved, raises the
save's error, or ``TOOL_CALL_NOT_PENDING`` when the run ended without recording it. The
submitter waits on the one acknowledgement future (no task of its own a result, issue 16):
the run registry cancels the acknowledgements a run leaves unsettled when it ends."""

from __future__ import annotations

import asyncio

import pytest

from luoshod.engine.engine import ToolOutcome
from luoshod.errors import StoreError, ToolCallNotPending
from luoshod.server.runs import Delivery, RunRegistry
from luoshod.server.service import _durable


async def submitted(
    runs: RunRegistry, sid: str
) -> tuple[object, asyncio.Future[None], asyncio.Task[None]]:
    run = await runs.begin(sid)
    run.expect("c1")
    saved: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    assert run.deliver("c1", ToolOutcome("1", False, saved)) is Delivery.ACCEPTED
    waiter = asyncio.create_task(_durable(run, saved, sid, "c1"))
    await asyncio.sleep(0.01)
    assert not waiter.done()  # waits for the save
    return run, saved, waiter


async def test_the_submitter_returns_once_the_save_that_holds_its_result_is_done() -> None:
    runs = RunRegistry()
    run, saved, waiter = await submitted(runs, "s1")
    saved.set_result(None)
    await asyncio.wait_for(waiter, 5)
    runs.end(run)  # nothing left to cut off
    assert saved.done() and not saved.cancelled()


async def test_the_submitter_gets_the_saves_error() -> None:
    runs = RunRegistry()
    run, saved, waiter = await submitted(runs, "s2")
    saved.set_exception(StoreError("disk gone", operation="save"))
    with pytest.raises(StoreError, match="disk gone"):
        await asyncio.wait_for(waiter, 5)
    runs.end(run)


async def test_a_run_that_ends_without_recording_the_result_tells_the_submitter_so() -> None:
    runs = RunRegistry()
    run, saved, waiter = await submitted(runs, "s3")
    runs.end(run)
    with pytest.raises(
        ToolCallNotPending, match="stopped before the result of tool call 'c1' was saved"
    ):
        await asyncio.wait_for(waiter, 5)
    # A result handed to a run that has already ended is cut off at once.
    late: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    run.hold_ack(late)
    assert late.cancelled()
