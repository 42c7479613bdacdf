"""Opening a connection, transactions, and the translation of ``sqlite3`` errors.

Everything here runs on the driver's one database thread.
"""

from __future__ import annotations

import contextlib
import random
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

from luoshod.errors import NEWER_LUOSHOD, StoreError, StoreFull

from . import queries
from .migrations import SchemaTooNew, check_format, mark_format, migrate


def connect(path: Path, *, busy_timeout: float) -> sqlite3.Connection:
    """Open ``path`` (creating it and its parent directory), set the pragmas, migrate.

    Raises ``sqlite3.Error``, ``OSError`` or ``SchemaTooNew``; :func:`translated` maps them.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    # Autocommit mode: every write transaction is an explicit BEGIN IMMEDIATE, so the
    # version check and the write hold the one write lock together (R7 across processes).
    # ``timeout`` is SQLite's busy_timeout: how long to wait for another writer's lock.
    conn = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None)
    try:
        mode = _wal(conn, deadline=time.monotonic() + busy_timeout)
        if mode.lower() != "wal":
            raise StoreError(f"SQLite cannot use WAL on {path} (journal_mode is {mode!r})")
        # FULL: a commit is acknowledged only once the WAL is synced.
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
        found = check_format(conn, path)
        migrate(conn)
        mark_format(conn, found)
    except BaseException:
        conn.close()
        raise
    return conn


def _wal(conn: sqlite3.Connection, *, deadline: float) -> str:
    """Switch to WAL and return the journal mode now in force.

    Switching needs an exclusive lock, and SQLite answers ``SQLITE_BUSY`` at once, without
    its busy handler, while another process is creating or switching the same new file;
    so two daemons starting together on one path retry here until ``deadline``.
    """
    while True:
        try:
            return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as e:
            code = getattr(e, "sqlite_errorcode", 0) & 0xFF
            if code not in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                raise
            if time.monotonic() >= deadline:
                raise
            time.sleep(random.uniform(0.005, 0.03))


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection, *, write: bool) -> Iterator[sqlite3.Connection]:
    """One transaction: ``BEGIN IMMEDIATE`` for writes (takes the write lock up front, so a
    read-then-write cannot be overtaken), a deferred one for a consistent read snapshot.
    Rolled back on any exception."""
    conn.execute(queries.BEGIN_WRITE if write else queries.BEGIN_READ)
    try:
        yield conn
        conn.execute(queries.COMMIT)
    except BaseException:
        rollback(conn)
        raise


def rollback(conn: sqlite3.Connection) -> None:
    """Roll back the open transaction, if SQLite has not already done so."""
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            conn.execute(queries.ROLLBACK)


def translate(e: BaseException, what: str) -> StoreError:
    """The :mod:`luoshod.errors` equivalent of a database-layer exception."""
    if isinstance(e, sqlite3.Error):
        code = getattr(e, "sqlite_errorcode", None)
        name = getattr(e, "sqlite_errorname", type(e).__name__)
        # Extended result codes keep the primary code in the low byte.
        if code is not None and code & 0xFF == sqlite3.SQLITE_FULL:
            return StoreFull(f"SQLite store is full: {what} failed: {e}", operation=what)
        return StoreError(f"SQLite {what} failed ({name}): {e}", operation=what, code=name)
    if isinstance(e, SchemaTooNew):  # written_by: the daemon's refusal says to upgrade
        return StoreError(f"SQLite {what} failed: {e}", operation=what, written_by=NEWER_LUOSHOD)
    if isinstance(e, OSError):
        return StoreError(f"SQLite {what} failed: {e}", operation=what)
    raise TypeError(f"not a database error: {e!r}")


@contextlib.contextmanager
def translated(what: str) -> Iterator[None]:
    """The driver's edge: database-layer exceptions leave as ``StoreError``/``StoreFull``."""
    try:
        yield
    except (sqlite3.Error, SchemaTooNew, OSError) as e:
        raise translate(e, what) from e
