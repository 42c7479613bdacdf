"""The ``lmdb:`` driver's operations as plain functions of a transaction.

They run on the driver's database thread, inside the transaction the caller opened
(:mod:`.environment`); the records are those of :mod:`.layout`. A save is O(new
messages): it appends to the session's message log, writes the session's row and one
history row, and drops the oldest history row; a log that no row refers to any more is
deleted with its chunks in the same transaction.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

import lmdb

from luoshod.domain import (
    AppliedRequest,
    Approval,
    Checkpoint,
    EventPage,
    HistoryEntry,
    Lease,
    SessionSummary,
    Status,
    StoredEvent,
)
from luoshod.errors import StoreError
from luoshod.store.kit import (
    Renewal,
    codec,
    eventblocks,
    importing,
    lease_busy,
    lease_lost,
    planning,
    renewal_of,
)
from luoshod.store.kit.groupcommit import Queued
from luoshod.store.kit.prepared import Prepared

from . import layout, queue
from .layout import Dbs, Row, keys_under

#: The store's clock (``Store.clock``), read on the database thread.
Clock = Callable[[], float]


# -- message logs --------------------------------------------------------------------------


def _header_bytes(header: str | bytes) -> bytes:
    """A prepared header as a row holds it: its compact form as it is (the driver's
    ``compact_headers``), JSON text as UTF-8."""
    return header if isinstance(header, bytes) else header.encode()


def _get(txn: lmdb.Transaction[bytes], key: bytes, db: Any) -> bytes:
    """The value under ``key`` in ``db``, which the store's own records say is there (an
    index entry's target, a log's last chunk, the next log id)."""
    value = txn.get(key, db=db)
    if value is None:
        raise StoreError(f"LMDB store is inconsistent: no record under {key!r}")
    return value


def _up_to(pairs: Iterable[tuple[bytes, bytes]], floor: int) -> list[tuple[bytes, bytes]]:
    """The leading (key, value) pairs whose key's number is at most ``floor`` (the pairs of
    one session in key order: O(pairs taken))."""
    return list(itertools.takewhile(lambda kv: layout.number_of(kv[0]) <= floor, pairs))


def _new_log(txn: lmdb.Transaction[bytes], dbs: Dbs, sid_key: bytes) -> int:
    log_id = layout.from_u64(_get(txn, layout.NEXT_LOG_ID_KEY, dbs.meta))
    txn.put(layout.NEXT_LOG_ID_KEY, layout.u64(log_id + 1), db=dbs.meta)
    txn.put(layout.numbered(sid_key, log_id), b"", db=dbs.logs)
    return log_id


def _append(txn: lmdb.Transaction[bytes], dbs: Dbs, log_id: int, nbytes: int, data: bytes) -> int:
    """Append ``data`` to a log whose stream is ``nbytes`` long; the new length."""
    if not data:
        return nbytes
    size = dbs.chunk_size
    n, used = divmod(nbytes, size)
    if used:  # the last chunk is partial: rewrite it, extended
        last = _get(txn, layout.chunk_key(log_id, n), dbs.chunks)
        data = last[:used] + data
    for offset in range(0, len(data), size):
        txn.put(layout.chunk_key(log_id, n), data[offset : offset + size], db=dbs.chunks)
        n += 1
    return nbytes + len(data) - used


def _stream(txn: lmdb.Transaction[bytes], dbs: Dbs, log_id: int, nbytes: int) -> bytes:
    """The first ``nbytes`` of a log's stream."""
    if not nbytes:
        return b""
    end = layout.chunk_key(log_id, -(-nbytes // dbs.chunk_size))
    parts = []
    cursor = txn.cursor(db=dbs.chunks)
    if cursor.set_range(layout.chunk_key(log_id, 0)):
        for key, value in cursor:
            if key >= end:
                break
            parts.append(value)
    return b"".join(parts)[:nbytes]


def _drop_log(txn: lmdb.Transaction[bytes], dbs: Dbs, sid_key: bytes, log_id: int) -> None:
    cursor = txn.cursor(db=dbs.chunks)
    if cursor.set_range(layout.chunk_key(log_id, 0)):
        while cursor.key() and layout.log_of_chunk(cursor.key()) == log_id:
            cursor.delete()
    txn.delete(layout.numbered(sid_key, log_id), db=dbs.logs)


def _checkpoint(txn: lmdb.Transaction[bytes], dbs: Dbs, row: Row) -> Checkpoint:
    messages = codec.decode_messages(_stream(txn, dbs, row.log_id, row.nbytes))
    return codec.checkpoint_of(row.header_dict(), messages)


# -- keys under a session ------------------------------------------------------------------


def _first_and_last(
    txn: lmdb.Transaction[bytes], db: Any, sid_key: bytes
) -> tuple[int, int] | None:
    first = next(keys_under(txn, db, sid_key), None)
    if first is None:
        return None
    last = next(keys_under(txn, db, sid_key, reverse=True))
    return layout.number_of(first[0]), layout.number_of(last[0])


def _seal(txn: lmdb.Transaction[bytes], dbs: Dbs, sid_key: bytes, first: int, last: int) -> None:
    """Swap the loose rows of ``first..last`` for their block, when they are all there."""
    rows: list[StoredEvent] = []
    cursor = txn.cursor(db=dbs.events)
    if cursor.set_range(layout.numbered(sid_key, first)):
        prefix = layout.under(sid_key)
        for k, value in cursor.iternext():
            if not k.startswith(prefix) or layout.number_of(k) > last:
                break
            rows.append(StoredEvent(layout.number_of(k), value))
    block = eventblocks.seal(rows, first, last)
    if block is not None:
        for r in rows:
            txn.delete(layout.numbered(sid_key, r.seq), db=dbs.events)
        txn.put(layout.numbered(sid_key, last), block, db=dbs.events)


def _delete_under(txn: lmdb.Transaction[bytes], db: Any, sid_key: bytes) -> list[bytes]:
    """Delete a session's keys in ``db``; their values."""
    keys = list(keys_under(txn, db, sid_key))
    for key, _ in keys:
        txn.delete(key, db=db)
    return [value for _, value in keys]


# -- reads ---------------------------------------------------------------------------------


def load(txn: lmdb.Transaction[bytes], dbs: Dbs, session_id: str) -> Checkpoint | None:
    key = layout.readable_key(session_id)
    value = txn.get(key, db=dbs.sessions) if key else None
    return _checkpoint(txn, dbs, Row.decode(value)) if value is not None else None


def history(
    txn: lmdb.Transaction[bytes], dbs: Dbs, session_id: str, limit: int | None
) -> list[HistoryEntry]:
    key = layout.readable_key(session_id)
    if key is None or limit == 0:
        return []
    rows = []
    for _, value in keys_under(txn, dbs.history, key, reverse=True):
        rows.append(Row.decode(value))
        if limit is not None and len(rows) >= limit:
            break
    # Entries share logs: read each log once, up to the longest prefix any entry needs.
    longest: dict[int, Row] = {}
    for row in rows:
        if row.nbytes >= longest.get(row.log_id, row).nbytes:
            longest[row.log_id] = row
    logs = {
        log_id: codec.decode_messages(_stream(txn, dbs, log_id, row.nbytes))
        for log_id, row in longest.items()
    }
    entries = []
    for row in rows:
        h = row.header_dict()
        cp = codec.checkpoint_of(h, logs[row.log_id][: row.count])
        entries.append(HistoryEntry(cp.step_index, cp.updated_at, cp.status, cp))
    return entries


def list_sessions(
    txn: lmdb.Transaction[bytes], dbs: Dbs, status: Status | None, after: str, limit: int
) -> list[SessionSummary]:
    start = after.encode() + b"\0" if after else b""
    page: list[SessionSummary] = []
    if status is None:
        cursor = txn.cursor(db=dbs.sessions)
        items: Iterable[tuple[bytes, bytes]] = cursor.iternext() if cursor.set_range(start) else ()
        for _, value in items:
            page.append(_summary(value))
            if len(page) >= limit:
                break
        return page
    code = bytes([layout.STATUS_CODES[status]])
    cursor = txn.cursor(db=dbs.by_status)
    if not cursor.set_range(code + start):
        return page
    for key in cursor.iternext(values=False):
        if key[:1] != code:
            break
        page.append(_summary(_get(txn, key[1:], dbs.sessions)))
        if len(page) >= limit:
            break
    return page


def list_sessions_in(
    txn: lmdb.Transaction[bytes],
    dbs: Dbs,
    status: Status | None,
    low: str,
    high: str,
    skip: str,
    limit: int,
) -> list[SessionSummary]:
    """Ids in ``[low, high)`` but ``skip``: UTF-8 keys sort by code point, as ids do."""
    lo, hi, no = low.encode(), high.encode(), skip.encode()
    page: list[SessionSummary] = []
    if status is None:
        cursor = txn.cursor(db=dbs.sessions)
        if not cursor.set_range(lo):
            return page
        for key, value in cursor.iternext():
            if key >= hi:
                break
            if key != no:
                page.append(_summary(value))
                if len(page) >= limit:
                    break
        return page
    code = bytes([layout.STATUS_CODES[status]])
    cursor = txn.cursor(db=dbs.by_status)
    if not cursor.set_range(code + lo):
        return page
    for key in cursor.iternext(values=False):
        if key[:1] != code or key[1:] >= hi:
            break
        if key[1:] != no:
            page.append(_summary(_get(txn, key[1:], dbs.sessions)))
            if len(page) >= limit:
                break
    return page


def session_ids(txn: lmdb.Transaction[bytes], dbs: Dbs, after: str, limit: int) -> list[str]:
    """Sessions with a checkpoint, a history or an event log, in id order: the first
    ``limit`` of each kind, merged, hold the first ``limit`` of all."""
    start = after.encode() + b"\0" if after else b""
    ids: set[bytes] = set()
    for db in (dbs.sessions, dbs.event_counts):  # both keyed by the session id
        cursor = txn.cursor(db=db)
        if cursor.set_range(start):
            ids.update(itertools.islice(cursor.iternext(values=False), limit))
    cursor = txn.cursor(db=dbs.history)
    # History keys are ``id NUL seq``: the first session after ``after`` starts past
    # ``after + 0x01``.
    found, taken = cursor.set_range(after.encode() + b"\x01" if after else b""), 0
    while found and taken < limit:
        sid = cursor.key().split(b"\0", 1)[0]
        ids.add(sid)
        taken += 1
        found = cursor.set_range(sid + b"\x01")  # past this session's entries
    return [sid.decode() for sid in sorted(ids)[:limit]]


def read_events(
    txn: lmdb.Transaction[bytes], dbs: Dbs, session_id: str, after_seq: int, limit: int
) -> EventPage:
    """``after_seq`` within ``0..MAX_SEQ`` (:func:`..base.clamp_seq`): its successor is a
    u64 key."""
    key = layout.readable_key(session_id)
    ends = _first_and_last(txn, dbs.events, key) if key else None
    if ends is None or key is None:
        return EventPage([], 0, 0)
    events: list[StoredEvent] = []
    cursor = txn.cursor(db=dbs.events)
    if limit > 0 and cursor.set_range(layout.numbered(key, after_seq + 1)):
        prefix = layout.under(key)
        for k, value in cursor.iternext():
            if not k.startswith(prefix):
                break
            events.append(StoredEvent(layout.number_of(k), value))
            if len(events) >= limit:
                break
    return EventPage(events, ends[0], ends[1])


def get_approval(txn: lmdb.Transaction[bytes], dbs: Dbs, approval_id: str) -> Approval | None:
    key = layout.readable_key(approval_id)
    value = txn.get(key, db=dbs.approvals) if key else None
    return Approval.from_dict(_json(value)) if value is not None else None


def list_approvals(
    txn: lmdb.Transaction[bytes], dbs: Dbs, session_id: str | None, after: str, limit: int
) -> list[Approval]:
    page: list[Approval] = []
    if session_id is None:
        cursor = txn.cursor(db=dbs.approvals)
        start = after.encode() + b"\0" if after else b""
        if cursor.set_range(start):
            for _, value in cursor.iternext():
                page.append(Approval.from_dict(_json(value)))
                if len(page) >= limit:
                    break
        return page
    key = layout.readable_key(session_id)
    if key is None:
        return page
    prefix = layout.under(key)
    cursor = txn.cursor(db=dbs.by_session)
    # Ids hold no NUL: the first id past ``after`` is at or past ``after + NUL``.
    if not cursor.set_range(prefix + (after.encode() + b"\0" if after else b"")):
        return page
    for k in cursor.iternext(values=False):
        if not k.startswith(prefix):
            break
        approval_id = k[len(prefix) :]
        page.append(Approval.from_dict(_json(_get(txn, approval_id, dbs.approvals))))
        if len(page) >= limit:
            break
    return page


# -- writes --------------------------------------------------------------------------------


def save_batch(txn: lmdb.Transaction[bytes], dbs: Dbs, batch: Sequence[Queued[Prepared]]) -> None:
    """Apply a batch of saves and appends inside the caller's write transaction: what the
    batch is checked against is read, the kit plans it
    (:func:`~luoshod.store.kit.planning.plan_batch`: refused writes get their error and
    write nothing), and the others are written. An exception leaves the transaction
    half-written, for the caller to abort. (The ids were checked before the writes were
    queued.)"""
    keys = planning.reads(batch)
    stored = planning.Stored()
    for sid in keys.fenced:
        lease = _lease_row(txn, dbs, layout.id_key(sid))
        if lease is not None:
            stored.tokens[sid] = lease.token
    latest: dict[str, Row | None] = {}
    for sid in keys.saved:
        value = txn.get(layout.id_key(sid), db=dbs.sessions)
        row = latest[sid] = Row.decode(value) if value is not None else None
        if row is not None:
            stored.heads[sid] = planning.Head(row.version, row.count)
    for aid in keys.claims:
        claim_key = layout.readable_key(aid)
        pending = txn.get(claim_key, db=dbs.approvals) if claim_key else None
        if pending is not None:
            stored.pending[aid] = _json(pending)["session_id"]
    for sid in keys.logged:
        key = layout.id_key(sid)
        counted = txn.get(key, db=dbs.event_counts)
        if counted is not None:
            newest = next(keys_under(txn, dbs.events, key, reverse=True), None)
            kept = layout.from_u64(counted)
            stored.event_logs[sid] = (kept, layout.number_of(newest[0]) if newest else 0)
    for sid in keys.requested:
        newest = next(keys_under(txn, dbs.request_order, layout.id_key(sid), reverse=True), None)
        if newest is not None:
            stored.request_last[sid] = layout.number_of(newest[0])
    for sid, rid in keys.request_keys:
        value = txn.get(layout.request_key(layout.id_key(sid), rid), db=dbs.requests)
        if value is not None:
            stored.request_numbers[(sid, rid)] = layout.from_u64(value[:8])
    plan = planning.plan_batch(batch, stored)
    for planned in plan.saves:
        p = planned.save
        cp, key = p.checkpoint, layout.id_key(p.session_id)
        old = latest[p.session_id]
        stream = b"".join(planned.bodies)
        if planned.new_log or old is None:
            log_id = _new_log(txn, dbs, key)
            nbytes = _append(txn, dbs, log_id, 0, stream)
        else:
            log_id, nbytes = old.log_id, _append(txn, dbs, old.log_id, old.nbytes, stream)
        row = latest[p.session_id] = Row(
            log_id, planned.count, nbytes, cp.version, cp.status, _header_bytes(p.header)
        )
        _put_latest(txn, dbs, key, row, old)
        pruned = _append_history(txn, dbs, key, row, p.history_limit)
        _collect_logs(txn, dbs, key, row.log_id, pruned | ({old.log_id} if old else set()))
    for aid, (sid, body) in plan.approvals.items():
        if body is None:
            _remove_approval(txn, dbs, layout.id_key(sid), aid)
        else:
            _put_approval(txn, dbs, layout.id_key(sid), aid, body.encode())
    for log in plan.events:
        key = layout.id_key(log.session_id)
        for e in log.new:
            txn.put(layout.numbered(key, e.seq), e.data, db=dbs.events)
        if log.floor:  # from the start of the session's keys: O(rows deleted)
            for k, _ in _up_to(keys_under(txn, dbs.events, key), log.floor):
                txn.delete(k, db=dbs.events)
        for first, last in log.seal:
            _seal(txn, dbs, key, first, last)
        if log.kept:
            txn.put(key, layout.u64(log.kept), db=dbs.event_counts)
        elif log.existed:
            txn.delete(key, db=dbs.event_counts)
    for r in plan.requests:
        _put_request(txn, dbs, layout.id_key(r.session_id), r.request_id, r.n, r.body.encode())
    for sid, floor in plan.request_floors.items():
        key = layout.id_key(sid)
        # From the start of the session's order: O(records dropped).
        dropped = _up_to(keys_under(txn, dbs.request_order, key), floor)
        for k, h in dropped:
            txn.delete(k, db=dbs.request_order)
            txn.delete(layout.under(key) + h, db=dbs.requests)
    if plan.enqueue:  # e.g. the webhooks' outbox entry of an event written above
        for q in plan.enqueue:
            queue.enqueue(
                txn,
                dbs,
                layout.id_key(q.session_id),
                q.session_id,
                q.request_id,
                q.data,
                False,
                q.enqueued_at,
            )


def _put_request(
    txn: lmdb.Transaction[bytes], dbs: Dbs, key: bytes, request_id: str, n: int, body: bytes
) -> None:
    h = layout.request_hash(request_id)
    txn.put(layout.under(key) + h, layout.u64(n) + body, db=dbs.requests)
    txn.put(layout.numbered(key, n), h, db=dbs.request_order)


def find_request(
    txn: lmdb.Transaction[bytes], dbs: Dbs, session_id: str, request_id: str
) -> AppliedRequest | None:
    key = layout.readable_key(session_id)
    value = txn.get(layout.request_key(key, request_id), db=dbs.requests) if key else None
    if value is None:
        return None
    found = AppliedRequest.from_dict(_json(value[8:]))
    return found if found.id == request_id else None  # a hash collision: not this id


def requests(txn: lmdb.Transaction[bytes], dbs: Dbs, session_id: str) -> list[AppliedRequest]:
    key = layout.readable_key(session_id)
    if key is None:
        return []
    return [
        AppliedRequest.from_dict(_json(_get(txn, layout.under(key) + h, dbs.requests)[8:]))
        for _, h in keys_under(txn, dbs.request_order, key)
    ]


def _delete_requests(txn: lmdb.Transaction[bytes], dbs: Dbs, key: bytes) -> None:
    _delete_under(txn, dbs.requests, key)
    _delete_under(txn, dbs.request_order, key)


def delete(
    txn: lmdb.Transaction[bytes],
    dbs: Dbs,
    session_id: str,
    keep_history: bool,
    keep_queue: bool = False,
) -> bool:
    key = layout.readable_key(session_id)
    if key is None:
        return False
    value = txn.get(key, db=dbs.sessions)
    old = Row.decode(value) if value is not None else None
    if old is not None:
        txn.delete(key, db=dbs.sessions)
        txn.delete(bytes([layout.STATUS_CODES[old.status]]) + key, db=dbs.by_status)
    for k, _ in list(keys_under(txn, dbs.by_session, key)):
        _remove_approval(txn, dbs, key, k[len(key) + 1 :].decode())
    _delete_requests(txn, dbs, key)
    if not keep_queue:
        _delete_under(txn, dbs.queue, key)
    if keep_history:
        _collect_logs(txn, dbs, key, None, {old.log_id} if old else set())
    else:
        _delete_under(txn, dbs.history, key)
        txn.delete(key, db=dbs.history_ends)
        _delete_under(txn, dbs.events, key)
        txn.delete(key, db=dbs.event_counts)
        for k, _ in list(keys_under(txn, dbs.logs, key)):
            _drop_log(txn, dbs, key, layout.number_of(k))
    return old is not None


def import_session(
    txn: lmdb.Transaction[bytes],
    dbs: Dbs,
    key: bytes,
    latest: Checkpoint | None,
    history: Sequence[Checkpoint],
    approvals: Sequence[Approval],
    events: Sequence[StoredEvent],
    requests: Sequence[AppliedRequest] = (),
) -> None:
    """Replace the session's checkpoint and history (oldest first, already trimmed), its
    pending approvals, its event log (checked and already trimmed) and its request
    records (oldest first)."""
    _delete_requests(txn, dbs, key)
    for n, r in enumerate(requests, 1):
        _put_request(txn, dbs, key, r.id, n, layout.encode_json(r.to_dict()))
    for k, _ in list(keys_under(txn, dbs.by_session, key)):
        _remove_approval(txn, dbs, key, k[len(key) + 1 :].decode())
    for a in approvals:
        _put_approval(txn, dbs, key, a.approval_id, layout.encode_json(a.to_dict()))
    _delete_under(txn, dbs.events, key)
    txn.delete(key, db=dbs.event_counts)
    for e in eventblocks.loose_rows(events):
        txn.put(layout.numbered(key, e.seq), e.data, db=dbs.events)
    if events:
        txn.put(key, layout.u64(len(events)), db=dbs.event_counts)
    value = txn.get(key, db=dbs.sessions)
    old = Row.decode(value) if value is not None else None
    _delete_under(txn, dbs.history, key)
    txn.delete(key, db=dbs.history_ends)
    for k, _ in list(keys_under(txn, dbs.logs, key)):
        _drop_log(txn, dbs, key, layout.number_of(k))
    if history:
        txn.put(key, layout.ends(1, len(history)), db=dbs.history_ends)
    log_id, nbytes = 0, 0
    row: Row | None = None
    checkpoints = [*history, *([latest] if latest else [])]
    for i, (cp, step) in enumerate(zip(checkpoints, importing.log_steps(checkpoints))):
        if step.new_log:
            log_id, nbytes = _new_log(txn, dbs, key), 0
        nbytes = _append(txn, dbs, log_id, nbytes, b"".join(step.bodies))
        header = codec.encode_compact_header(cp)
        row = Row(log_id, step.count, nbytes, cp.version, cp.status, header)
        if i < len(history):
            txn.put(layout.numbered(key, i + 1), row.encode(), db=dbs.history)
    if latest is not None and row is not None:
        _put_latest(txn, dbs, key, row, old)
    elif old is not None:
        txn.delete(key, db=dbs.sessions)
        txn.delete(bytes([layout.STATUS_CODES[old.status]]) + key, db=dbs.by_status)


# -- leases (on the store's clock, ``Store.clock``; by default this host's, which the
# processes sharing an environment share) --------------------------------------------------


def _lease_row(txn: lmdb.Transaction[bytes], dbs: Dbs, key: bytes) -> layout.LeaseRow | None:
    value = txn.get(key, db=dbs.leases)
    return layout.LeaseRow.decode(value) if value is not None else None


def fence(txn: lmdb.Transaction[bytes], dbs: Dbs, key: bytes, lease: Lease | None) -> None:
    """Raise ``LeaseLost`` unless ``lease`` (when given) holds the session's current token."""
    if lease is None:
        return
    row = _lease_row(txn, dbs, key)
    if row is None or row.token != lease.token:
        raise lease_lost(lease, row.token if row else None)


def acquire_lease(
    txn: lmdb.Transaction[bytes],
    dbs: Dbs,
    session_id: str,
    owner: str,
    ttl: float,
    address: str,
    clock: Clock,
) -> Lease:
    key = layout.id_key(session_id)
    now = clock()
    row = _lease_row(txn, dbs, key)
    if row is not None and row.expires_at > now:
        raise lease_busy(session_id, row.owner, row.expires_at)
    lease = Lease(session_id, owner, row.token + 1 if row else 1, now + ttl, address)
    row = layout.LeaseRow(owner, lease.token, lease.expires_at, address)
    txn.put(key, row.encode(), db=dbs.leases)
    return lease


def renew_lease(
    txn: lmdb.Transaction[bytes], dbs: Dbs, lease: Lease, ttl: float, clock: Clock
) -> Lease:
    key = layout.id_key(lease.session_id)
    fence(txn, dbs, key, lease)
    renewed = replace(lease, expires_at=clock() + ttl)
    row = layout.LeaseRow(lease.owner, lease.token, renewed.expires_at, lease.address)
    txn.put(key, row.encode(), db=dbs.leases)
    return renewed


def renew_leases(
    txn: lmdb.Transaction[bytes], dbs: Dbs, leases: list[Lease], ttl: float, clock: Clock
) -> Renewal:
    """See ``Store.renew_leases``: every lease in one write transaction (one sync)."""
    expires_at, current = clock() + ttl, {}
    for lease in leases:
        key = layout.readable_key(lease.session_id)
        row = _lease_row(txn, dbs, key) if key else None
        if key is None or row is None:
            continue
        current[lease.session_id] = row.token
        if row.token == lease.token:
            txn.put(key, replace(row, expires_at=expires_at).encode(), db=dbs.leases)
    return renewal_of(leases, current, expires_at)


def list_leases(
    txn: lmdb.Transaction[bytes], dbs: Dbs, owner: str | None, after: str, limit: int, clock: Clock
) -> list[Lease]:
    """Live leases after ``after`` in key order (session ids sort as their UTF-8 bytes)."""
    now, found = clock(), list[Lease]()
    cursor = txn.cursor(db=dbs.leases)
    start = after.encode()
    if not cursor.set_range(start):
        return found
    for key, value in cursor:
        if bytes(key) == start:
            continue
        row = layout.LeaseRow.decode(value)
        if row.expires_at > now and owner in (None, row.owner):
            sid = bytes(key).decode()
            found.append(Lease(sid, row.owner, row.token, row.expires_at, row.address))
            if len(found) >= limit:
                break
    return found


def release_leases_of(txn: lmdb.Transaction[bytes], dbs: Dbs, owner: str, clock: Clock) -> int:
    """A scan of every lease: run once, when a daemon starts."""
    now, released = clock(), []
    for key, value in txn.cursor(db=dbs.leases):
        row = layout.LeaseRow.decode(value)
        if row.owner == owner and row.expires_at > now:
            released.append((bytes(key), replace(row, expires_at=0.0)))
    for key, row in released:
        txn.put(key, row.encode(), db=dbs.leases)
    return len(released)


def release_lease(txn: lmdb.Transaction[bytes], dbs: Dbs, lease: Lease) -> None:
    key = layout.readable_key(lease.session_id)
    row = _lease_row(txn, dbs, key) if key else None
    if key and row is not None and row.token == lease.token:
        txn.put(key, replace(row, expires_at=0.0).encode(), db=dbs.leases)


def _put_approval(
    txn: lmdb.Transaction[bytes], dbs: Dbs, key: bytes, approval_id: str, body: bytes
) -> None:
    """Store ``body`` (an approval's JSON) as a pending approval of the session ``key``
    (its index entry moves if the id was pending for another session)."""
    aid = approval_id.encode()
    found = txn.get(aid, db=dbs.approvals)
    if found is not None:
        owner = _json(found)["session_id"].encode()
        if owner != key:
            txn.delete(layout.under(owner) + aid, db=dbs.by_session)
    txn.put(aid, body, db=dbs.approvals)
    txn.put(layout.under(key) + aid, b"", db=dbs.by_session)


def _put_latest(
    txn: lmdb.Transaction[bytes], dbs: Dbs, key: bytes, row: Row, old: Row | None
) -> None:
    txn.put(key, row.encode(), db=dbs.sessions)
    if old is None or old.status is not row.status:
        if old is not None:
            txn.delete(bytes([layout.STATUS_CODES[old.status]]) + key, db=dbs.by_status)
        txn.put(bytes([layout.STATUS_CODES[row.status]]) + key, b"", db=dbs.by_status)


def _append_history(
    txn: lmdb.Transaction[bytes], dbs: Dbs, key: bytes, row: Row | None, limit: int
) -> set[int]:
    """Append ``row`` (if any) to the ring, keep the newest ``limit``; the logs of the rows
    dropped. A session's history rows are numbered ``first..last`` without gaps (appended
    at the end, dropped from the start); ``history_ends`` keeps the two numbers."""
    found = txn.get(key, db=dbs.history_ends)
    first, last = layout.from_ends(found) if found is not None else (1, 0)
    if row is not None and limit:
        last += 1
        txn.put(layout.numbered(key, last), row.encode(), db=dbs.history)
    pruned: set[int] = set()
    while last - first + 1 > limit:
        old_key = layout.numbered(key, first)
        pruned.add(Row.log_id_of(_get(txn, old_key, dbs.history)))
        txn.delete(old_key, db=dbs.history)
        first += 1
    if first <= last:
        txn.put(key, layout.ends(first, last), db=dbs.history_ends)
    elif found is not None:
        txn.delete(key, db=dbs.history_ends)
    return pruned


def _collect_logs(
    txn: lmdb.Transaction[bytes], dbs: Dbs, key: bytes, current: int | None, candidates: set[int]
) -> None:
    """Drop the candidate logs that neither the latest row nor a history row reads."""
    if current is not None:
        candidates.discard(current)
    if not candidates:
        return
    for _, value in keys_under(txn, dbs.history, key):
        candidates.discard(Row.log_id_of(value))
        if not candidates:
            return
    for log_id in candidates:
        _drop_log(txn, dbs, key, log_id)


def _remove_approval(txn: lmdb.Transaction[bytes], dbs: Dbs, key: bytes, approval_id: str) -> None:
    txn.delete(approval_id.encode(), db=dbs.approvals)
    txn.delete(layout.under(key) + approval_id.encode(), db=dbs.by_session)


def _summary(value: bytes) -> SessionSummary:
    row = Row.decode(value)
    return codec.decode_summary(row.header, row.count)


def _json(value: bytes) -> Any:
    return json.loads(value)
