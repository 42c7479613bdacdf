"""The driver's operations as plain functions of a connection, run on the database thread.

Layout (see :mod:`.queries`): a save appends only ``messages[stored_messages:]`` to the
session's message log and writes one header row per table, so its cost is O(new
messages); a history entry is a header plus ``(log_id, message_count)``, a prefix of a
log that later saves only extend. A rewritten transcript gets a new log, and logs that
nothing refers to any more are dropped with their messages in the same transaction.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from ...domain import Checkpoint, FinishReason, HistoryEntry, Message, SessionSummary, Status
from ...errors import LeaseLost
from . import queries


def load(conn: sqlite3.Connection, session_id: str) -> Checkpoint | None:
    row = conn.execute(queries.SELECT_SESSION, (session_id,)).fetchone()
    if row is None:
        return None
    log_id, count, header = row
    return Checkpoint.from_header(json.loads(header), _messages(conn, log_id, count))


def save(
    conn: sqlite3.Connection, checkpoint: Checkpoint, stored_messages: int, history_limit: int
) -> None:
    """Apply one save inside the caller's write transaction.

    Raises ``LeaseLost`` before writing anything when the version is not the next one.
    """
    sid = checkpoint.session_id
    head = conn.execute(queries.SELECT_SESSION_HEAD, (sid,)).fetchone()
    stored_version = head[1] if head else 0
    if checkpoint.version != stored_version + 1:
        raise LeaseLost(
            f"session {sid!r} was saved by another writer",
            session_id=sid,
            stored_version=stored_version,
            version=checkpoint.version,
        )
    messages = checkpoint.messages
    if head is not None and stored_messages == head[2] and len(messages) >= stored_messages:
        log_id, start = head[0], stored_messages
    else:
        # A new session, one recreated after delete, or a rewritten transcript.
        log_id, start = conn.execute(queries.INSERT_LOG, (sid,)).lastrowid, 0
    conn.executemany(
        queries.INSERT_MESSAGE,
        ((log_id, i, _encode(messages[i].to_dict())) for i in range(start, len(messages))),
    )
    row: dict[str, Any] = {
        "session_id": sid,
        "log_id": log_id,
        "version": checkpoint.version,
        "status": checkpoint.status.value,
        "message_count": len(messages),
        "updated_at": checkpoint.updated_at,
        "header": _encode(checkpoint.header_dict()),
    }
    conn.execute(queries.UPSERT_SESSION, row)
    if history_limit:
        conn.execute(
            queries.INSERT_HISTORY,
            {
                "session_id": sid,
                "step": checkpoint.step_index,
                "status": row["status"],
                "saved_at": checkpoint.updated_at,
                "log_id": log_id,
                "message_count": row["message_count"],
                "header": row["header"],
            },
        )
        conn.execute(queries.PRUNE_HISTORY, {"session_id": sid, "keep": history_limit})
    conn.execute(queries.DELETE_UNREFERENCED_LOGS, {"session_id": sid})


def delete(conn: sqlite3.Connection, session_id: str, keep_history: bool) -> bool:
    existed = conn.execute(queries.DELETE_SESSION, (session_id,)).rowcount > 0
    if not keep_history:
        conn.execute(queries.DELETE_HISTORY, (session_id,))
    conn.execute(queries.DELETE_UNREFERENCED_LOGS, {"session_id": session_id})
    return existed


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
    return [_summary(count, json.loads(header)) for count, header in rows]


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
            Checkpoint.from_header(json.loads(header), logs[log_id][:count]),
        )
        for step, saved_at, status, log_id, count, header in rows
    ]


def _messages(conn: sqlite3.Connection, log_id: int, count: int) -> list[Message]:
    rows = conn.execute(queries.SELECT_MESSAGES, (log_id, count))
    return [Message.from_dict(json.loads(body)) for (body,) in rows]


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


def _encode(d: dict[str, Any]) -> str:
    return json.dumps(d, separators=(",", ":"), ensure_ascii=False)
