"""The driver's operations as coroutines of a connection (SQL in :mod:`.queries`).

The layout is the SQLite driver's: a save appends only ``messages[stored_messages:]`` to
the session's message log and writes one header row, so its cost is O(new messages); a
history entry is a header plus ``(log_id, message_count)``, a prefix of a log that later
saves only extend. A rewritten transcript gets a new log, and a log nothing refers to any
more is dropped with its messages in the same transaction. Message bodies are the binary
form of :mod:`..codec`.

A batch of saves and appends (:func:`save_batch`) is one transaction: it locks its
sessions, reads what every save is checked against (fencing token, claim, version) in one
statement, then writes the rows of the saves that passed in two: one inserting into every
table (a data-modifying CTE a table), one dropping what those rows push out.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

from psycopg import AsyncConnection

from luoshod.domain import (
    AppliedRequest,
    Approval,
    Checkpoint,
    EventPage,
    HistoryEntry,
    SessionSummary,
    Status,
    StoredEvent,
)
from luoshod.store.kit import codec, eventblocks, importing, planning
from luoshod.store.kit.groupcommit import Queued
from luoshod.store.kit.prepared import Prepared

from . import queries, queue
from .arrays import packed


async def load(conn: AsyncConnection, session_id: str) -> Checkpoint | None:
    row = await (await conn.execute(queries.SELECT_SESSION, (session_id,))).fetchone()
    if row is None:
        return None
    header, stream = row
    return codec.decode_checkpoint(header, codec.decode_messages(stream or b""))


async def save_batch(conn: AsyncConnection, batch: Sequence[Queued[Prepared]]) -> None:
    """Apply a batch of saves and appends inside the caller's write transaction, which
    holds the lock of every session of the batch: what the batch is checked against is
    read in one statement and round trip, the kit plans it
    (:func:`~luoshod.store.kit.planning.plan_batch`: refused writes get their error and
    write nothing), and the rows of the others are written in two statements.
    A ``psycopg.Error`` fails the whole transaction."""
    keys = planning.reads(batch)
    # One statement (queries.READ_PARTS), read at once: one round trip. The tokens are
    # read FOR SHARE: a takeover waits for this transaction.
    given: list[tuple[str, list[Any]]] = [
        (name, [packed(k)])
        for name, k in (
            ("tokens", keys.fenced),
            ("heads", keys.saved),
            ("pending", keys.claims),
            ("event_logs", keys.logged),
            ("request_last", keys.requested),
        )
        if k
    ]
    if keys.request_keys:
        sids, rids = zip(*keys.request_keys)
        given.append(("request_numbers", [packed(sids), packed(rids)]))
    rows: list[list[tuple[Any, ...]]] = [[] for _ in queries.READ_PARTS]
    if given:
        statement = _reads(tuple(name for name, _ in given))
        # In the order of their placeholders: the CTEs' first.
        ordered = sorted(given, key=lambda part: not queries.READ_PARTS[part[0]][0])
        cur = await conn.execute(statement, [p for _, params in ordered for p in params])
        for tag, *row in await cur.fetchall():
            rows[tag].append(tuple(row))
    token_rows = [(sid, token) for sid, _, token, _, _ in rows[0]]
    head_rows = [(sid, log_id, version, count) for sid, _, log_id, version, count in rows[1]]
    pending_rows = [(aid, sid) for aid, sid, _, _, _ in rows[2]]
    log_rows = [(sid, kept, last) for sid, _, kept, last, _ in rows[3]]
    last_rows = [(sid, last) for sid, _, last, _, _ in rows[4]]
    number_rows = [(sid, rid, n) for sid, rid, n, _, _ in rows[5]]
    stored = planning.Stored(
        tokens=dict(token_rows),
        heads={sid: planning.Head(version, count) for sid, _, version, count in head_rows},
        pending=dict(pending_rows),
        event_logs={sid: (kept, last or 0) for sid, kept, last in log_rows},
        request_last={sid: last for sid, last in last_rows if last},
        request_numbers={(sid, rid): n for sid, rid, n in number_rows},
    )
    logs: dict[str, int] = {sid: log_id for sid, log_id, _, _ in head_rows}
    plan = planning.plan_batch(batch, stored)
    messages: list[tuple[int, int, bytes]] = []
    sessions: dict[str, tuple[Any, ...]] = {}  # the last save of each session wins
    history: list[tuple[Any, ...]] = []
    for planned in plan.saves:
        p = planned.save
        cp, sid = p.checkpoint, p.session_id
        if planned.new_log:
            logs[sid] = await _new_log(conn, sid)
        log_id, count = logs[sid], planned.count
        messages += ((log_id, planned.start + i, body) for i, body in enumerate(planned.bodies))
        sessions[sid] = (sid, log_id, cp.version, cp.status.value, count, cp.updated_at, p.header)
        if p.history_limit:
            history.append(
                (sid, cp.step_index, cp.status.value, cp.updated_at, log_id, count, p.header)
            )
    approvals = plan.approvals.items()
    events = plan.events
    # The rows of every table in one statement (each table's insert a data-modifying CTE:
    # the tables differ, so none of them sees or touches another's rows), then the drops
    # that must see those rows in a second one: a statement costs the event loop more than
    # the rows it carries (psycopg's Python around each statement is most of a save's CPU).
    await _execute_merged(
        conn,
        (queries.INSERT_MESSAGES, messages),
        (queries.UPSERT_SESSIONS, list(sessions.values())),
        (queries.INSERT_HISTORY, history),
        (
            queries.UPSERT_APPROVALS,
            [(aid, sid, body) for aid, (sid, body) in approvals if body is not None],
        ),
        (queries.INSERT_EVENTS, [(e.session_id, s.seq, s.data) for e in events for s in e.new]),
        (queries.UPSERT_EVENT_LOGS, [(e.session_id, e.kept) for e in events if e.kept]),
        (
            queries.UPSERT_REQUESTS,
            [(r.session_id, r.request_id, r.n, r.body) for r in plan.requests],
        ),
    )
    claimed = [aid for aid, (_, body) in approvals if body is None]
    if claimed:
        await conn.execute(queries.DELETE_APPROVALS, (claimed,))
    emptied = [e.session_id for e in events if not e.kept and e.existed]
    if emptied:
        await conn.execute(queries.DELETE_EVENT_LOGS, (emptied,))
    # A session's log falls out of use after a rewrite, once the last history entry over it
    # is dropped: looked for in every session written, in the drops' statement (it sees
    # the history rows the prune drops as gone: queries.DELETE_PRUNED_LOGS).
    await _drop(
        conn,
        list(plan.history_limits.items()),
        [(e.session_id, e.floor) for e in events if e.floor],
        list(plan.request_floors.items()),
        sorted(set(plan.rewritten) | set(sessions)),
    )
    for e in events:
        for first, last in e.seal:
            await _seal(conn, e.session_id, first, last)
    for q in plan.enqueue:  # under the key's lock too (``PostgresStore._apply``)
        await queue.enqueue(conn, q.session_id, q.request_id, q.data, False, q.enqueued_at)


@functools.cache
def _reads(parts: tuple[str, ...]) -> str:
    """The statement of queries.READ_PARTS's ``parts`` (in that order)."""
    ctes = [queries.READ_PARTS[name][0] for name in parts if queries.READ_PARTS[name][0]]
    branches = "\nUNION ALL\n".join(queries.READ_PARTS[name][1] for name in parts)
    return f"WITH {', '.join(ctes)}\n{branches}" if ctes else branches


async def _execute(conn: AsyncConnection, statement: str, rows: Sequence[tuple[Any, ...]]) -> None:
    """``statement`` over ``rows``, given as one array per column (``unnest``); nothing
    when there are no rows."""
    if rows:
        await conn.execute(statement, [packed(column) for column in zip(*rows)])


async def _execute_merged(
    conn: AsyncConnection, *statements: tuple[str, Sequence[tuple[Any, ...]]]
) -> None:
    """Each of ``statements`` (an ``INSERT`` over ``unnest`` of positional binary arrays,
    with its rows) that has rows, all in one statement: the first ones as data-modifying
    CTEs, the last as the main statement. Only for statements on different tables."""
    given = [(sql, rows) for sql, rows in statements if rows]
    if not given:
        return
    params: list[Any] = []
    for _, rows in given:
        params += [packed(column) for column in zip(*rows)]
    await conn.execute(_merged(tuple(sql for sql, _ in given)), params)


@functools.cache
def _merged(statements: tuple[str, ...]) -> str:
    *first, last = statements
    ctes = ", ".join(f"w{i} AS ({sql.strip()})" for i, sql in enumerate(first))
    return f"WITH {ctes}\n{last}" if ctes else last


async def _drop(
    conn: AsyncConnection,
    history: list[tuple[str, int]],
    events: list[tuple[str, int]],
    requests: list[tuple[str, int]],
    sessions: list[str],
) -> None:
    """The drops of a batch in one statement: history entries past each session's limit,
    events and request records up to each floor, then the logs of ``sessions`` that
    nothing refers to any more (the history entries dropped here included)."""
    parts: list[str] = []
    params: list[Any] = []
    for name, rows in (("pruned", history), ("events", events), ("requests", requests)):
        if rows:
            parts.append(name)
            params += [packed(column) for column in zip(*rows)]
    if sessions:
        parts.append("logs")
        params.append(packed(sessions))
    if parts:
        await conn.execute(_drops(tuple(parts)), params)


@functools.cache
def _drops(parts: tuple[str, ...]) -> str:
    statements = {
        "pruned": queries.PRUNE_HISTORY,
        "events": queries.PRUNE_EVENTS,
        "requests": queries.PRUNE_REQUESTS,
        "logs": queries.DELETE_PRUNED_LOGS
        if "pruned" in parts
        else queries.DELETE_UNREFERENCED_LOGS,
    }
    *first, last = parts
    ctes = [
        f"{name} AS ({statements[name].strip()}{' RETURNING id' if name == 'pruned' else ''})"
        for name in first
    ]
    return f"WITH {', '.join(ctes)}\n{statements[last]}" if ctes else statements[last]


async def _seal(conn: AsyncConnection, session_id: str, first: int, last: int) -> None:
    """Swap the loose rows of ``first..last`` for their block, when they are all there."""
    args = {"session_id": session_id, "first": first, "last": last}
    cur = await conn.execute(queries.SELECT_EVENT_RANGE, args)
    rows = [StoredEvent(seq, bytes(data)) for seq, data in await cur.fetchall()]
    block = eventblocks.seal(rows, first, last)
    if block is not None:
        await conn.execute(queries.DELETE_EVENT_RANGE, args)
        await conn.execute(queries.INSERT_EVENT, {**args, "data": block})


async def _new_log(conn: AsyncConnection, session_id: str) -> int:
    row = await (await conn.execute(queries.INSERT_LOG, (session_id,))).fetchone()
    assert row is not None
    return int(row[0])


async def delete(
    conn: AsyncConnection, session_id: str, keep_history: bool, keep_queue: bool = False
) -> bool:
    deleted = await conn.execute(queries.DELETE_SESSION, (session_id,))
    await conn.execute(queries.DELETE_SESSION_APPROVALS, (session_id,))
    await conn.execute(queries.DELETE_REQUESTS, (session_id,))
    if not keep_queue:
        await queue.clear(conn, session_id)
    if not keep_history:
        await conn.execute(queries.DELETE_HISTORY, (session_id,))
        await conn.execute(queries.DELETE_EVENTS, (session_id,))
        await conn.execute(queries.DELETE_EVENT_LOGS, ([session_id],))
    await conn.execute(queries.DELETE_UNREFERENCED_LOGS, ([session_id],))
    return await deleted.fetchone() is not None


async def read_events(conn: AsyncConnection, session_id: str, after: int, limit: int) -> EventPage:
    """``after`` and ``limit`` already within bigint (:func:`..base.clamp_seq`)."""
    cur = await conn.execute(queries.SELECT_EVENT_ENDS, {"session_id": session_id})
    ends = await cur.fetchone()
    assert ends is not None  # two aggregates: always one row
    first, last = ends
    if first is None:
        return EventPage([], 0, 0)
    events = []
    if limit > 0:
        cur = await conn.execute(
            queries.SELECT_EVENTS, {"session_id": session_id, "after": after, "limit": limit}
        )
        events = [StoredEvent(seq, bytes(data)) for seq, data in await cur.fetchall()]
    return EventPage(events, first, last)


async def find_request(
    conn: AsyncConnection, session_id: str, request_id: str
) -> AppliedRequest | None:
    cur = await conn.execute(queries.SELECT_REQUEST, (session_id, request_id))
    row = await cur.fetchone()
    return AppliedRequest.from_dict(json.loads(row[0])) if row is not None else None


async def requests(conn: AsyncConnection, session_id: str) -> list[AppliedRequest]:
    cur = await conn.execute(queries.SELECT_REQUESTS, (session_id,))
    return [AppliedRequest.from_dict(json.loads(body)) for (body,) in await cur.fetchall()]


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
    return [codec.decode_summary(header, count) for count, header in await cur.fetchall()]


async def list_sessions_in(
    conn: AsyncConnection, status: Status | None, low: str, high: str, skip: str, limit: int
) -> list[SessionSummary]:
    args = {"low": low, "high": high, "skip": skip, "limit": limit}
    if status is None:
        cur = await conn.execute(queries.LIST_SESSIONS_IN, args)
    else:
        cur = await conn.execute(
            queries.LIST_SESSIONS_IN_BY_STATUS, {**args, "status": status.value}
        )
    return [codec.decode_summary(header, count) for count, header in await cur.fetchall()]


async def history(conn: AsyncConnection, session_id: str, limit: int | None) -> list[HistoryEntry]:
    cur = await conn.execute(queries.SELECT_HISTORY, (session_id, limit))
    rows = await cur.fetchall()
    longest = codec.longest_prefixes(rows)
    logs: dict[int, list[codec.LogRecord]] = {}
    if longest:
        cur = await conn.execute(queries.SELECT_LOGS, (list(longest), list(longest.values())))
        found = await cur.fetchall()
        logs = {log_id: codec.decode_messages(stream or b"") for log_id, stream in found}
    return codec.decode_history(rows, logs)


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
    requests: Sequence[AppliedRequest] = (),
) -> None:
    """Replace the session by ``history`` (oldest first, already trimmed), ``latest``, its
    pending ``approvals``, its event log (``events``, checked and already trimmed) and its
    request records (oldest first)."""
    for statement in (
        queries.DELETE_SESSION,
        queries.DELETE_HISTORY,
        queries.DELETE_SESSION_LOGS,
        queries.DELETE_SESSION_APPROVALS,
        queries.DELETE_EVENTS,
        queries.DELETE_REQUESTS,
    ):
        await conn.execute(statement, (session_id,))
    await _execute(
        conn,
        queries.UPSERT_REQUESTS,
        [(session_id, r.id, n, codec.encode_json(r.to_dict())) for n, r in enumerate(requests, 1)],
    )
    await conn.execute(queries.DELETE_EVENT_LOGS, ([session_id],))
    await _execute(
        conn,
        queries.UPSERT_APPROVALS,
        [(a.approval_id, session_id, codec.encode_json(a.to_dict())) for a in approvals],
    )
    await _execute(
        conn,
        queries.INSERT_EVENTS,
        [(session_id, e.seq, e.data) for e in eventblocks.loose_rows(events)],
    )
    if events:
        await conn.execute(queries.UPSERT_EVENT_LOGS, ([session_id], [len(events)]))
    checkpoints = [*history, *([latest] if latest else [])]
    log_id = 0
    messages: list[tuple[int, int, bytes]] = []
    rows: list[tuple[Any, ...]] = []
    for cp, step in zip(checkpoints, importing.log_steps(checkpoints)):
        if step.new_log:
            log_id = await _new_log(conn, session_id)
        messages += ((log_id, step.start + k, body) for k, body in enumerate(step.bodies))
        rows.append((cp, log_id, codec.encode_header(cp), step.count))
    await _execute(conn, queries.INSERT_MESSAGES, messages)
    await _execute(
        conn,
        queries.INSERT_HISTORY,
        [
            (session_id, cp.step_index, cp.status.value, cp.updated_at, log_id, count, h)
            for cp, log_id, h, count in rows[: len(history)]
        ],
    )
    if latest is not None:
        _, log_id, header, count = rows[-1]
        row = (
            session_id,
            log_id,
            latest.version,
            latest.status.value,
            count,
            latest.updated_at,
            header,
        )
        await _execute(conn, queries.UPSERT_SESSIONS, [row])
