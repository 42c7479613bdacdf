"""The input queue (``Capability.QUEUE``, R68, R69): one row per queued input, ordered by
a position the enqueue picks under the session's advisory lock (below the session's
smallest, or above its largest), so concurrent enqueues of several daemons are ordered."""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection

from luoshod.domain import QueuedInput

SELECT_QUEUED = """
SELECT session_id, request_id, position, data, enqueued_at FROM queued_inputs
WHERE session_id = %s ORDER BY position
"""
SELECT_QUEUED_ONE = """
SELECT session_id, request_id, position, data, enqueued_at FROM queued_inputs
WHERE session_id = %s AND request_id = %s
"""
SELECT_QUEUE_ENDS = "SELECT min(position), max(position) FROM queued_inputs WHERE session_id = %s"
INSERT_QUEUED = """
INSERT INTO queued_inputs (session_id, request_id, position, data, enqueued_at)
VALUES (%s, %s, %s, %s, %s)
"""
UPDATE_QUEUED = (
    "UPDATE queued_inputs SET data = %s WHERE session_id = %s AND request_id = %s RETURNING 1"
)
DELETE_QUEUED = "DELETE FROM queued_inputs WHERE session_id = %s AND request_id = %s RETURNING 1"
DELETE_SESSION_QUEUE = "DELETE FROM queued_inputs WHERE session_id = %s"
SELECT_QUEUED_SESSIONS = """
SELECT DISTINCT session_id FROM queued_inputs WHERE session_id > %s ORDER BY session_id LIMIT %s
"""


def _entry(row: tuple[Any, ...]) -> QueuedInput:
    sid, rid, position, data, at = row
    return QueuedInput(sid, rid, int(position), bytes(data), float(at))


async def enqueue(
    conn: AsyncConnection, session_id: str, request_id: str, data: bytes, front: bool, now: float
) -> QueuedInput:
    """Under the session's lock (``writing``): the ends read here stay the ends."""
    found = await (await conn.execute(SELECT_QUEUED_ONE, (session_id, request_id))).fetchone()
    if found is not None:
        return _entry(found)
    row = await (await conn.execute(SELECT_QUEUE_ENDS, (session_id,))).fetchone()
    low, high = row if row else (None, None)
    position = 0 if low is None else (low - 1 if front else high + 1)
    await conn.execute(INSERT_QUEUED, (session_id, request_id, position, data, now))
    return QueuedInput(session_id, request_id, position, data, now)


async def queued(conn: AsyncConnection, session_id: str) -> list[QueuedInput]:
    cur = await conn.execute(SELECT_QUEUED, (session_id,))
    return [_entry(r) for r in await cur.fetchall()]


async def remove(conn: AsyncConnection, session_id: str, request_id: str) -> bool:
    cur = await conn.execute(DELETE_QUEUED, (session_id, request_id))
    return await cur.fetchone() is not None


async def replace(conn: AsyncConnection, session_id: str, request_id: str, data: bytes) -> bool:
    cur = await conn.execute(UPDATE_QUEUED, (data, session_id, request_id))
    return await cur.fetchone() is not None


async def clear(conn: AsyncConnection, session_id: str) -> None:
    await conn.execute(DELETE_SESSION_QUEUE, (session_id,))


async def sessions(conn: AsyncConnection, after: str, limit: int) -> list[str]:
    cur = await conn.execute(SELECT_QUEUED_SESSIONS, (after, limit))
    return [sid for (sid,) in await cur.fetchall()]
