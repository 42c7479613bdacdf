"""R74's applied request ids travel in the checkpoint's header: every driver must give
them back as saved (by ``load``, and through ``import_session``, which ``store copy``
uses), a full record of them included; history entries keep none."""

from __future__ import annotations

import copy
from dataclasses import replace

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
from luoshod.store import Capability, Store

from .backend import Backend
from .helpers import rich_checkpoint

#: The longest request id the daemon accepts (``server.validation.MAX_REQUEST_ID``).
LONGEST_ID = 128


def applied(i: int, *, ended: bool = False, id_length: int = 12) -> AppliedRequest:
    end = (
        RunEnd(40 + i, 1_700_000_100.5 + i, FinishReason.STOP, Status.FINISHED, 2,
               Usage(1, 2, 3, 1, 0.25), "", 6, 1)
        if ended
        else None
    )
    rid = f"req-{i:06d}-é".ljust(id_length, "x")
    return AppliedRequest(rid, f"{i:032x}", f"run-{i}", 10 * i + 1, end)


def with_requests(cp: Checkpoint, records: list[AppliedRequest]) -> Checkpoint:
    return replace(cp, request_ids=records)


async def test_r74_request_ids_round_trip_with_the_checkpoint(backend: Backend, driver: Store) -> None:
    first = with_requests(rich_checkpoint(), [applied(1, ended=True), applied(2)])
    await driver.save(copy.deepcopy(first), stored_messages=0)
    assert (await driver.load("rich")).request_ids == first.request_ids
    # The save that ends the run marks its request ended and records a new one.
    second = with_requests(
        replace(first, version=2), [applied(1, ended=True), applied(2, ended=True), applied(3)]
    )
    await driver.save(copy.deepcopy(second), stored_messages=len(first.messages))
    assert await driver.load("rich") == second
    if Capability.HISTORY in backend.capabilities:
        # History entries keep none: only the latest checkpoint needs them, and a history
        # entry must cost O(new messages) however many requests the session applied.
        entries = await driver.history("rich")
        assert [e.checkpoint.request_ids for e in entries] == [[], []]
        assert [e.checkpoint for e in entries] == [
            replace(second, request_ids=[]), replace(first, request_ids=[])
        ]


async def test_r74_a_full_record_of_the_longest_request_ids_round_trips(driver: Store) -> None:
    """The engine keeps up to ``DEFAULT_REQUEST_ID_LIMIT`` records a session: a driver
    that bounds a header's size below that loses them."""
    records = [applied(i, ended=i % 2 == 0, id_length=LONGEST_ID) for i in range(DEFAULT_REQUEST_ID_LIMIT)]
    cp = with_requests(rich_checkpoint(), records)
    await driver.save(copy.deepcopy(cp), stored_messages=0)
    assert await driver.load("rich") == cp
    assert len({r.id for r in (await driver.load("rich")).request_ids}) == DEFAULT_REQUEST_ID_LIMIT


async def test_r74_request_ids_are_copied_by_import(backend: Backend, driver: Store) -> None:
    target = with_requests(rich_checkpoint("copy", version=3), [applied(7, ended=True), applied(8)])
    entry = HistoryEntry(target.step_index, target.updated_at, target.status, copy.deepcopy(target))
    await driver.import_session("copy", latest=copy.deepcopy(target), history=[entry])
    assert (await driver.load("copy")).request_ids == target.request_ids
    if Capability.HISTORY in backend.capabilities:
        [kept] = await driver.history("copy")
        assert kept.checkpoint == replace(target, request_ids=[])
