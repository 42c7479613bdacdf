"""The driver's operations as coroutines of a connection (SQL in :mod:`.queries`).

The layout is the SQLite driver's: a save appends only ``messages[stored_messages:]`` to
the session's message log and writes one header row, so its cost is O(new messages); a
history entry is a header plus ``(log_id, message_count)``, a prefix of a log that later
saves only extend. A rewritten transcript gets a new log, and a log nothing refers to any
more is dropped with its messages in the same transaction. Message bodies are the binary
form of :mod:`..codec`.

A batch of saves and appends (:func:`save_batch`) is one transaction: it locks its
sessions, checks every save against what is stored (fencing token, claim, version), then
writes the rows of the saves that passed with one statement per table.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from psycopg import AsyncConnection, AsyncCursor

from luoshod.domain import (
    Approval,
    Checkpoint,
    EventPage,
    FinishReason,
    HistoryEntry,
    Message,
    SessionSummary,
    Status,
    StoredEvent,
)
from luoshod.store.kit import codec
from luoshod.store.kit import extends
from luoshod.store.kit.groupcommit import Queued
from luoshod.store.kit.prepared import Prepared, PreparedEvents, PreparedSave, refusal
from . import queries



async def load(conn: AsyncConnection, session_id: str) -> Checkpoint | None:
    row = await (await conn.execute(queries.SELECT_SESSION, (session_id,))).fetchone()
    if row is None:
        return None
    header, stream = row
    return Checkpoint.from_header(codec.decode_header(header), codec.decode_messages(stream or b""))


async def save_batch(conn: AsyncConnection, batch: Sequence[Queued[Prepared]]) -> None:
    """Apply a batch of saves and appends inside the caller's write transaction, which
    holds the lock of every session of the batch.

    Every item is checked first, in queue order, against what is stored and the items
    before it: its fencing token (``LeaseLost``), then a save's claim (the approval must
    be pending for its session: ``ApprovalNotFound``), then its version (``LeaseLost``).
    A refused item gets the error as its ``error`` and writes nothing; the rows of all the
    others are then written together. A ``psycopg.Error`` fails the whole transaction.
    """
    saves = [item.payload for item in batch if isinstance(item.payload, PreparedSave)]
    sids = sorted({p.session_id for p in saves})
    fenced = sorted({item.payload.session_id for item in batch if item.payload.lease})
    claims = sorted({p.claim for p in saves if p.claim is not None})
    logged = sorted({item.payload.session_id for item in batch if item.payload.events})
    # Sent together, read together: one round trip (the connection is in pipeline mode).
    reads = [
        await _select(conn, queries.SELECT_TOKENS, fenced),
        await _select(conn, queries.SELECT_HEADS, sids),
        await _select(conn, queries.SELECT_PENDING, claims),
        await _select(conn, queries.SELECT_EVENT_LOGS, logged),
    ]
    token_rows, head_rows, pending_rows, log_rows = [await _rows(cur) for cur in reads]
    # The current fencing token of each session written under a lease (FOR SHARE: a
    # takeover waits for this transaction), the session of each approval claimed.
    tokens: dict[str, int] = dict(token_rows)  # type: ignore[arg-type]
    heads = {sid: (log_id, version, count) for sid, log_id, version, count in head_rows}
    pending: dict[str, str] = dict(pending_rows)  # type: ignore[arg-type]
    events = _EventBatch({sid: [kept, last or 0] for sid, kept, last in log_rows})
    # What each approval the batch touches becomes: (session, JSON) or None (claimed).
    approvals: dict[str, tuple[str, str] | None] = {}
    messages: list[tuple[int, int, bytes]] = []
    sessions: dict[str, tuple[Any, ...]] = {}  # the last save of each session wins
    history: list[tuple[Any, ...]] = []
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
            log_id = await _new_log(conn, sid)
            start, bodies = 0, [codec.encode_message(m) for m in cp.messages]
            if head is not None:
                rewritten.add(sid)
        heads[sid] = (log_id, cp.version, count)
        messages += ((log_id, start + i, body) for i, body in enumerate(bodies))
        row = (sid, log_id, cp.version, cp.status.value, count, cp.updated_at, p.header)
        sessions[sid] = row
        if p.history_limit:
            history.append((sid, cp.step_index, cp.status.value, cp.updated_at, log_id, count,
                            p.header))
        limits[sid] = p.history_limit
        if p.claim is not None:
            del pending[p.claim]
            approvals[p.claim] = None
        if p.approval is not None:
            pending[p.approval.approval_id] = sid
            approvals[p.approval.approval_id] = (sid, p.approval_body)
        if p.events:
            events.add(sid, p.events, p.event_log_limit)
    await _execute(conn, queries.INSERT_MESSAGES, messages)
    await _execute(conn, queries.UPSERT_SESSIONS, list(sessions.values()))
    await _execute(conn, queries.INSERT_HISTORY, history)
    # Every session's history is pruned to the limit of its last save: a session whose
    # own limit shrank (history_limit 0 included) drops its surplus now.
    await _execute(conn, queries.PRUNE_HISTORY, list(limits.items()))
    claimed = [aid for aid, value in approvals.items() if value is None]
    if claimed:
        await conn.execute(queries.DELETE_APPROVALS, (claimed,))
    stored = [(aid, *value) for aid, value in approvals.items() if value is not None]
    await _execute(conn, queries.UPSERT_APPROVALS, stored)
    await events.write(conn)
    # A session's log falls out of use after a rewrite, once the last history entry over it
    # is dropped: only sessions with more than one log have one to look for.
    if sessions:
        cur = await conn.execute(queries.SESSIONS_WITH_OLD_LOGS, (list(sessions),))
        rewritten.update(sid for (sid,) in await cur.fetchall())
    if rewritten:
        await conn.execute(queries.DELETE_UNREFERENCED_LOGS, {"session_ids": sorted(rewritten)})


async def _select(
    conn: AsyncConnection, statement: str, keys: list[str]
) -> AsyncCursor[tuple[Any, ...]] | None:
    """``statement`` over ``keys`` sent, its rows not yet read; ``None`` without keys."""
    return await conn.execute(statement, (keys,)) if keys else None


async def _rows(cur: AsyncCursor[tuple[Any, ...]] | None) -> list[tuple[Any, ...]]:
    return await cur.fetchall() if cur is not None else []


async def _execute(
    conn: AsyncConnection, statement: str, rows: Sequence[tuple[Any, ...]]
) -> None:
    """``statement`` over ``rows``, given as one array per column (``unnest``); nothing
    when there are no rows."""
    if rows:
        await conn.execute(statement, [list(column) for column in zip(*rows)])


async def _new_log(conn: AsyncConnection, session_id: str) -> int:
    row = await (await conn.execute(queries.INSERT_LOG, (session_id,))).fetchone()
    assert row is not None
    return int(row[0])


class _EventBatch:
    """The events of a batch, per session: checked against each log's last seq, then
    written with a few statements, each log pruned to its limit."""

    def __init__(self, logs: dict[str, list[int]]) -> None:
        #: session → [events kept, last seq] as stored, then as the batch goes.
        self.logs = logs
        self.stored_kept = {sid: log[0] for sid, log in logs.items()}
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

    async def write(self, conn: AsyncConnection) -> None:
        rows: list[tuple[str, int, bytes]] = []
        counts: list[tuple[str, int]] = []
        emptied: list[str] = []
        prunes: list[tuple[str, int]] = []
        for sid, new in self.new.items():
            limit = self.limits[sid]
            new = new[max(0, len(new) - limit) :] if limit else []  # the rest go at once
            kept = self.stored_kept.get(sid, 0) + len(new)
            drop = max(0, kept - limit)
            rows += ((sid, e.seq, e.data) for e in new)
            if drop:
                prunes.append((sid, drop))
            if kept - drop:
                counts.append((sid, kept - drop))
            elif sid in self.stored_kept:
                emptied.append(sid)
        await _execute(conn, queries.INSERT_EVENTS, rows)
        await _execute(conn, queries.PRUNE_EVENTS, prunes)
        await _execute(conn, queries.UPSERT_EVENT_LOGS, counts)
        if emptied:
            await conn.execute(queries.DELETE_EVENT_LOGS, (emptied,))


async def delete(conn: AsyncConnection, session_id: str, keep_history: bool) -> bool:
    deleted = await conn.execute(queries.DELETE_SESSION, (session_id,))
    await conn.execute(queries.DELETE_SESSION_APPROVALS, (session_id,))
    if not keep_history:
        await conn.execute(queries.DELETE_HISTORY, (session_id,))
        await conn.execute(queries.DELETE_EVENTS, (session_id,))
        await conn.execute(queries.DELETE_EVENT_LOGS, ([session_id],))
    await conn.execute(queries.DELETE_UNREFERENCED_LOGS, {"session_ids": [session_id]})
    return await deleted.fetchone() is not None


async def read_events(conn: AsyncConnection, session_id: str, after: int, limit: int) -> EventPage:
    """``after`` and ``limit`` already within bigint (:func:`..base.clamp_seq`)."""
    cur = await conn.execute(queries.SELECT_EVENT_ENDS, {"session_id": session_id})
    first, last = await cur.fetchone()  # type: ignore[misc]
    if first is None:
        return EventPage([], 0, 0)
    events = []
    if limit > 0:
        cur = await conn.execute(
            queries.SELECT_EVENTS, {"session_id": session_id, "after": after, "limit": limit}
        )
        events = [StoredEvent(seq, bytes(data)) for seq, data in await cur.fetchall()]
    return EventPage(events, first, last)


async def get_approval(conn: AsyncConnection, approval_id: str) -> Approval | None:
    row = await (await conn.execute(queries.SELECT_APPROVAL, (approval_id,))).fetchone()
    return Approval.from_dict(json.loads(row[0])) if row is not None else None


async def list_approvals(
    conn: AsyncConnection, session_id: str | None, after: str, limit: int
) -> list[Approval]:
    if session_id is None:
        cur = await conn.execute(queries.LIST_APPROVALS, {"after": after, "limit": limit})
    else:
        cur = await conn.execute(
            queries.LIST_SESSION_APPROVALS,
            {"session_id": session_id, "after": after, "limit": limit},
        )
    return [Approval.from_dict(json.loads(body)) for (body,) in await cur.fetchall()]


async def list_sessions(
    conn: AsyncConnection, status: Status | None, after: str, limit: int
) -> list[SessionSummary]:
    if status is None:
        cur = await conn.execute(queries.LIST_SESSIONS, {"after": after, "limit": limit})
    else:
        cur = await conn.execute(
            queries.LIST_SESSIONS_BY_STATUS,
            {"status": status.value, "after": after, "limit": limit},
        )
    return [_summary(count, codec.decode_header(header)) for count, header in await cur.fetchall()]


async def history(conn: AsyncConnection, session_id: str, limit: int | None) -> list[HistoryEntry]:
    cur = await conn.execute(queries.SELECT_HISTORY, (session_id, limit))
    rows = await cur.fetchall()
    # Entries share logs: read each log once, up to the longest prefix any entry needs.
    longest: dict[int, int] = {}
    for *_, log_id, count, _header in rows:
        longest[log_id] = max(count, longest.get(log_id, 0))
    logs: dict[int, list[Message]] = {}
    if longest:
        cur = await conn.execute(queries.SELECT_LOGS, (list(longest), list(longest.values())))
        logs = {log_id: codec.decode_messages(stream or b"") for log_id, stream in await cur.fetchall()}
    return [
        HistoryEntry(
            step,
            saved_at,
            Status(status),
            Checkpoint.from_header(codec.decode_header(header), logs[log_id][:count]),
        )
        for step, saved_at, status, log_id, count, header in rows
    ]


async def session_ids(conn: AsyncConnection, after: str, limit: int) -> list[str]:
    cur = await conn.execute(queries.SESSION_IDS, {"after": after, "limit": limit})
    return [sid for (sid,) in await cur.fetchall()]


async def import_session(
    conn: AsyncConnection,
    session_id: str,
    latest: Checkpoint | None,
    history: Sequence[Checkpoint],
    approvals: Sequence[Approval],
    events: Sequence[StoredEvent],
) -> None:
    """Replace the session by ``history`` (oldest first, already trimmed), ``latest``, its
    pending ``approvals`` and its event log (``events``, checked and already trimmed)."""
    for statement in (queries.DELETE_SESSION, queries.DELETE_HISTORY, queries.DELETE_SESSION_LOGS,
                      queries.DELETE_SESSION_APPROVALS, queries.DELETE_EVENTS):
        await conn.execute(statement, (session_id,))
    await conn.execute(queries.DELETE_EVENT_LOGS, ([session_id],))
    await _execute(
        conn,
        queries.UPSERT_APPROVALS,
        [(a.approval_id, session_id, codec.encode_json(a.to_dict())) for a in approvals],
    )
    await _execute(conn, queries.INSERT_EVENTS, [(session_id, e.seq, e.data) for e in events])
    if events:
        await conn.execute(queries.UPSERT_EVENT_LOGS, ([session_id], [len(events)]))
    # The log the previous checkpoint is a prefix of (0: none yet), and its messages.
    log_id, log = 0, []
    entries: list[tuple[Any, ...]] = []
    for cp in history:
        log_id, log = await _log_after(conn, session_id, log_id, log, cp.messages)
        entries.append((session_id, cp.step_index, cp.status.value, cp.updated_at, log_id,
                        len(cp.messages), codec.encode_header(cp)))
    await _execute(conn, queries.INSERT_HISTORY, entries)
    if latest is not None:
        log_id, log = await _log_after(conn, session_id, log_id, log, latest.messages)
        row = (session_id, log_id, latest.version, latest.status.value, len(latest.messages),
               latest.updated_at, codec.encode_header(latest))
        await _execute(conn, queries.UPSERT_SESSIONS, [row])


async def _log_after(
    conn: AsyncConnection, sid: str, log_id: int, log: list[Message], messages: list[Message]
) -> tuple[int, list[Message]]:
    """The log holding ``messages``: the previous one extended if they extend it."""
    start = len(log)
    if not (log_id and extends(log, messages)):
        log_id, start = await _new_log(conn, sid), 0
    bodies = [codec.encode_message(m) for m in messages[start:]]
    await _execute(conn, queries.INSERT_MESSAGES,
                   [(log_id, start + i, body) for i, body in enumerate(bodies)])
    return log_id, list(messages)


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
