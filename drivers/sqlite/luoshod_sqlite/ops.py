"""The driver's operations as plain functions of a connection, run on the database thread.

Layout (see :mod:`.queries`): a save appends only ``messages[stored_messages:]`` to the
session's message log and writes one header row per table, so its cost is O(new
messages); a history entry is a header plus ``(log_id, message_count)``, a prefix of a
log that later saves only extend. A rewritten transcript gets a new log, and a log that
nothing refers to any more is dropped with its messages in the same transaction.

A save is encoded by :func:`..prepared.prepare` on the caller's thread, before it is queued, so the
database thread only runs SQL. A message body is the binary form of :mod:`..codec`.

A save's events, approval and claim are written in the same transaction as its
checkpoint, and ``append_events`` goes through the same batches (:class:`PreparedEvents`).
A session's event log keeps its count in ``event_logs``: an append inserts its events as
loose rows, deletes the rows at or below the plan's seq floor from the start of the
``(session_id, seq)`` index, O(rows deleted), then seals each range of 64 seqs it
completed into one compressed block row keyed by its last seq
(:mod:`luoshod.store.kit.eventblocks`). Seqs increase along a log, so an event whose seq
is not above the log's last is taken as already logged and ignored.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from luoshod.domain import (
    AppliedRequest,
    Approval,
    Checkpoint,
    EventPage,
    HistoryEntry,
    Lease,
    Message,
    SessionSummary,
    Status,
    StoredEvent,
)
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

from . import queries, queue

#: The store's clock (``Store.clock``), read on the database thread.
Clock = Callable[[], float]


def load(conn: sqlite3.Connection, session_id: str) -> Checkpoint | None:
    row = conn.execute(queries.SELECT_SESSION, (session_id,)).fetchone()
    if row is None:
        return None
    log_id, count, header = row
    return codec.decode_checkpoint(header, _messages(conn, log_id, count))


def save_batch(conn: sqlite3.Connection, batch: Sequence[Queued[Prepared]]) -> None:
    """Apply a batch of saves and appends inside the caller's write transaction, in a few
    statements: what the batch is checked against is read, the kit plans it
    (:func:`~luoshod.store.kit.planning.plan_batch`: refused writes get their error and
    write nothing), and the rows of the others are written together. An
    ``sqlite3.Error`` leaves the transaction for the caller to roll back."""
    keys = planning.reads(batch)
    stored = planning.Stored(
        tokens=dict(_select(conn, queries.SELECT_TOKENS, keys.fenced)),
        pending=dict(_select(conn, queries.SELECT_PENDING, keys.claims)),
        event_logs={
            sid: (kept, last or 0)
            for sid, kept, last in _select(conn, queries.SELECT_EVENT_LOGS, keys.logged)
        },
    )
    stored.request_last = {
        sid: last
        for sid, last in _select(conn, queries.SELECT_REQUEST_LAST, keys.requested)
        if last
    }
    stored.request_numbers = {
        (sid, rid): n
        for sid, rid, n in _select(conn, queries.SELECT_REQUEST_NUMBERS, keys.request_keys)
    }
    logs: dict[str, int] = {}  # the log each session's latest checkpoint reads
    for sid, log_id, version, count in _select(conn, queries.SELECT_HEADS, keys.saved):
        stored.heads[sid] = planning.Head(version, count)
        logs[sid] = log_id
    plan = planning.plan_batch(batch, stored)
    messages: list[tuple[int, int, bytes]] = []
    sessions: list[dict[str, Any]] = []
    history: list[dict[str, Any]] = []
    for planned in plan.saves:
        p = planned.save
        sid = p.session_id
        if planned.new_log:
            logs[sid] = _new_log(conn, sid)
        log_id = logs[sid]
        messages += ((log_id, planned.start + i, body) for i, body in enumerate(planned.bodies))
        row = _session_row(sid, log_id, p.checkpoint, p.header, planned.count)
        sessions.append(row)
        if p.history_limit:
            history.append(row)
    conn.executemany(queries.INSERT_MESSAGE, messages)
    conn.executemany(queries.UPSERT_SESSION, sessions)
    conn.executemany(queries.INSERT_HISTORY, history)
    conn.executemany(
        queries.PRUNE_HISTORY,
        [{"session_id": s, "keep": k} for s, k in plan.history_limits.items()],
    )
    approvals = plan.approvals.items()
    conn.executemany(queries.DELETE_APPROVAL, [(a,) for a, (_, body) in approvals if body is None])
    conn.executemany(
        queries.UPSERT_APPROVAL,
        [(a, sid, body) for a, (sid, body) in approvals if body is not None],
    )
    conn.executemany(
        queries.INSERT_EVENT, [(e.session_id, s.seq, s.data) for e in plan.events for s in e.new]
    )
    conn.executemany(
        queries.PRUNE_EVENTS,
        [{"session_id": e.session_id, "floor": e.floor} for e in plan.events if e.floor],
    )
    for e in plan.events:
        for first, last in e.seal:
            _seal(conn, e.session_id, first, last)
    conn.executemany(
        queries.UPSERT_EVENT_LOG,
        [{"session_id": e.session_id, "kept": e.kept} for e in plan.events if e.kept],
    )
    conn.executemany(
        queries.DELETE_EVENT_LOG, [(e.session_id,) for e in plan.events if not e.kept and e.existed]
    )
    conn.executemany(
        queries.UPSERT_REQUEST, [(r.session_id, r.request_id, r.n, r.body) for r in plan.requests]
    )
    conn.executemany(
        queries.PRUNE_REQUESTS,
        [{"session_id": sid, "floor": floor} for sid, floor in plan.request_floors.items()],
    )
    # A session's log falls out of use after a rewrite, once the last history entry over it
    # is dropped: only sessions with more than one log have one to look for.
    rewritten = plan.rewritten | {
        sid for (sid,) in _select(conn, queries.SESSIONS_WITH_OLD_LOGS, keys.saved)
    }
    for sid in rewritten:
        conn.execute(queries.DELETE_UNREFERENCED_LOGS, {"session_id": sid})
    for q in plan.enqueue:  # e.g. the webhooks' outbox entry of an event written above
        queue.enqueue(conn, q.session_id, q.request_id, q.data, False, q.enqueued_at)


def _select(conn: sqlite3.Connection, statement: str, keys: Sequence[Any]) -> list[Any]:
    """The rows of ``statement`` over ``keys`` (a JSON array); none without keys."""
    return conn.execute(statement, (json.dumps(keys),)).fetchall() if keys else []


def acquire_lease(
    conn: sqlite3.Connection, session_id: str, owner: str, ttl: float, address: str, clock: Clock
) -> Lease:
    """See ``Store.acquire_lease``; in a write transaction, on the store's ``clock``."""
    now = clock()
    row = conn.execute(queries.SELECT_LEASE, (session_id,)).fetchone()
    if row is not None:
        holder, token, expires_at = row
        if expires_at > now:
            raise lease_busy(session_id, holder, expires_at)
    lease = Lease(session_id, owner, row[1] + 1 if row else 1, now + ttl, address)
    conn.execute(queries.UPSERT_LEASE, (session_id, owner, lease.token, lease.expires_at, address))
    return lease


def renew_lease(conn: sqlite3.Connection, lease: Lease, ttl: float, clock: Clock) -> Lease:
    renewed = replace(lease, expires_at=clock() + ttl)
    updated = conn.execute(
        queries.SET_LEASE_EXPIRY, (renewed.expires_at, lease.session_id, lease.token)
    ).rowcount
    if not updated:
        row = conn.execute(queries.SELECT_LEASE, (lease.session_id,)).fetchone()
        raise lease_lost(lease, row[1] if row else None)
    return renewed


def renew_leases(
    conn: sqlite3.Connection, leases: list[Lease], ttl: float, clock: Clock
) -> Renewal:
    """See ``Store.renew_leases``: every lease in one write transaction (one sync)."""
    expires_at = clock() + ttl
    conn.executemany(
        queries.SET_LEASE_EXPIRY, [(expires_at, lease.session_id, lease.token) for lease in leases]
    )
    current = dict(_select(conn, queries.SELECT_TOKENS, [lease.session_id for lease in leases]))
    return renewal_of(leases, current, expires_at)


def list_leases(
    conn: sqlite3.Connection, owner: str | None, after: str, limit: int, clock: Clock
) -> list[Lease]:
    rows = conn.execute(queries.LIST_LEASES, (after, clock(), owner, owner, limit))
    return [Lease(*row) for row in rows]


def release_lease(conn: sqlite3.Connection, lease: Lease) -> None:
    conn.execute(queries.SET_LEASE_EXPIRY, (0.0, lease.session_id, lease.token))


def release_leases_of(conn: sqlite3.Connection, owner: str, clock: Clock) -> int:
    return conn.execute(queries.RELEASE_LEASES_OF, (owner, clock())).rowcount


def delete(
    conn: sqlite3.Connection, session_id: str, keep_history: bool, keep_queue: bool = False
) -> bool:
    existed = conn.execute(queries.DELETE_SESSION, (session_id,)).rowcount > 0
    conn.execute(queries.DELETE_SESSION_APPROVALS, (session_id,))
    conn.execute(queries.DELETE_REQUESTS, (session_id,))
    if not keep_queue:
        queue.clear(conn, session_id)
    if not keep_history:
        conn.execute(queries.DELETE_HISTORY, (session_id,))
        conn.execute(queries.DELETE_EVENTS, (session_id,))
        conn.execute(queries.DELETE_EVENT_LOG, (session_id,))
    conn.execute(queries.DELETE_UNREFERENCED_LOGS, {"session_id": session_id})
    return existed


def read_events(conn: sqlite3.Connection, session_id: str, after: int, limit: int) -> EventPage:
    """``after`` and ``limit`` already within SQLite's integers (:func:`..base.clamp_seq`)."""
    first, last = conn.execute(queries.SELECT_EVENT_ENDS, {"session_id": session_id}).fetchone()
    if first is None:
        return EventPage([], 0, 0)
    events = []
    if limit > 0:
        rows = conn.execute(
            queries.SELECT_EVENTS, {"session_id": session_id, "after": after, "limit": limit}
        )
        events = [StoredEvent(seq, data) for seq, data in rows]
    return EventPage(events, first, last)


def find_request(
    conn: sqlite3.Connection, session_id: str, request_id: str
) -> AppliedRequest | None:
    row = conn.execute(queries.SELECT_REQUEST, (session_id, request_id)).fetchone()
    return AppliedRequest.from_dict(json.loads(row[0])) if row is not None else None


def requests(conn: sqlite3.Connection, session_id: str) -> list[AppliedRequest]:
    rows = conn.execute(queries.SELECT_REQUESTS, (session_id,))
    return [AppliedRequest.from_dict(json.loads(body)) for (body,) in rows]


def get_approval(conn: sqlite3.Connection, approval_id: str) -> Approval | None:
    row = conn.execute(queries.SELECT_APPROVAL, (approval_id,)).fetchone()
    return Approval.from_dict(json.loads(row[0])) if row is not None else None


def list_approvals(
    conn: sqlite3.Connection, session_id: str | None, after: str, limit: int
) -> list[Approval]:
    if session_id is None:
        rows = conn.execute(queries.LIST_APPROVALS, {"after": after, "limit": limit})
    else:
        rows = conn.execute(
            queries.LIST_SESSION_APPROVALS,
            {"session_id": session_id, "after": after, "limit": limit},
        )
    return [Approval.from_dict(json.loads(body)) for (body,) in rows]


def list_sessions(
    conn: sqlite3.Connection, status: Status | None, after: str, limit: int
) -> list[SessionSummary]:
    if status is None:
        rows = conn.execute(queries.LIST_SESSIONS, {"after": after, "limit": limit})
    else:
        rows = conn.execute(
            queries.LIST_SESSIONS_BY_STATUS,
            {"status": status.value, "after": after, "limit": limit},
        )
    return [codec.decode_summary(header, count) for count, header in rows]


def list_sessions_in(
    conn: sqlite3.Connection, status: Status | None, low: str, high: str, skip: str, limit: int
) -> list[SessionSummary]:
    args = {"low": low, "high": high, "skip": skip, "limit": limit}
    if status is None:
        rows = conn.execute(queries.LIST_SESSIONS_IN, args)
    else:
        rows = conn.execute(queries.LIST_SESSIONS_IN_BY_STATUS, {**args, "status": status.value})
    return [codec.decode_summary(header, count) for count, header in rows]


def history(conn: sqlite3.Connection, session_id: str, limit: int | None) -> list[HistoryEntry]:
    rows = conn.execute(
        queries.SELECT_HISTORY, (session_id, -1 if limit is None else limit)
    ).fetchall()
    longest = codec.longest_prefixes(rows)
    logs = {log_id: _messages(conn, log_id, count) for log_id, count in longest.items()}
    return codec.decode_history(rows, logs)


def session_ids(conn: sqlite3.Connection, after: str, limit: int) -> list[str]:
    return [sid for (sid,) in conn.execute(queries.SESSION_IDS, {"after": after, "limit": limit})]


def import_session(
    conn: sqlite3.Connection,
    session_id: str,
    latest: Checkpoint | None,
    history: Sequence[Checkpoint],
    approvals: Sequence[Approval],
    events: Sequence[StoredEvent],
    requests: Sequence[AppliedRequest] = (),
) -> None:
    """Replace the session by ``history`` (oldest first, already trimmed), ``latest``, its
    pending ``approvals``, its event log (``events``, checked and already trimmed) and its
    request records (oldest first)."""
    conn.execute(queries.DELETE_REQUESTS, (session_id,))
    conn.executemany(
        queries.UPSERT_REQUEST,
        [(session_id, r.id, n, codec.encode_json(r.to_dict())) for n, r in enumerate(requests, 1)],
    )
    conn.execute(queries.DELETE_SESSION, (session_id,))
    conn.execute(queries.DELETE_HISTORY, (session_id,))
    conn.execute(queries.DELETE_SESSION_LOGS, (session_id,))
    conn.execute(queries.DELETE_SESSION_APPROVALS, (session_id,))
    conn.execute(queries.DELETE_EVENTS, (session_id,))
    conn.execute(queries.DELETE_EVENT_LOG, (session_id,))
    conn.executemany(
        queries.UPSERT_APPROVAL,
        [(a.approval_id, session_id, codec.encode_json(a.to_dict())) for a in approvals],
    )
    conn.executemany(
        queries.INSERT_EVENT, [(session_id, e.seq, e.data) for e in eventblocks.loose_rows(events)]
    )
    if events:
        conn.execute(queries.UPSERT_EVENT_LOG, {"session_id": session_id, "kept": len(events)})
    checkpoints = [*history, *([latest] if latest else [])]
    log_id = 0
    for i, (cp, step) in enumerate(zip(checkpoints, importing.log_steps(checkpoints))):
        if step.new_log:
            log_id = _new_log(conn, session_id)
        conn.executemany(
            queries.INSERT_MESSAGE, ((log_id, step.start + k, b) for k, b in enumerate(step.bodies))
        )
        row = _session_row(session_id, log_id, cp, codec.encode_compact_header(cp), step.count)
        conn.execute(queries.INSERT_HISTORY if i < len(history) else queries.UPSERT_SESSION, row)


def _seal(conn: sqlite3.Connection, session_id: str, first: int, last: int) -> None:
    """Swap the loose rows of ``first..last`` for their block, when they are all there."""
    args = {"session_id": session_id, "first": first, "last": last}
    rows = [StoredEvent(seq, data) for seq, data in conn.execute(queries.SELECT_EVENT_RANGE, args)]
    block = eventblocks.seal(rows, first, last)
    if block is not None:
        conn.execute(queries.DELETE_EVENT_RANGE, args)
        conn.execute(queries.INSERT_EVENT, (session_id, last, block))


def _new_log(conn: sqlite3.Connection, session_id: str) -> int:
    log_id = conn.execute(queries.INSERT_LOG, (session_id,)).lastrowid
    assert log_id is not None  # an INSERT sets it
    return log_id


def _session_row(
    sid: str, log_id: int, cp: Checkpoint, header: str | bytes, count: int
) -> dict[str, Any]:
    """The parameters of UPSERT_SESSION and INSERT_HISTORY for ``cp``, over the first
    ``count`` records of its log."""
    return {
        "session_id": sid,
        "log_id": log_id,
        "version": cp.version,
        "status": cp.status.value,
        "message_count": count,
        "updated_at": cp.updated_at,
        "saved_at": cp.updated_at,
        "step": cp.step_index,
        "header": header,
    }


def _messages(conn: sqlite3.Connection, log_id: int, count: int) -> list[codec.LogRecord]:
    """A log's first ``count`` records. Bodies are :mod:`..codec` blobs (BLOB values in
    the TEXT column); bodies written by earlier versions are JSON text, read as such."""
    rows = conn.execute(queries.SELECT_MESSAGES, (log_id, count)).fetchall()
    if all(isinstance(body, bytes) for (body,) in rows):
        return codec.decode_messages(b"".join(body for (body,) in rows))
    return [
        codec.decode_messages(body)[0]
        if isinstance(body, bytes)
        else Message.from_dict(json.loads(body))
        for (body,) in rows
    ]
