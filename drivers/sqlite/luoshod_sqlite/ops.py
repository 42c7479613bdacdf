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
A session's event log keeps its count in ``event_logs``: an append inserts its events,
then deletes the oldest beyond the limit from the start of the ``(session_id, seq)`` index,
O(new events). Seqs increase along a log, so an event whose seq is not above the log's
last is taken as already logged and ignored (the count stays exact).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from luoshod.domain import (
    Approval,
    Checkpoint,
    EventPage,
    FinishReason,
    HistoryEntry,
    Lease,
    Message,
    SessionSummary,
    Status,
    StoredEvent,
)
from luoshod.store.kit import codec
from luoshod.store.kit import extends, lease_busy, lease_lost
from luoshod.store.kit.groupcommit import Queued
from luoshod.store.kit.prepared import PreparedEvents, PreparedSave, refusal
from . import queries

#: The store's clock (``Store.clock``), read on the database thread.
Clock = Callable[[], float]


def load(conn: sqlite3.Connection, session_id: str) -> Checkpoint | None:
    row = conn.execute(queries.SELECT_SESSION, (session_id,)).fetchone()
    if row is None:
        return None
    log_id, count, header = row
    return Checkpoint.from_header(codec.decode_header(header), _messages(conn, log_id, count))


def save_batch(
    conn: sqlite3.Connection, batch: Sequence[Queued[PreparedSave | PreparedEvents]]
) -> None:
    """Apply a batch of saves and appends inside the caller's write transaction, in a few
    statements.

    Every save is checked first, in order, against what is stored and the saves of the
    batch before it: its lease (the session's fencing token), its claim (the approval
    must be pending for its session), then its version. A refused save or append gets
    ``LeaseLost`` or ``ApprovalNotFound`` as its ``error`` and writes nothing. Then the
    rows of all the others are written together. An ``sqlite3.Error`` leaves the
    transaction for the caller to roll back.
    """
    tokens = _tokens(conn, batch)
    saves = [item.payload for item in batch if isinstance(item.payload, PreparedSave)]
    sids = sorted({p.checkpoint.session_id for p in saves})
    heads: dict[str, tuple[int, int, int]] = {}
    if sids:
        heads = {
            sid: (log_id, version, count)
            for sid, log_id, version, count in conn.execute(
                queries.SELECT_HEADS, (json.dumps(sids),)
            )
        }
    # The session of each approval the batch claims that is pending; then, as the batch
    # goes, what each approval it touches becomes: (session, JSON) or None (claimed).
    claims = sorted({p.claim for p in saves if p.claim is not None})
    pending: dict[str, str] = {}
    if claims:
        pending = dict(conn.execute(queries.SELECT_PENDING, (json.dumps(claims),)).fetchall())
    approvals: dict[str, tuple[str, str] | None] = {}
    events = _EventBatch(conn, batch)
    messages: list[tuple[int, int, bytes]] = []
    sessions: list[dict[str, Any]] = []
    history: list[dict[str, Any]] = []
    limits: dict[str, int] = {}
    rewritten: set[str] = set()
    for item in batch:
        p = item.payload
        head = heads.get(p.session_id)
        item.error = refusal(
            p, token=tokens.get(p.session_id), pending=pending, stored_version=head[1] if head else 0
        )
        if item.error is not None:
            continue
        if isinstance(p, PreparedEvents):
            events.add(p.session_id, p.events, p.event_log_limit)
            continue
        cp, sid = p.checkpoint, p.session_id
        count = len(cp.messages)
        if head is not None and p.stored_messages == head[2] and count >= p.stored_messages:
            log_id, start, bodies = head[0], p.stored_messages, p.new_bodies
        else:
            # A new session, one recreated after delete, or a rewritten transcript.
            log_id = conn.execute(queries.INSERT_LOG, (sid,)).lastrowid  # type: ignore[assignment]
            start, bodies = 0, [codec.encode_message(m) for m in cp.messages]
            if head is not None:
                rewritten.add(sid)
        heads[sid] = (log_id, cp.version, count)
        messages += ((log_id, start + i, body) for i, body in enumerate(bodies))
        row = _session_row(sid, log_id, cp, p.header)
        sessions.append(row)
        if p.history_limit:
            history.append(row)
        limits[sid] = p.history_limit
        if p.claim is not None:
            del pending[p.claim]
            approvals[p.claim] = None
        if p.approval is not None:
            pending[p.approval.approval_id] = sid
            approvals[p.approval.approval_id] = (sid, p.approval_body)
        if p.events:
            events.add(sid, p.events, p.event_log_limit)
    conn.executemany(queries.INSERT_MESSAGE, messages)
    conn.executemany(queries.UPSERT_SESSION, sessions)
    conn.executemany(queries.INSERT_HISTORY, history)
    # Every session's history is pruned to the limit of its last save: a session whose
    # own limit shrank (history_limit 0 included) drops its surplus now.
    conn.executemany(
        queries.PRUNE_HISTORY, [{"session_id": s, "keep": k} for s, k in limits.items()]
    )
    conn.executemany(
        queries.DELETE_APPROVAL, [(aid,) for aid, value in approvals.items() if value is None]
    )
    conn.executemany(
        queries.UPSERT_APPROVAL,
        [(aid, *value) for aid, value in approvals.items() if value is not None],
    )
    events.write()
    # A session's log falls out of use after a rewrite, once the last history entry over it
    # is dropped: only sessions with more than one log have one to look for.
    if sids:
        rewritten.update(
            sid for (sid,) in conn.execute(queries.SESSIONS_WITH_OLD_LOGS, (json.dumps(sids),))
        )
    for sid in rewritten:
        conn.execute(queries.DELETE_UNREFERENCED_LOGS, {"session_id": sid})


def _tokens(
    conn: sqlite3.Connection, batch: Sequence[Queued[PreparedSave | PreparedEvents]]
) -> dict[str, int]:
    """The fencing token of each session the batch writes under a lease."""
    sids = sorted({item.payload.session_id for item in batch if item.payload.lease})
    if not sids:
        return {}
    return dict(conn.execute(queries.SELECT_TOKENS, (json.dumps(sids),)).fetchall())


def acquire_lease(
    conn: sqlite3.Connection, session_id: str, owner: str, ttl: float, clock: Clock
) -> Lease:
    """See ``Store.acquire_lease``; in a write transaction, on the store's ``clock``."""
    now = clock()
    row = conn.execute(queries.SELECT_LEASE, (session_id,)).fetchone()
    if row is not None:
        holder, token, expires_at = row
        if expires_at > now:
            raise lease_busy(session_id, holder, expires_at)
    lease = Lease(session_id, owner, row[1] + 1 if row else 1, now + ttl)
    conn.execute(queries.UPSERT_LEASE, (session_id, owner, lease.token, lease.expires_at))
    return lease


def renew_lease(conn: sqlite3.Connection, lease: Lease, ttl: float, clock: Clock) -> Lease:
    renewed = Lease(lease.session_id, lease.owner, lease.token, clock() + ttl)
    updated = conn.execute(
        queries.SET_LEASE_EXPIRY, (renewed.expires_at, lease.session_id, lease.token)
    ).rowcount
    if not updated:
        row = conn.execute(queries.SELECT_LEASE, (lease.session_id,)).fetchone()
        raise lease_lost(lease, row[1] if row else None)
    return renewed


def release_lease(conn: sqlite3.Connection, lease: Lease) -> None:
    conn.execute(queries.SET_LEASE_EXPIRY, (0.0, lease.session_id, lease.token))


def release_leases_of(conn: sqlite3.Connection, owner: str, clock: Clock) -> int:
    return conn.execute(queries.RELEASE_LEASES_OF, (owner, clock())).rowcount


class _EventBatch:
    """The events of a batch, per session: checked against each log's last seq, then
    written with a few statements, each log pruned to its limit."""

    def __init__(
        self, conn: sqlite3.Connection, batch: Sequence[Queued[PreparedSave | PreparedEvents]]
    ) -> None:
        self.conn = conn
        sids = sorted(
            {
                p.session_id if isinstance(p, PreparedEvents) else p.checkpoint.session_id
                for p in (item.payload for item in batch)
                if p.events
            }
        )
        #: session → [events kept, last seq] as stored, then as the batch goes.
        self.logs: dict[str, list[int]] = {}
        if sids:
            self.logs = {
                sid: [kept, last or 0]
                for sid, kept, last in conn.execute(queries.SELECT_EVENT_LOGS, (json.dumps(sids),))
            }
        self.stored_kept = {sid: log[0] for sid, log in self.logs.items()}
        self.new: dict[str, list[StoredEvent]] = {}
        self.limits: dict[str, int] = {}

    def add(self, sid: str, events: Sequence[StoredEvent], limit: int) -> None:
        log = self.logs.setdefault(sid, [0, 0])
        new = self.new.setdefault(sid, [])
        for e in events:
            if e.seq > log[1]:  # else already logged
                new.append(e)
                log[1] = e.seq
        self.limits[sid] = limit

    def write(self) -> None:
        rows: list[tuple[str, int, bytes]] = []
        counts: list[dict[str, Any]] = []
        emptied: list[tuple[str]] = []
        prunes: list[dict[str, Any]] = []
        for sid, new in self.new.items():
            limit = self.limits[sid]
            new = new[max(0, len(new) - limit) :] if limit else []  # the rest go at once
            kept = self.stored_kept.get(sid, 0) + len(new)
            drop = max(0, kept - limit)
            rows += ((sid, e.seq, e.data) for e in new)
            if drop:
                prunes.append({"session_id": sid, "drop": drop})
            if kept - drop:
                counts.append({"session_id": sid, "kept": kept - drop})
            elif sid in self.stored_kept:
                emptied.append((sid,))
        self.conn.executemany(queries.INSERT_EVENT, rows)
        self.conn.executemany(queries.PRUNE_EVENTS, prunes)
        self.conn.executemany(queries.UPSERT_EVENT_LOG, counts)
        self.conn.executemany(queries.DELETE_EVENT_LOG, emptied)


def delete(conn: sqlite3.Connection, session_id: str, keep_history: bool) -> bool:
    existed = conn.execute(queries.DELETE_SESSION, (session_id,)).rowcount > 0
    conn.execute(queries.DELETE_SESSION_APPROVALS, (session_id,))
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
    return [_summary(count, codec.decode_header(header)) for count, header in rows]


def history(conn: sqlite3.Connection, session_id: str, limit: int | None) -> list[HistoryEntry]:
    rows = conn.execute(
        queries.SELECT_HISTORY, (session_id, -1 if limit is None else limit)
    ).fetchall()
    # Entries share logs: read each log once, up to the longest prefix any entry needs.
    longest: dict[int, int] = {}
    for *_, log_id, count, _header in rows:
        longest[log_id] = max(count, longest.get(log_id, 0))
    logs = {log_id: _messages(conn, log_id, count) for log_id, count in longest.items()}
    return [
        HistoryEntry(
            step,
            saved_at,
            Status(status),
            Checkpoint.from_header(codec.decode_header(header), logs[log_id][:count]),
        )
        for step, saved_at, status, log_id, count, header in rows
    ]


def session_ids(conn: sqlite3.Connection, after: str, limit: int) -> list[str]:
    return [sid for (sid,) in conn.execute(queries.SESSION_IDS, {"after": after, "limit": limit})]


def import_session(
    conn: sqlite3.Connection,
    session_id: str,
    latest: Checkpoint | None,
    history: Sequence[Checkpoint],
    approvals: Sequence[Approval],
    events: Sequence[StoredEvent],
) -> None:
    """Replace the session by ``history`` (oldest first, already trimmed), ``latest``, its
    pending ``approvals`` and its event log (``events``, checked and already trimmed)."""
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
    conn.executemany(queries.INSERT_EVENT, [(session_id, e.seq, e.data) for e in events])
    if events:
        conn.execute(queries.UPSERT_EVENT_LOG, {"session_id": session_id, "kept": len(events)})
    # The log the previous checkpoint is a prefix of (0: none yet), and its messages.
    log_id, log = 0, []
    for cp in history:
        log_id, log = _log_after(conn, session_id, log_id, log, cp.messages)
        row = _session_row(session_id, log_id, cp, codec.encode_header(cp))
        conn.execute(queries.INSERT_HISTORY, row)
    if latest is not None:
        log_id, log = _log_after(conn, session_id, log_id, log, latest.messages)
        row = _session_row(session_id, log_id, latest, codec.encode_header(latest))
        conn.execute(queries.UPSERT_SESSION, row)


def _log_after(
    conn: sqlite3.Connection, sid: str, log_id: int, log: list[Message], messages: list[Message]
) -> tuple[int, list[Message]]:
    """The log holding ``messages``: the previous one extended if they extend it."""
    if log_id and extends(log, messages):
        _append(conn, log_id, len(log), [codec.encode_message(m) for m in messages[len(log) :]])
        return log_id, list(messages)
    return _new_log(conn, sid, messages), list(messages)


def _new_log(conn: sqlite3.Connection, sid: str, messages: list[Message]) -> int:
    log_id: int = conn.execute(queries.INSERT_LOG, (sid,)).lastrowid  # type: ignore[assignment]
    _append(conn, log_id, 0, [codec.encode_message(m) for m in messages])
    return log_id


def _append(conn: sqlite3.Connection, log_id: int, start: int, bodies: list[bytes]) -> None:
    conn.executemany(
        queries.INSERT_MESSAGE, ((log_id, start + i, body) for i, body in enumerate(bodies))
    )


def _session_row(sid: str, log_id: int, cp: Checkpoint, header: str) -> dict[str, Any]:
    """The parameters of UPSERT_SESSION and INSERT_HISTORY for ``cp``."""
    return {
        "session_id": sid,
        "log_id": log_id,
        "version": cp.version,
        "status": cp.status.value,
        "message_count": len(cp.messages),
        "updated_at": cp.updated_at,
        "saved_at": cp.updated_at,
        "step": cp.step_index,
        "header": header,
    }


def _messages(conn: sqlite3.Connection, log_id: int, count: int) -> list[Message]:
    """A log's first ``count`` messages. Bodies are :mod:`..codec` blobs (BLOB values in
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


def _summary(message_count: int, h: dict[str, Any]) -> SessionSummary:
    return SessionSummary(
        h["session_id"],
        Status(h["status"]),
        FinishReason(h["finish_reason"]),
        h["step_index"],
        message_count,
        h["approval_id"],
        h["updated_at"],
    )
