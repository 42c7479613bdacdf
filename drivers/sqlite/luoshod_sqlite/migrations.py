"""Schema migrations: an ordered list whose index is the schema version.

``MIGRATIONS[i]`` takes a database from version ``i`` to ``i + 1``; the version lives in
``PRAGMA user_version`` (0 for a new file). :func:`migrate` applies the missing steps at
open, each in its own ``BEGIN IMMEDIATE`` transaction that re-reads the version first, so
several processes opening one file at once apply each step exactly once. Append new
steps; never edit a released one.
"""

from __future__ import annotations

import sqlite3

from luoshod.store.kit.codec import FORMAT_VERSION

from . import queries

Migration = tuple[str, ...]

MIGRATIONS: list[Migration] = [
    # 0 -> 1: message logs, latest checkpoints, history ring.
    (
        """
        CREATE TABLE logs (
            log_id     INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL
        )
        """,
        "CREATE INDEX logs_by_session ON logs (session_id)",
        """
        CREATE TABLE messages (
            log_id INTEGER NOT NULL REFERENCES logs (log_id) ON DELETE CASCADE,
            idx    INTEGER NOT NULL,
            body   TEXT NOT NULL,
            PRIMARY KEY (log_id, idx)
        )
        """,
        """
        CREATE TABLE sessions (
            session_id    TEXT PRIMARY KEY,
            log_id        INTEGER NOT NULL,
            version       INTEGER NOT NULL,
            status        TEXT NOT NULL,
            message_count INTEGER NOT NULL,
            updated_at    REAL NOT NULL,
            header        TEXT NOT NULL
        )
        """,
        "CREATE INDEX sessions_by_status ON sessions (status, session_id)",
        """
        CREATE TABLE history (
            id            INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id    TEXT NOT NULL,
            step          INTEGER NOT NULL,
            status        TEXT NOT NULL,
            saved_at      REAL NOT NULL,
            log_id        INTEGER NOT NULL,
            message_count INTEGER NOT NULL,
            header        TEXT NOT NULL
        )
        """,
        "CREATE INDEX history_by_session ON history (session_id, id)",
    ),
    # 1 -> 2: pending approvals and the per-session event log.
    (
        """
        CREATE TABLE approvals (
            approval_id TEXT PRIMARY KEY,
            session_id  TEXT NOT NULL,
            body        TEXT NOT NULL
        )
        """,
        "CREATE INDEX approvals_by_session ON approvals (session_id, approval_id)",
        """
        CREATE TABLE events (
            id         INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            seq        INTEGER NOT NULL,
            data       BLOB NOT NULL
        )
        """,
        "CREATE UNIQUE INDEX events_by_session ON events (session_id, seq)",
        """
        CREATE TABLE event_logs (
            session_id TEXT PRIMARY KEY,
            kept       INTEGER NOT NULL
        )
        """,
    ),
    # 2 -> 3: leases with fencing tokens. A row outlives its session's delete, so that
    # tokens only increase; a released lease has expires_at 0.
    (
        """
        CREATE TABLE leases (
            session_id TEXT PRIMARY KEY,
            owner      TEXT NOT NULL,
            token      INTEGER NOT NULL,
            expires_at REAL NOT NULL
        )
        """,
    ),
    # 3 -> 4: a session's applied request records (R74), numbered 1, 2, … in the order
    # first written, so the newest N are kept by deleting from the start of the number
    # index. (Earlier they were in the session's header, rewritten by every save.)
    (
        """
        CREATE TABLE requests (
            session_id TEXT NOT NULL,
            request_id TEXT NOT NULL,
            n          INTEGER NOT NULL,
            body       TEXT NOT NULL,
            PRIMARY KEY (session_id, request_id)
        ) WITHOUT ROWID
        """,
        "CREATE INDEX requests_in_order ON requests (session_id, n)",
    ),
    # 4 -> 5: inputs queued on a busy session (R68, R69), in position order.
    (
        """
        CREATE TABLE queued_inputs (
            session_id  TEXT NOT NULL,
            request_id  TEXT NOT NULL,
            position    INTEGER NOT NULL,
            data        BLOB NOT NULL,
            enqueued_at REAL NOT NULL,
            PRIMARY KEY (session_id, request_id)
        ) WITHOUT ROWID
        """,
        "CREATE UNIQUE INDEX queued_inputs_in_order ON queued_inputs (session_id, position)",
    ),
    # 5 -> 6: schedules (R87), changed by compare-and-set on their version.
    (
        """
        CREATE TABLE schedules (
            name    TEXT PRIMARY KEY,
            version INTEGER NOT NULL,
            data    BLOB NOT NULL
        ) WITHOUT ROWID
        """,
    ),
    # 6 -> 7: the holder's advertised address with its lease (R89: where another daemon
    # forwards a request for the session); "" for a lease taken before.
    ("ALTER TABLE leases ADD COLUMN address TEXT NOT NULL DEFAULT ''",),
]

SCHEMA_VERSION = len(MIGRATIONS)


class SchemaTooNew(Exception):
    """The file was written by a newer luoshod (its version is past :data:`MIGRATIONS`)."""


def schema_version(conn: sqlite3.Connection) -> int:
    version: int = conn.execute("PRAGMA user_version").fetchone()[0]
    return version


#: ``PRAGMA application_id`` of a luoshod file: "LSO" and, in the low byte, the newest codec
#: format (``luoshod.store.kit.codec.FORMAT_VERSION``) any luoshod wrote to it. 0: a new
#: file, or one of a luoshod from before the mark (format 1 or older). A luoshod of an older
#: format refuses the file at open, rather than meet the newer records one by one.
APPLICATION_ID = 0x4C534F00


def check_format(conn: sqlite3.Connection, path: object) -> int:
    """The format mark read from the file; raises :class:`SchemaTooNew` when a newer
    luoshod wrote it. Reads only."""
    found: int = conn.execute("PRAGMA application_id").fetchone()[0]
    written = found & 0xFF if found & ~0xFF == APPLICATION_ID else 0
    if written > FORMAT_VERSION:
        raise SchemaTooNew(
            f"{path} holds records in store format {written}, and this luoshod reads formats "
            f"up to {FORMAT_VERSION}: it was written by a newer luoshod; upgrade luoshod and "
            "luoshod-sqlite to open it"
        )
    return found


def mark_format(conn: sqlite3.Connection, found: int) -> None:
    """Mark the file with this luoshod's format (after :func:`check_format` and
    :func:`migrate`): a file another application marked is left alone."""
    if found == 0 or (found & ~0xFF == APPLICATION_ID and found & 0xFF < FORMAT_VERSION):
        # PRAGMA takes no parameters; the value is our own integer.
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID | FORMAT_VERSION}")


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the schema to :data:`SCHEMA_VERSION`; return the version found before.

    ``conn`` must be in autocommit mode (``isolation_level=None``). Raises
    :class:`SchemaTooNew`, or ``sqlite3.Error`` (the failed step is rolled back).
    """
    found = schema_version(conn)
    if found > SCHEMA_VERSION:
        raise SchemaTooNew(f"schema version {found} is newer than this driver's {SCHEMA_VERSION}")
    while (version := schema_version(conn)) < SCHEMA_VERSION:
        conn.execute(queries.BEGIN_WRITE)
        try:
            # Another process may have migrated between the read above and the lock.
            version = schema_version(conn)
            if version < SCHEMA_VERSION:
                for statement in MIGRATIONS[version]:
                    conn.execute(statement)
                # PRAGMA takes no parameters; the value is our own integer.
                conn.execute(f"PRAGMA user_version = {version + 1}")
            conn.execute(queries.COMMIT)
        except BaseException:
            if conn.in_transaction:
                conn.execute(queries.ROLLBACK)
            raise
    return found
