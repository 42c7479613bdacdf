"""The event log in compressed blocks (luoshod.store.kit.eventblocks), for every driver
that declares EVENT_LOG: a durable driver seals each range of ``BLOCK`` seqs that saves and
appends complete into one block row in the write transaction; reads, pruning, ``first_kept``
and every other operation on the log give the same events as loose rows would. The rows
are seen through the driver's own read hook (``_read_events``: the rows, before the kit
expands them). The memory store keeps loose events only, with the same pruning."""

from __future__ import annotations

import pytest
import pytest_asyncio

from luoshod.domain import EventPage, StoredEvent
from luoshod.store import Capability, Store
from luoshod.store.copy import copy_store
from luoshod.store.kit import eventblocks
from luoshod.store.kit.eventblocks import BLOCK

from .backend import Backend
from .helpers import SessionWriter

N = 3 * BLOCK + 5
ALL = 2**40


def events(first: int, last: int, tag: str = "e") -> list[StoredEvent]:
    """Events ``first..last``, each its own bytes; every tenth starts with a NUL (opaque
    bytes: a loose row of it must not read as a block)."""
    return [
        StoredEvent(
            s,
            (b"\x00" if s % 10 == 0 else b"") + f"{tag}-{s}:".encode() + bytes([s % 256]) * (s % 7),
        )
        for s in range(first, last + 1)
    ]


async def rows(store: Store, sid: str) -> list[StoredEvent]:
    """The log's rows as the driver keeps them."""
    return (await store._read_events(sid, 0, ALL)).events


async def write_in_small_batches(store: Store, sid: str, first: int, last: int) -> SessionWriter:
    """Events ``first..last`` by saves and appends of 1 to 7 events."""
    w = SessionWriter(store, sid)
    seq, size = first, 1
    while seq <= last:
        batch = events(seq, min(last, seq + size - 1), sid)
        if size % 2:
            await w.save(add=1, events=batch)
        else:
            await store.append_events(sid, batch)
        seq += len(batch)
        size = size % 7 + 1
    return w


def blocks_and_tail(found: list[StoredEvent], sealed: list[int], loose: range) -> None:
    """``found`` are blocks keyed by ``sealed`` (each range's last seq), then the loose rows
    ``loose``."""
    assert [r.seq for r in found] == sealed + list(loose)
    assert [eventblocks.is_block(r.data) for r in found] == [True] * len(sealed) + [False] * len(
        loose
    )


@pytest_asyncio.fixture
async def log_driver(backend: Backend) -> Store:
    backend.require(Capability.EVENT_LOG)
    return await backend.open()


def durable(store: Store) -> bool:
    return Capability.DURABLE in store.capabilities


async def test_appended_events_are_sealed_into_blocks_and_read_exactly(log_driver: Store) -> None:
    await write_in_small_batches(log_driver, "s", 1, N)
    found = await rows(log_driver, "s")
    if durable(log_driver):
        blocks_and_tail(found, [BLOCK, 2 * BLOCK, 3 * BLOCK], range(3 * BLOCK + 1, N + 1))
    else:
        blocks_and_tail(found, [], range(1, N + 1))
    written = events(1, N, "s")
    # Every cursor (the start, inside a block, at a block's edge, past the end) and small
    # limits: exactly the events after it, and the exact ends.
    for after in range(0, N + 3):
        for limit in (1, 2, 7, BLOCK, 10_000):
            page = await log_driver.read_events("s", after_seq=after, limit=limit)
            assert page == EventPage(written[after:][:limit], 1, N), (after, limit)
    for after in (0, 1, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK, 2**64):
        assert await log_driver.read_events("s", after_seq=after, limit=0) == EventPage([], 1, N)


async def test_pruning_keeps_the_newest_seqs_and_reports_the_exact_first_kept(
    backend: Backend,
) -> None:
    backend.require(Capability.EVENT_LOG)
    limit = 2 * BLOCK + 10  # not a multiple of BLOCK
    store = await backend.open(event_log_limit=limit)
    last = 4 * BLOCK + 7
    await write_in_small_batches(store, "s", 1, last)
    page = await store.read_events("s", after_seq=0, limit=10_000)
    floor = last - limit
    if durable(store):
        # The block holding the floor stays whole (its older events are still valid
        # events of the log); the blocks below it are gone; the read drops nothing.
        straddled = (floor // BLOCK) * BLOCK + 1
        assert page == EventPage(events(straddled, last, "s"), straddled, last)
        blocks_and_tail(
            await rows(store, "s"),
            [2 * BLOCK, 3 * BLOCK, 4 * BLOCK],
            range(4 * BLOCK + 1, last + 1),
        )
    else:
        assert page == EventPage(events(floor + 1, last, "s"), floor + 1, last)
    # Watch's check: a cursor inside the oldest block is within the log, at every limit.
    for after in range(page.first_kept - 1, page.first_kept + BLOCK + 1):
        for limit in (0, 1, 5):
            got = await store.read_events("s", after_seq=after, limit=limit)
            assert got.first_kept <= after + 1 and got.last == last, (after, limit)
            assert got.events == page.events[after - page.first_kept + 1 :][:limit]
    # A log whose limit is below BLOCK never seals: no range lies wholly in what it keeps.
    small = await backend.open(event_log_limit=BLOCK - 20)
    await write_in_small_batches(small, "t", 1, 2 * BLOCK + 3)
    kept = events(BLOCK + 24, 2 * BLOCK + 3, "t")
    assert await small.read_events("t", after_seq=0, limit=10_000) == EventPage(
        kept, kept[0].seq, kept[-1].seq
    )
    blocks_and_tail(await rows(small, "t"), [], range(kept[0].seq, kept[-1].seq + 1))


async def test_a_log_written_loose_reads_then_seals_the_ranges_appends_complete(
    backend: Backend, log_driver: Store
) -> None:
    # An imported log is written as given, loose (as is every row of a store written
    # before blocks); it reads as before, and the ranges later appends complete are sealed.
    await log_driver.import_session("s", latest=None, history=[], events=events(1, BLOCK + 10, "s"))
    blocks_and_tail(await rows(log_driver, "s"), [], range(1, BLOCK + 11))
    await log_driver.append_events("s", events(BLOCK + 11, 2 * BLOCK + 3, "s"))
    page = await log_driver.read_events("s", after_seq=0, limit=10_000)
    assert page == EventPage(events(1, 2 * BLOCK + 3, "s"), 1, 2 * BLOCK + 3)
    # Range 1 was complete before any append: it stays loose; range 2 is sealed.
    sealed = [2 * BLOCK] if durable(log_driver) else []
    tail = range(2 * BLOCK + 1, 2 * BLOCK + 4)
    found = await rows(log_driver, "s")
    blocks_and_tail(found[BLOCK:], sealed, tail if sealed else range(BLOCK + 1, 2 * BLOCK + 4))
    # A range with a gap (an imported log may have one) stays loose: nothing is invented.
    gapped = events(1, BLOCK - 5, "g") + events(BLOCK - 3, BLOCK - 1, "g")
    await log_driver.import_session("g", latest=None, history=[], events=gapped)
    await log_driver.append_events("g", events(BLOCK, BLOCK + 1, "g"))
    expected = gapped + events(BLOCK, BLOCK + 1, "g")
    assert (await log_driver.read_events("g", after_seq=0, limit=10_000)).events == expected
    assert not any(eventblocks.is_block(r.data) for r in await rows(log_driver, "g"))


async def test_delete_import_and_copy_carry_sealed_logs(
    backend: Backend, log_driver: Store
) -> None:
    for sid in ("kept", "gone", "src"):
        await write_in_small_batches(log_driver, sid, 1, N)
    await log_driver.delete("kept", keep_history=True)
    assert (await log_driver.read_events("kept", after_seq=0, limit=10_000)).events == events(
        1, N, "kept"
    )
    await log_driver.append_events("kept", events(N + 1, 4 * BLOCK, "kept"))  # seals on
    assert (
        await log_driver.read_events("kept", after_seq=3 * BLOCK, limit=10_000)
    ).events == events(3 * BLOCK + 1, 4 * BLOCK, "kept")
    if durable(log_driver):
        assert [r.seq for r in await rows(log_driver, "kept")] == [BLOCK * k for k in (1, 2, 3, 4)]
    await log_driver.delete("gone")
    assert await log_driver.read_events("gone", after_seq=0, limit=10) == EventPage([], 0, 0)
    assert await rows(log_driver, "gone") == []
    # Import over a sealed log replaces it, loose.
    await log_driver.import_session("src", latest=None, history=[], events=events(5, 9, "x"))
    assert await log_driver.read_events("src", after_seq=0, limit=100) == EventPage(
        events(5, 9, "x"), 5, 9
    )
    if not durable(log_driver):
        return
    # `store copy` reads the expanded events and writes them loose; the copy reads the same.
    await write_in_small_batches(log_driver, "copied", 1, N)
    await log_driver.close()
    backend.opened.remove(log_driver)
    # Into the same driver in another directory when its files are the test's, else
    # into a SQLite file (a driver of this repository's, when installed).
    if backend.on_disk_here:
        target = backend.url.replace(str(backend.directory), str(backend.directory / "copy"))
    else:
        pytest.importorskip("luoshod_sqlite", reason="store copy needs a second driver here")
        target = f"sqlite://{backend.directory}/copy/luoshod.db"
    await copy_store(backend.url, target, progress=False)
    source = await backend.open()
    copy = await Backend("copy", target, backend.directory).open()
    for sid in ("kept", "copied"):
        want = await source.read_events(sid, after_seq=0, limit=10_000)
        assert await copy.read_events(sid, after_seq=0, limit=10_000) == want
        assert not any(eventblocks.is_block(r.data) for r in await rows(copy, sid))
    await copy.close()
