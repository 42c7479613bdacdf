"""A session's event log kept in compressed blocks: the rows every durable driver stores.

A driver keeps a log as rows ``(session_id, key) -> data`` of opaque bytes, of two kinds:

- a **loose event**: key = its seq, data = the event's bytes. An event whose bytes start
  with ``0x00`` is stored escaped, ``0x00 0x00`` + its bytes (:func:`loose`); the events
  the daemon writes never do (``luoshod.server.stored_events`` starts with a protobuf tag),
  so their rows are their bytes, as every row of a store written before blocks;
- a **block**: key = the seq of its LAST event; data = ``0x00``, :data:`VERSION`, then
  zlib of ``varint(first seq) varint(n)`` and ``n`` × ``varint(len) bytes``: ``n`` events
  of contiguous seqs ``first..first+n-1``.

Blocks are aligned: block ``k`` holds the seqs ``(k-1)*B+1 .. k*B``, ``B`` =
:data:`BLOCK`. A range is **sealed** in the write transaction that makes the log's last
seq reach ``k*B`` (:func:`seal_ranges`, planned by :mod:`.planning`): the driver reads the
loose rows of the range and, when they are exactly its ``B`` events (:func:`seal`), swaps
them for the block. A range with a gap (an imported log) or partly pruned stays loose.

The kit's ``Store.read_events`` expands the rows a driver returns (:func:`read`), so a
driver's ``_read_events`` hook returns rows: ``StoredEvent(key, data)``.
"""

from __future__ import annotations

import zlib
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence

from ...domain import EventPage, StoredEvent
from .codec import read_varint, varint

#: Events per block (a block holds the seqs ``(k-1)*BLOCK+1 .. k*BLOCK``).
BLOCK = 64
#: The second byte of a block row (``0x00`` there marks an escaped loose event).
VERSION = 1
_ESCAPED = b"\x00\x00"
_BLOCK = bytes([0, VERSION])


def is_block(data: bytes) -> bool:
    """Whether a row's data is a block (else a loose event, maybe escaped)."""
    return data[:2] == _BLOCK


def loose(data: bytes) -> bytes:
    """The row data of a loose event of bytes ``data``."""
    return _ESCAPED + data if data[:1] == b"\x00" else data


def loose_rows(events: Sequence[StoredEvent]) -> list[StoredEvent]:
    """``events`` as loose rows (the same objects when none needs escaping)."""
    return [e if e.data[:1] != b"\x00" else StoredEvent(e.seq, loose(e.data)) for e in events]


def pack(events: Sequence[StoredEvent]) -> bytes:
    """The block row data of ``events`` (non-empty, of contiguous seqs, oldest first); its
    key is ``events[-1].seq``."""
    first = events[0].seq
    if any(e.seq != first + i for i, e in enumerate(events)):
        raise ValueError("a block holds events of contiguous seqs")
    out = bytearray()
    out += varint(first)
    out += varint(len(events))
    for e in events:
        out += varint(len(e.data))
        out += e.data
    return _BLOCK + zlib.compress(bytes(out))


def unpack(row: StoredEvent) -> list[StoredEvent]:
    """The events of a row (a block, or a loose event, escaped or not), oldest first.
    Raises ``ValueError`` for a block that is not well formed or not the one its key says."""
    data = row.data
    if data[:1] != b"\x00":
        return [row]
    if data[1:2] == b"\x00":
        return [StoredEvent(row.seq, data[2:])]
    if data[1:2] != _BLOCK[1:]:
        raise ValueError(f"event row {row.seq}: unknown block version {data[1:2].hex()}")
    try:
        buf = zlib.decompress(data[2:])
        first, i = read_varint(buf, 0)
        n, i = read_varint(buf, i)
        events = []
        for seq in range(first, first + n):
            size, i = read_varint(buf, i)
            events.append(StoredEvent(seq, buf[i : i + size]))
            i += size
    except (zlib.error, IndexError) as e:
        raise ValueError(f"event row {row.seq}: a block that is not well formed") from e
    if n < 1 or i != len(buf) or first + n - 1 != row.seq:
        raise ValueError(f"event row {row.seq}: a block that is not well formed")
    return events


def seal_ranges(appended: Iterable[int], floor: int) -> list[tuple[int, int]]:
    """The ranges ``(first, last)`` a write seals: those whose end ``k*B`` is one of the
    seqs it ``appended`` (a range completes when its last event is written: the batch
    took the log's last seq to or past ``k*B``), lying wholly above ``floor`` (what the
    log keeps after that write's pruning). At most one per ``B`` events written, however
    far the seqs jump."""
    return [(seq - BLOCK + 1, seq) for seq in appended if seq % BLOCK == 0 and seq - BLOCK >= floor]


def seal(rows: Sequence[StoredEvent], first: int, last: int) -> bytes | None:
    """The block of the range ``first..last`` from its rows (key order), or ``None`` when
    they are not exactly its loose events (a gap, a pruned part, a block already)."""
    if len(rows) != last - first + 1 or any(
        r.seq != first + i or is_block(r.data) for i, r in enumerate(rows)
    ):
        return None
    return pack([e for r in rows for e in unpack(r)])


def expand(rows: Sequence[StoredEvent], after_seq: int, limit: int) -> Iterator[StoredEvent]:
    """The events of ``rows`` (key order, each key above ``after_seq``) with seqs above
    ``after_seq``, at most ``limit``; a block is unpacked only when reached."""
    if limit < 1:
        return
    for row in rows:
        for e in unpack(row):
            if e.seq > after_seq:
                yield e
                limit -= 1
                if not limit:
                    return


RowReader = Callable[[str, int, int], Awaitable[EventPage]]


async def read(hook: RowReader, session_id: str, after_seq: int, limit: int) -> EventPage:
    """``Store.read_events`` over a driver's rows: ``hook(session_id, after_seq, limit)``
    returns at most ``limit`` rows with keys above ``after_seq``, with the smallest and
    the largest key of the log.

    One read of ``limit`` rows gives ``limit`` events whenever the log has them: every row
    returned has its key, a seq of its own, above ``after_seq`` (a block holding
    ``after_seq + 1`` has its last seq for key, so it is returned), so every row yields at
    least one event.

    ``first_kept`` is exact: the smallest key is the oldest row's, and when that row is a
    block its key is the block's LAST seq, so the kit reports the block's first seq
    instead. It has the row in hand when ``after_seq`` is below that key (the oldest row
    is the first returned); else, only when the key could be a block's (a multiple of
    ``BLOCK``: blocks are aligned), it reads that one row (``hook(sid, key - 1, 1)``, one
    index lookup). Watch compares a cursor with it (``EVENTS_OUT_OF_RANGE`` when
    ``after_seq + 1 < first_kept``): a cursor inside the oldest block is within the log
    and must not be refused, which the uncorrected key would do."""
    page = await hook(session_id, after_seq, limit)
    if not page.first_kept:
        return page
    rows, first_kept = page.events, page.first_kept
    events = list(expand(rows, after_seq, limit))
    oldest = rows[0] if rows and rows[0].seq == first_kept else None
    if oldest is None and first_kept % BLOCK == 0:
        oldest = next(iter((await hook(session_id, first_kept - 1, 1)).events), None)
    # (A second read sees a later snapshot: its row counts only if still the same key.)
    if oldest is not None and oldest.seq == page.first_kept and is_block(oldest.data):
        first_kept = unpack(oldest)[0].seq
    return EventPage(events, first_kept, page.last)
