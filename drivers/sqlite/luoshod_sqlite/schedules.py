"""Schedules (``Capability.SCHEDULES``, R87): one row per schedule, every change a
compare-and-set on its version inside the write transaction."""

from __future__ import annotations

import sqlite3

from luoshod.domain import StoredSchedule

INSERT_SCHEDULE = "INSERT OR IGNORE INTO schedules (name, version, data) VALUES (?, 1, ?)"
SELECT_SCHEDULE = "SELECT name, version, data FROM schedules WHERE name = ?"
SELECT_SCHEDULES = "SELECT name, version, data FROM schedules ORDER BY name"
UPDATE_SCHEDULE = "UPDATE schedules SET version = ?, data = ? WHERE name = ? AND version = ?"
DELETE_SCHEDULE = "DELETE FROM schedules WHERE name = ?"


def create(conn: sqlite3.Connection, name: str, data: bytes) -> StoredSchedule | None:
    if conn.execute(INSERT_SCHEDULE, (name, data)).rowcount == 0:
        return None
    return StoredSchedule(name, 1, data)


def get(conn: sqlite3.Connection, name: str) -> StoredSchedule | None:
    row = conn.execute(SELECT_SCHEDULE, (name,)).fetchone()
    return None if row is None else StoredSchedule(row[0], row[1], bytes(row[2]))


def every(conn: sqlite3.Connection) -> list[StoredSchedule]:
    return [StoredSchedule(n, v, bytes(d)) for n, v, d in conn.execute(SELECT_SCHEDULES)]


def update(conn: sqlite3.Connection, name: str, data: bytes, version: int) -> StoredSchedule | None:
    if conn.execute(UPDATE_SCHEDULE, (version + 1, data, name, version)).rowcount == 0:
        return None
    return StoredSchedule(name, version + 1, data)


def delete(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute(DELETE_SCHEDULE, (name,)).rowcount > 0
