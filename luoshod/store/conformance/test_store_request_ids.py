"""R74's applied request records: kept by the store beside the session's checkpoint, not
in its header. ``save(requests=...)`` upserts them by id in the save's own transaction (a
record whose run ended is updated in place) and keeps the session's newest
``request_limit``, in the order first written; ``find_request`` and ``requests`` read
them; ``delete`` removes them, ``import_session`` replaces them; a refused save writes
none. Every driver, whatever it declares."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Unpack

import pytest

from luoshod.domain import (
    DEFAULT_REQUEST_ID_LIMIT,
    AppliedRequest,
    Checkpoint,
    FinishReason,
    HistoryEntry,
    RunEnd,
    Status,
    Usage,
)
from luoshod.errors import LeaseLost
from luoshod.store import Capability, SaveOptions, Store

from .backend import Backend
from .helpers import message, rich_checkpoint

#: The longest request id the daemon accepts (``server.validation.MAX_REQUEST_ID``).
LONGEST_ID = 128


def applied(i: int, *, ended: bool = False, id_length: int = 12) -> AppliedRequest:
    end = (
        RunEnd(
            40 + i,
            1_700_000_100.5 + i,
            FinishReason.STOP,
            Status.FINISHED,
            2,
            Usage(1, 2, 3, 1, 0.25),
            "",
            6,
            1,
        )
        if ended
        else None
    )
    rid = f"req-{i:06d}-é".ljust(id_length, "x")
    return AppliedRequest(rid, f"{i:032x}", f"run-{i}", 10 * i + 1, end)


def next_save(cp: Checkpoint) -> Checkpoint:
    """``cp`` one save later, one message longer."""
    return replace(cp, version=cp.version + 1, messages=[*cp.messages, message(len(cp.messages))])


async def save(driver: Store, cp: Checkpoint, stored: int, **kw: Unpack[SaveOptions]) -> None:
    await driver.save(copy.deepcopy(cp), stored_messages=stored, **kw)


async def test_r74_request_records_round_trip_beside_the_checkpoint(
    backend: Backend, driver: Store
) -> None:
    first = rich_checkpoint()
    await save(driver, first, 0, requests=[applied(1, ended=True), applied(2)])
    assert await driver.find_request("rich", applied(1).id) == applied(1, ended=True)
    assert await driver.find_request("rich", applied(2).id) == applied(2)
    assert await driver.find_request("rich", applied(3).id) is None
    assert await driver.find_request("other", applied(1).id) is None
    assert await driver.requests("rich") == [applied(1, ended=True), applied(2)]
    assert await driver.requests("other") == []
    # The checkpoint is as saved (its open records of the run included), and a save
    # without records leaves the session's records as they are.
    assert await driver.load("rich") == first
    second = next_save(first)
    await save(driver, second, len(first.messages))
    assert await driver.load("rich") == second
    assert await driver.requests("rich") == [applied(1, ended=True), applied(2)]
    if Capability.HISTORY in backend.capabilities:
        assert [e.checkpoint for e in await driver.history("rich")] == [second, first]


async def test_r74_a_record_whose_run_ended_is_updated_in_place(driver: Store) -> None:
    first = rich_checkpoint()
    await save(driver, first, 0, requests=[applied(1), applied(2)])
    second = next_save(first)
    # The save that ends the run marks its request ended and records a new one.
    await save(driver, second, len(first.messages), requests=[applied(2, ended=True), applied(3)])
    assert await driver.find_request("rich", applied(2).id) == applied(2, ended=True)
    assert await driver.requests("rich") == [applied(1), applied(2, ended=True), applied(3)]


async def test_r74_a_session_keeps_its_newest_request_limit_records(driver: Store) -> None:
    cp = rich_checkpoint()
    await save(driver, cp, 0, requests=[applied(1), applied(2)], request_limit=3)
    for records in ([applied(3)], [applied(1, ended=True), applied(4)], [applied(5), applied(6)]):
        stored, cp = len(cp.messages), next_save(cp)
        await save(driver, cp, stored, requests=records, request_limit=3)
    # 1 was updated in place (it kept its place, first), so it went first.
    assert await driver.requests("rich") == [applied(4), applied(5), applied(6)]
    assert await driver.find_request("rich", applied(1).id) is None
    # Another session's records are its own.
    await save(driver, rich_checkpoint("two"), 0, requests=[applied(1)], request_limit=3)
    assert await driver.requests("two") == [applied(1)]
    assert await driver.requests("rich") == [applied(4), applied(5), applied(6)]


async def test_r74_a_full_record_of_the_longest_request_ids_round_trips(driver: Store) -> None:
    """The engine keeps up to ``DEFAULT_REQUEST_ID_LIMIT`` records a session, ids of up to
    128 characters: a driver that bounds their size below that loses them."""
    records = [
        applied(i, ended=i % 2 == 0, id_length=LONGEST_ID) for i in range(DEFAULT_REQUEST_ID_LIMIT)
    ]
    cp = rich_checkpoint()
    await save(driver, cp, 0, requests=records)
    assert await driver.requests("rich") == records
    newest = applied(DEFAULT_REQUEST_ID_LIMIT, id_length=LONGEST_ID)
    await save(driver, next_save(cp), len(cp.messages), requests=[newest])
    assert await driver.requests("rich") == [*records[1:], newest]
    assert await driver.find_request("rich", records[0].id) is None
    assert await driver.find_request("rich", records[1].id) == records[1]


async def test_r74_a_refused_save_writes_no_request_record(backend: Backend, driver: Store) -> None:
    cp = rich_checkpoint()
    await save(driver, cp, 0, requests=[applied(1)])
    with pytest.raises(LeaseLost):  # R7: not the next version
        await save(driver, cp, len(cp.messages), requests=[applied(1, ended=True), applied(2)])
    if Capability.LEASES in backend.capabilities:
        stale = await driver.acquire_lease("rich", owner="a", ttl=60)
        await driver.release_lease(stale)
        await driver.acquire_lease("rich", owner="b", ttl=60)
        with pytest.raises(LeaseLost):  # a stale fencing token
            await save(driver, next_save(cp), len(cp.messages), requests=[applied(3)], lease=stale)
    assert await driver.requests("rich") == [applied(1)]
    assert await driver.find_request("rich", applied(2).id) is None


@pytest.mark.parametrize("keep_history", [False, True])
async def test_r74_delete_removes_the_request_records(
    backend: Backend, driver: Store, keep_history: bool
) -> None:
    cp = rich_checkpoint()
    await save(driver, cp, 0, requests=[applied(1), applied(2)])
    assert await driver.delete("rich", keep_history=keep_history)
    assert await driver.requests("rich") == []
    assert await driver.find_request("rich", applied(1).id) is None
    # The session made again starts with none: its records are numbered afresh.
    await save(driver, replace(cp, version=1), 0, requests=[applied(3)], request_limit=2)
    await save(
        driver, replace(cp, version=2), len(cp.messages), requests=[applied(4)], request_limit=2
    )
    assert await driver.requests("rich") == [applied(3), applied(4)]


async def test_r74_request_records_are_copied_by_import(backend: Backend, driver: Store) -> None:
    target = rich_checkpoint("copy", version=3)
    entry = HistoryEntry(target.step_index, target.updated_at, target.status, copy.deepcopy(target))
    await save(driver, replace(target, version=1), 0, requests=[applied(9)])
    records = [applied(7, ended=True), applied(8)]
    await driver.import_session(
        "copy", latest=copy.deepcopy(target), history=[entry], requests=records
    )
    assert await driver.requests("copy") == records  # replaced, in the order given
    assert await driver.find_request("copy", applied(9).id) is None
    assert await driver.load("copy") == target
    if Capability.HISTORY in backend.capabilities:
        [kept] = await driver.history("copy")
        assert kept.checkpoint == target
    # The next save goes on from them.
    await save(
        driver, next_save(target), len(target.messages), requests=[applied(10)], request_limit=2
    )
    assert await driver.requests("copy") == [applied(8), applied(10)]
    # Records need a checkpoint, each id once.
    with pytest.raises(ValueError):
        await driver.import_session("none", latest=None, history=[], requests=[applied(1)])
    with pytest.raises(ValueError):
        await driver.import_session(
            "twice", latest=rich_checkpoint("twice"), history=[], requests=[applied(1), applied(1)]
        )
