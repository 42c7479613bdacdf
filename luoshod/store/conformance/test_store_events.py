"""The event log (``save(events=)``, ``append_events``, ``read_events``), one test per rule,
for every driver that declares EVENT_LOG."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
import pytest_asyncio

from luoshod.domain import EventPage, StoredEvent
from luoshod.errors import LeaseLost
from luoshod.store import Capability, Store

from .backend import Backend
from .helpers import SessionWriter, event_range, message


@pytest_asyncio.fixture
async def log_driver(backend: Backend) -> Store:
    backend.require(Capability.EVENT_LOG)
    return await backend.open()


async def read_all(store: Store, session_id: str) -> EventPage:
    """One read of the whole kept log."""
    return await store.read_events(session_id, after_seq=0, limit=10_000)


async def all_session_ids(store: Store) -> list[str]:
    ids, token = [], ""
    while True:
        page, token = await store.session_ids(page_size=100, page_token=token)
        ids += page
        if not token:
            return ids


async def test_events_saved_with_a_checkpoint_are_read_in_order(log_driver: Store) -> None:
    w = SessionWriter(log_driver, "s")
    await w.save(events=event_range(1, 3))
    await w.save(events=event_range(4, 4))
    await w.save()  # a save without events leaves the log alone
    await w.save(events=event_range(5, 7))
    other = SessionWriter(log_driver, "t")
    await other.save(events=event_range(1, 2, "t"))
    assert await read_all(log_driver, "s") == EventPage(event_range(1, 7), 1, 7)
    assert await read_all(log_driver, "t") == EventPage(event_range(1, 2, "t"), 1, 2)


async def test_append_events_continues_the_log_with_or_without_a_checkpoint(
    log_driver: Store,
) -> None:
    w = SessionWriter(log_driver, "s")
    await w.save(events=event_range(1, 2))
    await log_driver.append_events("s", event_range(3, 5))
    await w.save(events=event_range(6, 6))
    await log_driver.append_events("s", event_range(7, 7))
    assert await read_all(log_driver, "s") == EventPage(event_range(1, 7), 1, 7)
    assert await log_driver.load("s") == w.snapshots[-1]  # appends leave the checkpoint be
    # A session with an event log and no checkpoint: it has events, nothing to load.
    await log_driver.append_events("only-events", event_range(1, 3, "o"))
    assert await read_all(log_driver, "only-events") == EventPage(event_range(1, 3, "o"), 1, 3)
    assert await log_driver.load("only-events") is None
    page, _ = await log_driver.list_sessions(status=None, page_size=10, page_token="")
    assert [s.session_id for s in page] == ["s"]
    # Appending nothing changes nothing, and makes no session.
    await log_driver.append_events("s", [])
    await log_driver.append_events("nobody", [])
    assert await read_all(log_driver, "s") == EventPage(event_range(1, 7), 1, 7)
    assert await read_all(log_driver, "nobody") == EventPage([], 0, 0)


async def test_session_ids_lists_a_session_that_has_only_an_event_log(
    log_driver: Store,
) -> None:
    await SessionWriter(log_driver, "b").save()
    await log_driver.append_events("a", event_range(1, 1))
    await log_driver.append_events("c", event_range(1, 1))
    assert await all_session_ids(log_driver) == ["a", "b", "c"]
    for page_size in (1, 2):
        page, token = await log_driver.session_ids(page_size=page_size, page_token="")
        assert page == ["a", "b"][:page_size] and token


async def test_read_events_pages_by_after_seq_and_limit(log_driver: Store) -> None:
    await log_driver.append_events("s", event_range(1, 10))
    # One event at a time, as far as the log goes, and then nothing.
    seen, after = [], 0
    while True:
        page = await log_driver.read_events("s", after_seq=after, limit=1)
        assert (page.first_kept, page.last) == (1, 10)
        if not page.events:
            break
        assert len(page.events) == 1
        seen += page.events
        after = page.events[-1].seq
    assert seen == event_range(1, 10)
    assert await log_driver.read_events("s", after_seq=4, limit=3) == EventPage(
        event_range(5, 7), 1, 10
    )
    assert await log_driver.read_events("s", after_seq=8, limit=100) == EventPage(
        event_range(9, 10), 1, 10
    )
    assert await log_driver.read_events("s", after_seq=-5, limit=100) == EventPage(
        event_range(1, 10), 1, 10
    )
    # Asking past the end reads only where the log begins and ends, however far past.
    for after_seq in (10, 11, 2**62, 2**63, 2**64, 2**80):
        assert await log_driver.read_events("s", after_seq=after_seq, limit=1) == EventPage(
            [], 1, 10
        ), after_seq
    assert await log_driver.read_events("s", after_seq=0, limit=0) == EventPage([], 1, 10)
    assert await log_driver.read_events("s", after_seq=0, limit=2**64) == EventPage(
        event_range(1, 10), 1, 10
    )


async def test_read_events_of_an_unknown_session_is_empty(log_driver: Store) -> None:
    assert await read_all(log_driver, "nobody") == EventPage([], 0, 0)
    assert await log_driver.read_events("nobody", after_seq=2**62, limit=1) == EventPage([], 0, 0)
    await SessionWriter(log_driver, "no-events").save()
    assert await read_all(log_driver, "no-events") == EventPage([], 0, 0)


async def test_events_beyond_event_log_limit_are_pruned_oldest_first(
    backend: Backend,
) -> None:
    backend.require(Capability.EVENT_LOG)
    store = await backend.open(event_log_limit=5)
    w = SessionWriter(store, "s")
    await w.save(events=event_range(1, 3))
    await store.append_events("s", event_range(4, 6))
    assert await read_all(store, "s") == EventPage(event_range(2, 6), 2, 6)
    await w.save(events=event_range(7, 15))  # more than the limit at once
    assert await read_all(store, "s") == EventPage(event_range(11, 15), 11, 15)
    await store.append_events("s", event_range(16, 16))
    assert await read_all(store, "s") == EventPage(event_range(12, 16), 12, 16)
    # A reader whose cursor fell behind sees where the log now begins.
    page = await store.read_events("s", after_seq=3, limit=2)
    assert page == EventPage(event_range(12, 13), 12, 16)
    # The limit is per session: another session's log is untouched.
    await store.append_events("t", event_range(1, 4, "t"))
    await store.append_events("s", event_range(17, 18))
    assert await read_all(store, "t") == EventPage(event_range(1, 4, "t"), 1, 4)
    assert await read_all(store, "s") == EventPage(event_range(14, 18), 14, 18)


async def test_event_log_limit_zero_keeps_no_events(backend: Backend) -> None:
    backend.require(Capability.EVENT_LOG)
    store = await backend.open(event_log_limit=0)
    w = SessionWriter(store, "s")
    await w.save(events=event_range(1, 3))
    await store.append_events("s", event_range(4, 5))
    await store.append_events("only-events", event_range(1, 5))
    assert await read_all(store, "s") == EventPage([], 0, 0)
    assert await read_all(store, "only-events") == EventPage([], 0, 0)
    assert await store.load("s") == w.snapshots[-1]
    assert await all_session_ids(store) == ["s"]  # nothing kept of "only-events"


async def test_a_refused_save_appends_no_events(log_driver: Store) -> None:
    w = SessionWriter(log_driver, "s")
    await w.save(events=event_range(1, 2))
    stale = replace(w.snapshots[-1], version=1, messages=w.messages + [message(9, "x")])
    with pytest.raises(LeaseLost):
        await log_driver.save(stale, stored_messages=w.stored, events=event_range(3, 4))
    assert await read_all(log_driver, "s") == EventPage(event_range(1, 2), 1, 2)
    await w.save(events=event_range(3, 4))  # the seqs the refused save did not use
    assert await read_all(log_driver, "s") == EventPage(event_range(1, 4), 1, 4)


async def test_delete_removes_the_event_log_unless_keep_history(log_driver: Store) -> None:
    for sid in ("gone", "kept"):
        await SessionWriter(log_driver, sid).save(events=event_range(1, 3, sid))
    assert await log_driver.delete("gone") is True
    assert await read_all(log_driver, "gone") == EventPage([], 0, 0)
    assert await log_driver.delete("kept", keep_history=True) is True
    assert await read_all(log_driver, "kept") == EventPage(event_range(1, 3, "kept"), 1, 3)
    assert "kept" in await all_session_ids(log_driver)
    # The kept log goes on with the session's next run, and goes with a full delete.
    w = SessionWriter(log_driver, "kept")
    await w.save(events=event_range(4, 4, "kept"))
    assert await read_all(log_driver, "kept") == EventPage(event_range(1, 4, "kept"), 1, 4)
    assert await log_driver.delete("kept") is True
    assert await read_all(log_driver, "kept") == EventPage([], 0, 0)
    # A log without a checkpoint: delete says there was no checkpoint, and removes it.
    await log_driver.append_events("only-events", event_range(1, 2))
    assert await log_driver.delete("only-events", keep_history=True) is False
    assert await read_all(log_driver, "only-events") == EventPage(event_range(1, 2), 1, 2)
    assert await log_driver.delete("only-events") is False
    assert await read_all(log_driver, "only-events") == EventPage([], 0, 0)
    assert await all_session_ids(log_driver) == []


async def test_concurrent_saves_and_appends_of_many_sessions_all_land(
    log_driver: Store,
) -> None:
    async def run(sid: str) -> SessionWriter:
        w = SessionWriter(log_driver, sid)
        seq = 0
        for _ in range(5):
            await w.save(add=1, events=event_range(seq + 1, seq + 2, sid))
            await log_driver.append_events(sid, event_range(seq + 3, seq + 3, sid))
            seq += 3
        return w

    writers = await asyncio.gather(*(run(f"s{i:02d}") for i in range(20)))
    for w in writers:
        sid = w.session_id
        assert await read_all(log_driver, sid) == EventPage(event_range(1, 15, sid), 1, 15)
        assert await log_driver.load(sid) == w.snapshots[-1]


async def test_durable_event_logs_survive_reopen(backend: Backend) -> None:
    backend.require(Capability.EVENT_LOG)
    backend.require(Capability.DURABLE)
    first = await backend.open(event_log_limit=6)
    w = SessionWriter(first, "s")
    await w.save(events=event_range(1, 3))
    await first.append_events("s", event_range(4, 8))
    await first.append_events("only-events", event_range(1, 2, "o"))
    await first.close()
    second = await backend.open(event_log_limit=6)
    assert await read_all(second, "s") == EventPage(event_range(3, 8), 3, 8)
    assert await read_all(second, "only-events") == EventPage(event_range(1, 2, "o"), 1, 2)
    # Pruning goes on from what was kept before the reopen.
    await second.append_events("s", [StoredEvent(9, b"nine")])
    expected = event_range(4, 8) + [StoredEvent(9, b"nine")]
    assert await read_all(second, "s") == EventPage(expected, 4, 9)
