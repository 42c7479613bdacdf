"""Schedules (``Capability.SCHEDULES``, R87): one row per schedule, every change one
statement that compares the version and sets the next, so of daemons racing on one
schedule exactly one write wins."""

from __future__ import annotations

from psycopg import AsyncConnection

from luoshod.domain import StoredSchedule

INSERT_SCHEDULE = """
INSERT INTO schedules (name, version, data) VALUES (%s, 1, %s)
ON CONFLICT (name) DO NOTHING RETURNING 1
"""
SELECT_SCHEDULE = "SELECT name, version, data FROM schedules WHERE name = %s"
SELECT_SCHEDULES = "SELECT name, version, data FROM schedules ORDER BY name"
UPDATE_SCHEDULE = """
UPDATE schedules SET version = %s, data = %s WHERE name = %s AND version = %s RETURNING 1
"""
DELETE_SCHEDULE = "DELETE FROM schedules WHERE name = %s RETURNING 1"


async def create(conn: AsyncConnection, name: str, data: bytes) -> StoredSchedule | None:
    row = await (await conn.execute(INSERT_SCHEDULE, (name, data))).fetchone()
    return None if row is None else StoredSchedule(name, 1, data)


async def get(conn: AsyncConnection, name: str) -> StoredSchedule | None:
    row = await (await conn.execute(SELECT_SCHEDULE, (name,))).fetchone()
    return None if row is None else StoredSchedule(row[0], int(row[1]), bytes(row[2]))


async def every(conn: AsyncConnection) -> list[StoredSchedule]:
    rows = await (await conn.execute(SELECT_SCHEDULES)).fetchall()
    return [StoredSchedule(n, int(v), bytes(d)) for n, v, d in rows]


async def update(
    conn: AsyncConnection, name: str, data: bytes, version: int
) -> StoredSchedule | None:
    cur = await conn.execute(UPDATE_SCHEDULE, (version + 1, data, name, version))
    return None if await cur.fetchone() is None else StoredSchedule(name, version + 1, data)


async def delete(conn: AsyncConnection, name: str) -> bool:
    return await (await conn.execute(DELETE_SCHEDULE, (name,))).fetchone() is not None
