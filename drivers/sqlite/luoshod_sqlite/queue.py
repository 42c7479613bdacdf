"""The input queue (``Capability.QUEUE``, R68, R69): one row per queued input, ordered by
a position the enqueue picks in its write transaction (below the session's smallest, or
above its largest)."""

from __future__ import annotations

import sqlite3
from typing import Any

from luoshod.domain import QueuedInput

SELECT_QUEUED = """
SELECT session_id, request_id, position, data, enqueued_at FROM queued_inputs
WHERE session_id = ? ORDER BY position
"""
SELECT_QUEUED_ONE = """
SELECT session_id, request_id, position, data, enqueued_at FROM queued_inputs
WHERE session_id = ? AND request_id = ?
"""
SELECT_QUEUE_ENDS = "SELECT min(position), max(position) FROM queued_inputs WHERE session_id = ?"
INSERT_QUEUED = """
INSERT INTO queued_inputs (session_id, request_id, position, data, enqueued_at)
VALUES (?, ?, ?, ?, ?)
"""
UPDATE_QUEUED = "UPDATE queued_inputs SET data = ? WHERE session_id = ? AND request_id = ?"
DELETE_QUEUED = "DELETE FROM queued_inputs WHERE session_id = ? AND request_id = ?"
DELETE_SESSION_QUEUE = "DELETE FROM queued_inputs WHERE session_id = ?"
SELECT_QUEUED_SESSIONS = """
SELECT DISTINCT session_id FROM queued_inputs WHERE session_id > ? ORDER BY session_id LIMIT ?
"""


def _entry(row: tuple[Any, ...]) -> QueuedInput:
    sid, rid, position, data, at = row
    return QueuedInput(sid, rid, position, bytes(data), at)


def enqueue(
    conn: sqlite3.Connection, session_id: str, request_id: str, data: bytes, front: bool, now: float
) -> QueuedInput:
    found = conn.execute(SELECT_QUEUED_ONE, (session_id, request_id)).fetchone()
    if found is not None:
        return _entry(found)
    low, high = conn.execute(SELECT_QUEUE_ENDS, (session_id,)).fetchone()
    position = 0 if low is None else (low - 1 if front else high + 1)
    conn.execute(INSERT_QUEUED, (session_id, request_id, position, data, now))
    return QueuedInput(session_id, request_id, position, data, now)


def queued(conn: sqlite3.Connection, session_id: str) -> list[QueuedInput]:
    return [_entry(r) for r in conn.execute(SELECT_QUEUED, (session_id,))]


def remove(conn: sqlite3.Connection, session_id: str, request_id: str) -> bool:
    return conn.execute(DELETE_QUEUED, (session_id, request_id)).rowcount > 0


def replace(conn: sqlite3.Connection, session_id: str, request_id: str, data: bytes) -> bool:
    return conn.execute(UPDATE_QUEUED, (data, session_id, request_id)).rowcount > 0


def clear(conn: sqlite3.Connection, session_id: str) -> None:
    conn.execute(DELETE_SESSION_QUEUE, (session_id,))


def sessions(conn: sqlite3.Connection, after: str, limit: int) -> list[str]:
    return [sid for (sid,) in conn.execute(SELECT_QUEUED_SESSIONS, (after, limit))]
