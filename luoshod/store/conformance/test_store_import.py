"""Enumerating and importing sessions (``session_ids``, ``import_session``): what
``luoshod store copy`` is built on, for every driver."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest

from luoshod.domain import EventPage, HistoryEntry, Status, StoredEvent
from luoshod.errors import ApprovalNotFound
from luoshod.store import Capability, Store

from .backend import Backend
from .helpers import SessionWriter, approval, event_range, rich_checkpoint


def entries_of(w: SessionWriter) -> list[HistoryEntry]:
    """The history of ``w``'s saves, oldest first, as ``import_session`` takes it."""
    return [HistoryEntry(cp.step_index, cp.updated_at, cp.status, cp) for cp in w.snapshots]


async def all_ids(store: Store, page_size: int) -> list[str]:
    ids, token = [], ""
    while True:
        page, token = await store.session_ids(page_size=page_size, page_token=token)
        ids += page
        if not token:
            return ids


async def test_session_ids_lists_every_session_in_order(backend: Backend, driver: Store) -> None:
    for sid in ("c", "a", "e", "b", "d"):
        await SessionWriter(driver, sid).save()
    await driver.delete("b")  # gone entirely
    await driver.delete("d", keep_history=True)  # a history and no checkpoint
    expected = ["a", "c", "e"]
    if Capability.HISTORY in backend.capabilities:
        expected = ["a", "c", "d", "e"]
    for page_size in (1, 2, 10):
        assert await all_ids(driver, page_size) == expected


async def test_session_ids_rejects_bad_paging(driver: Store) -> None:
    with pytest.raises(ValueError, match="page_size"):
        await driver.session_ids(page_size=0, page_token="")
    with pytest.raises(ValueError, match="page token"):
        await driver.session_ids(page_size=1, page_token="a")


async def test_import_writes_checkpoint_and_history_verbatim(
    backend: Backend, driver: Store
) -> None:
    w = SessionWriter(driver, "src")
    for status in (Status.IN_PROGRESS, Status.AWAITING_APPROVAL, Status.FINISHED):
        await w.save(add=2, status=status)
    w.rewrite(keep=3, tag="new")  # entries over two message logs
    await w.save(add=1)
    target = rich_checkpoint("copy", version=9)
    history = [
        HistoryEntry(e.step, e.saved_at, e.status, replace(e.checkpoint, session_id="copy"))
        for e in entries_of(w)
    ] + [HistoryEntry(target.step_index, target.updated_at, target.status, target)]
    await driver.import_session("copy", latest=copy.deepcopy(target), history=history)
    assert await driver.load("copy") == target
    if Capability.HISTORY in backend.capabilities:
        assert await driver.history("copy") == history[::-1]
    # It continues like a saved session: the next save is version 10, of new messages only.
    nxt = replace(target, messages=target.messages + w.messages[:1], version=10)
    await driver.save(nxt, stored_messages=len(target.messages))
    assert await driver.load("copy") == nxt


async def test_import_replaces_what_the_session_had(backend: Backend, driver: Store) -> None:
    old = SessionWriter(driver, "s", tag="old")
    for _ in range(3):
        await old.save(add=2)
    snapshots = [rich_checkpoint("s", version=v) for v in (4, 5)]
    history = [HistoryEntry(cp.step_index, cp.updated_at, cp.status, cp) for cp in snapshots]
    await driver.import_session("s", latest=snapshots[-1], history=history)
    assert await driver.load("s") == snapshots[-1]
    if Capability.HISTORY in backend.capabilities:
        assert await driver.history("s") == history[::-1]
    assert await all_ids(driver, 10) == ["s"]


async def test_import_of_a_history_without_checkpoint(backend: Backend, driver: Store) -> None:
    w = SessionWriter(driver, "s")
    for _ in range(3):
        await w.save(add=2)
    await driver.delete("s")
    await driver.import_session("s", latest=None, history=entries_of(w))
    assert await driver.load("s") is None
    if Capability.HISTORY in backend.capabilities:
        assert await driver.history("s") == entries_of(w)[::-1]
        assert await all_ids(driver, 10) == ["s"]
    # Importing nothing removes the session.
    await driver.import_session("s", latest=None, history=[])
    assert await all_ids(driver, 10) == []


async def test_import_keeps_the_newest_history_limit_entries(backend: Backend) -> None:
    backend.require(Capability.HISTORY)
    source = await backend.open()
    w = SessionWriter(source, "s")
    for _ in range(6):
        await w.save(add=1)
    store = await backend.open(history_limit=4)
    await store.import_session("s", latest=w.snapshots[-1], history=entries_of(w))
    assert await store.history("s") == entries_of(w)[:-5:-1]
    # Fewer than the limit: all of them.
    await store.import_session("s", latest=None, history=entries_of(w)[:3])
    assert await store.history("s") == entries_of(w)[2::-1]


async def test_import_refuses_entries_that_disagree_with_their_checkpoint(
    driver: Store,
) -> None:
    cp = rich_checkpoint("s")
    for bad in (
        HistoryEntry(cp.step_index + 1, cp.updated_at, cp.status, cp),
        HistoryEntry(cp.step_index, cp.updated_at + 1, cp.status, cp),
        HistoryEntry(cp.step_index, cp.updated_at, Status.FINISHED, cp),
    ):
        with pytest.raises(ValueError, match="differs"):
            await driver.import_session("s", latest=cp, history=[bad])
    with pytest.raises(ValueError, match="imported into"):
        await driver.import_session("other", latest=cp, history=[])
    assert await driver.load("s") is None


# -- approvals and event logs --------------------------------------------------------------


async def test_import_writes_approvals_and_events_verbatim(backend: Backend, driver: Store) -> None:
    backend.require(Capability.APPROVALS)
    backend.require(Capability.EVENT_LOG)
    w = SessionWriter(driver, "src")
    for _ in range(2):
        await w.save(add=2)
    target = replace(rich_checkpoint("copy", version=7), approval_id="appr-b")
    pending = [approval("appr-a", "copy"), approval("appr-b", "copy", step=3)]
    logged = event_range(3, 9)
    await driver.import_session("copy", latest=target, history=[], approvals=pending, events=logged)
    assert await driver.load("copy") == target
    assert await driver.get_approval("appr-b") == pending[1]
    page, _ = await driver.list_approvals(session_id="copy", page_size=10, page_token="")
    assert page == pending
    assert await driver.read_events("copy", after_seq=0, limit=100) == EventPage(logged, 3, 9)
    # It continues like a saved session: claimed once, its log appended to and pruned.
    nxt = replace(target, version=8, approval_id="")
    await driver.save(
        nxt, stored_messages=len(target.messages), claim="appr-b", events=event_range(10, 10)
    )
    with pytest.raises(ApprovalNotFound):
        await driver.save(
            replace(nxt, version=9), stored_messages=len(target.messages), claim="appr-b"
        )
    page, _ = await driver.list_approvals(session_id=None, page_size=10, page_token="")
    assert page == pending[:1]
    assert await driver.read_events("copy", after_seq=8, limit=100) == EventPage(
        event_range(9, 10), 3, 10
    )


async def test_import_replaces_the_approvals_and_event_log(backend: Backend, driver: Store) -> None:
    backend.require(Capability.APPROVALS)
    backend.require(Capability.EVENT_LOG)
    w = SessionWriter(driver, "s")
    await w.save(approval=approval("old", "s"), events=event_range(1, 5, "old"))
    other = approval("other", "t")
    await SessionWriter(driver, "t").save(approval=other, events=event_range(1, 2, "t"))
    latest = rich_checkpoint("s", version=4)
    await driver.import_session(
        "s",
        latest=latest,
        history=[],
        approvals=[approval("new", "s")],
        events=event_range(7, 8, "new"),
    )
    assert await driver.get_approval("old") is None
    page, _ = await driver.list_approvals(session_id=None, page_size=10, page_token="")
    assert page == [approval("new", "s"), other]
    assert await driver.read_events("s", after_seq=0, limit=10) == EventPage(
        event_range(7, 8, "new"), 7, 8
    )
    assert await driver.read_events("t", after_seq=0, limit=10) == EventPage(
        event_range(1, 2, "t"), 1, 2
    )
    # Importing none removes them (a checkpoint alone, as before the contract had them).
    await driver.import_session("s", latest=latest, history=[])
    page, _ = await driver.list_approvals(session_id="s", page_size=10, page_token="")
    assert page == []
    assert await driver.read_events("s", after_seq=0, limit=10) == EventPage([], 0, 0)
    # An approval id pending for another session moves with the import.
    moved = replace(other, session_id="s")
    await driver.import_session("s", latest=latest, history=[], approvals=[moved])
    page, _ = await driver.list_approvals(session_id="t", page_size=10, page_token="")
    assert page == []
    page, _ = await driver.list_approvals(session_id="s", page_size=10, page_token="")
    assert page == [moved]


async def test_import_of_only_an_event_log(backend: Backend, driver: Store) -> None:
    backend.require(Capability.EVENT_LOG)
    await driver.import_session("s", latest=None, history=[], events=event_range(1, 3))
    assert await driver.load("s") is None
    assert await driver.read_events("s", after_seq=0, limit=10) == EventPage(
        event_range(1, 3), 1, 3
    )
    assert await all_ids(driver, 10) == ["s"]
    await driver.import_session("s", latest=None, history=[])
    assert await driver.read_events("s", after_seq=0, limit=10) == EventPage([], 0, 0)
    assert await all_ids(driver, 10) == []


async def test_import_keeps_the_newest_event_log_limit_events(backend: Backend) -> None:
    backend.require(Capability.EVENT_LOG)
    store = await backend.open(event_log_limit=4)
    await store.import_session("s", latest=None, history=[], events=event_range(1, 10))
    assert await store.read_events("s", after_seq=0, limit=100) == EventPage(
        event_range(7, 10), 7, 10
    )
    await store.append_events("s", event_range(11, 11))  # pruning counts the imported ones
    assert await store.read_events("s", after_seq=0, limit=100) == EventPage(
        event_range(8, 11), 8, 11
    )


@pytest.mark.parametrize(
    "case",
    [
        "approval-of-another-session",
        "approval-twice",
        "approval-without-checkpoint",
        "events-out-of-order",
        "event-seq-zero",
    ],
)
async def test_import_refuses_approvals_and_events_that_do_not_fit(
    backend: Backend, driver: Store, case: str
) -> None:
    backend.require(Capability.APPROVALS)
    backend.require(Capability.EVENT_LOG)
    cp = rich_checkpoint("s")
    cases: dict[str, dict[str, Any]] = {
        "approval-of-another-session": {"approvals": [approval("a", "t")]},
        "approval-twice": {"approvals": [approval("a", "s"), approval("a", "s")]},
        "approval-without-checkpoint": {"latest": None, "approvals": [approval("a", "s")]},
        "events-out-of-order": {"events": [StoredEvent(2, b""), StoredEvent(2, b"")]},
        "event-seq-zero": {"events": [StoredEvent(0, b"")]},
    }
    args = cases[case]
    with pytest.raises(ValueError):
        await driver.import_session("s", **{"latest": cp, "history": [], **args})
    assert await driver.load("s") is None
    assert await driver.get_approval("a") is None
    assert await driver.read_events("s", after_seq=0, limit=10) == EventPage([], 0, 0)
