"""Properties, with Hypothesis, of the event log's blocks (luoshod.store.kit.eventblocks):
pack/unpack round trips, the escape of loose events starting with a NUL, what a range
seals (never a block of what is not there), and the expansion of a page of rows that
``Store.read_events`` does over every driver (the drivers themselves run the conformance
kit's test_store_event_blocks.py)."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from luoshod.domain import EventPage, StoredEvent
from luoshod.store.kit import eventblocks
from luoshod.store.kit.eventblocks import BLOCK

PROPERTIES = settings(max_examples=150, derandomize=True, deadline=None, database=None)

datas = st.binary(max_size=40)


@PROPERTIES
@given(st.integers(1, 2**40), st.lists(datas, min_size=1, max_size=2 * BLOCK))
def test_a_block_unpacks_to_the_events_packed(first: int, payloads: list[bytes]) -> None:
    events = [StoredEvent(first + i, d) for i, d in enumerate(payloads)]
    data = eventblocks.pack(events)
    assert eventblocks.is_block(data)
    assert eventblocks.unpack(StoredEvent(events[-1].seq, data)) == events
    with pytest.raises(ValueError):  # a block under another key is refused, not misread
        eventblocks.unpack(StoredEvent(events[-1].seq + 1, data))


def test_a_block_holds_contiguous_seqs_and_a_damaged_one_is_refused() -> None:
    with pytest.raises(ValueError):
        eventblocks.pack([StoredEvent(1, b"a"), StoredEvent(3, b"b")])
    data = eventblocks.pack([StoredEvent(1, b"a"), StoredEvent(2, b"b")])
    for bad in (data[:-3], data[:2] + b"junk", b"\x00\x07" + data[2:]):
        with pytest.raises(ValueError):
            eventblocks.unpack(StoredEvent(2, bad))


@PROPERTIES
@given(st.integers(1, 2**40), datas)
def test_a_loose_event_reads_back_as_written_whatever_its_first_byte(seq: int, data: bytes) -> None:
    row = StoredEvent(seq, eventblocks.loose(data))
    assert not eventblocks.is_block(row.data)
    assert eventblocks.unpack(row) == [StoredEvent(seq, data)]
    assert eventblocks.loose_rows([StoredEvent(seq, data)]) == [row]


@PROPERTIES
@given(st.integers(0, 3), st.sets(st.integers(0, BLOCK - 1), max_size=3), st.booleans())
def test_a_range_seals_only_when_its_loose_events_are_all_there(
    k: int, missing: set[int], blocked: bool
) -> None:
    first, last = k * BLOCK + 1, (k + 1) * BLOCK
    events = [StoredEvent(s, bytes([s % 256]) * (s % 5)) for s in range(first, last + 1)]
    rows = [e for i, e in enumerate(events) if i not in missing]
    rows = eventblocks.loose_rows(rows)
    if blocked and rows:  # a block already there (a range written twice) is left alone
        rows[-1] = StoredEvent(rows[-1].seq, eventblocks.pack(events[-1:]))
    block = eventblocks.seal(rows, first, last)
    if missing or blocked:
        assert block is None
    else:
        assert block is not None and eventblocks.unpack(StoredEvent(last, block)) == events


@PROPERTIES
@given(st.lists(st.integers(1, 400), max_size=80, unique=True), st.integers(0, 400))
def test_the_ranges_sealed_are_those_completed_above_the_floor(
    appended: list[int], floor: int
) -> None:
    appended.sort()
    ranges = eventblocks.seal_ranges(appended, floor)
    for first, last in ranges:
        assert (
            last % BLOCK == 0 and first == last - BLOCK + 1 and first > floor and last in appended
        )
    ends = {q for q in appended if q % BLOCK == 0 and q - BLOCK + 1 > floor}
    assert {last for _, last in ranges} == ends


def _rows(n: int, sealed: set[int], floor: int) -> list[StoredEvent]:
    """The rows of a log of events 1..n with the full ranges in ``sealed`` as blocks,
    pruned at ``floor`` the way drivers prune (rows keyed at or below it)."""
    events = [StoredEvent(s, f"e{s}".encode()) for s in range(1, n + 1)]
    rows, s = [], 1
    while s <= n:
        k = (s - 1) // BLOCK + 1
        if k in sealed and k * BLOCK <= n and (s - 1) % BLOCK == 0:
            rows.append(StoredEvent(k * BLOCK, eventblocks.pack(events[s - 1 : k * BLOCK])))
            s = k * BLOCK + 1
        else:
            rows.append(events[s - 1])
            s += 1
    return [r for r in rows if r.seq > floor]


@PROPERTIES
@given(
    st.integers(0, 4 * BLOCK + 10),
    st.sets(st.integers(1, 4)),
    st.integers(0, 4 * BLOCK),
    st.integers(0, 4 * BLOCK + 20),
    st.integers(0, 3 * BLOCK),
)
@example(64, {1}, 0, 0, 0)  # one block, a limit of 0: first_kept needs the second read
def test_read_expands_the_rows_into_exactly_the_events_after_the_cursor(
    n: int, sealed: set[int], floor: int, after: int, limit: int
) -> None:
    rows = _rows(n, sealed, floor)
    calls = []

    async def hook(sid: str, after_seq: int, lim: int) -> EventPage:
        calls.append((after_seq, lim))
        if not rows:
            return EventPage([], 0, 0)
        return EventPage([r for r in rows if r.seq > after_seq][:lim], rows[0].seq, rows[-1].seq)

    page = asyncio.run(eventblocks.read(hook, "s", after, limit))
    kept = [e for r in rows for e in eventblocks.unpack(r)]
    assert page.events == [e for e in kept if e.seq > after][:limit]
    assert page.last == (kept[-1].seq if kept else 0)
    assert page.first_kept == (kept[0].seq if kept else 0)  # exact, whatever the cursor
    # One read, and a second (of one row) only for a first_kept that may be a block's and
    # that the first read did not return (its cursor past it, or a limit of 0).
    assert calls[0] == (after, limit) and len(calls) <= 2
    if len(calls) == 2:
        assert calls[1] == (rows[0].seq - 1, 1) and rows[0].seq % BLOCK == 0
        assert after >= rows[0].seq or limit == 0
