"""The ``sqlite:`` driver's façade: URL, lifecycle, the database thread, group commit.

SQL lives in :mod:`.queries`, the schema in :mod:`.migrations`, the operations in
:mod:`.ops`; every ``sqlite3`` exception is translated in :mod:`.connection`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

from ...domain import Checkpoint, HistoryEntry, SessionSummary, Status
from ...errors import StoreError
from ..base import DEFAULT_HISTORY_LIMIT, Capability, Store, decode_page_token, encode_page_token
from . import ops, queries
from .connection import connect, transaction, translate, translated

T = TypeVar("T")

DEFAULT_BUSY_TIMEOUT = 5.0  # seconds to wait for another process's write lock


@dataclass(slots=True)
class _QueuedSave:
    checkpoint: Checkpoint
    stored_messages: int
    error: BaseException | None = None


class SqliteStore(Store):
    """A durable store in one SQLite file, shareable by several processes.

    URL forms (``from_url``):

    - ``sqlite:///abs/path/file.db``: an absolute path (three slashes, then the path);
    - ``sqlite:relative/path.db``: relative to the working directory at construction.

    The path is percent-decoded; the URL takes no host, query or fragment. In-memory
    databases (``sqlite:///:memory:``, ``sqlite::memory:``) are refused with ``ValueError``:
    the daemon relies on durability; use ``memory://`` for a throwaway store. :meth:`open`
    creates the parent directory and the file if missing and migrates the schema.

    The file is in WAL mode with ``synchronous=FULL``: a save is acknowledged once the WAL
    is synced. Every blocking call runs on one dedicated thread that owns the connection.
    Saves queued while that thread is busy are committed together in one ``BEGIN
    IMMEDIATE`` transaction (one fsync; each save in its own savepoint, so one refused
    save does not sink the others). The version check of R7 runs inside that transaction,
    so two processes racing on one session cannot both win.
    """

    capabilities = frozenset({Capability.DURABLE, Capability.MULTI_PROCESS, Capability.HISTORY})

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        history_limit: int = DEFAULT_HISTORY_LIMIT,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    ) -> None:
        super().__init__(history_limit=history_limit)
        if str(path) in ("", ":memory:"):
            raise ValueError(f"SqliteStore needs a file path, got {str(path)!r}")
        self.path = Path(path).absolute()
        self.busy_timeout = busy_timeout
        self._executor: ThreadPoolExecutor | None = None
        self._conn: sqlite3.Connection | None = None  # touched only on the database thread
        self._queue: deque[_QueuedSave] = deque()

    @classmethod
    def from_url(cls, url: str, *, history_limit: int = DEFAULT_HISTORY_LIMIT) -> SqliteStore:
        return cls(path_from_url(url), history_limit=history_limit)

    def __repr__(self) -> str:
        return f"SqliteStore({str(self.path)!r}, history_limit={self.history_limit})"

    # -- lifecycle -----------------------------------------------------------------------

    async def open(self) -> None:
        if self._executor is not None:
            return
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="luoshod-sqlite")
        try:
            await self._call("open", self._connect)
        except BaseException:
            self._executor.shutdown(wait=False)
            self._executor = None
            raise

    async def close(self) -> None:
        executor, self._executor = self._executor, None
        if executor is None:
            return
        try:
            # Queued work (saves included) runs first: the executor is first in, first out.
            await asyncio.get_running_loop().run_in_executor(
                executor, partial(self._edge, "close", self._disconnect)
            )
        finally:
            executor.shutdown(wait=True)

    # -- the contract --------------------------------------------------------------------

    async def load(self, session_id: str) -> Checkpoint | None:
        return await self._call("load", self._read, ops.load, session_id)

    async def save(self, checkpoint: Checkpoint, *, stored_messages: int) -> None:
        self._require_open("save")
        item = _QueuedSave(checkpoint, stored_messages)
        self._queue.append(item)
        # Whichever drain runs first takes every queued save; ours has run when this returns,
        # so ``item`` is settled (the thread runs one job at a time, in order).
        try:
            await self._call("save", self._drain)
        except asyncio.CancelledError:
            # Still queued means not applied: make sure no later drain applies it. Once taken,
            # it commits or not like any write whose acknowledgement was lost.
            with contextlib.suppress(ValueError):
                self._queue.remove(item)
            raise
        if item.error is not None:
            raise item.error

    async def delete(self, session_id: str, *, keep_history: bool = False) -> bool:
        return await self._call("delete", self._write, ops.delete, session_id, keep_history)

    async def list_sessions(
        self, *, status: Status | None, page_size: int, page_token: str
    ) -> tuple[list[SessionSummary], str]:
        if page_size < 1:
            raise ValueError(f"page_size must be >= 1, got {page_size}")
        after = decode_page_token(page_token)
        rows = await self._call(
            "list_sessions", self._read, ops.list_sessions, status, after, page_size + 1
        )
        page = rows[:page_size]
        return page, encode_page_token(page[-1].session_id) if len(rows) > page_size else ""

    async def history(self, session_id: str, *, limit: int | None = None) -> list[HistoryEntry]:
        if limit is not None and limit < 0:
            raise ValueError(f"limit must be >= 0, got {limit}")
        return await self._call("history", self._read, ops.history, session_id, limit)

    # -- the database thread -------------------------------------------------------------

    def _require_open(self, what: str) -> ThreadPoolExecutor:
        if self._executor is None:
            raise StoreError(f"SQLite store {self.path} is not open", operation=what)
        return self._executor

    async def _call(self, what: str, fn: Callable[..., T], *args: Any) -> T:
        executor = self._require_open(what)
        return await asyncio.get_running_loop().run_in_executor(
            executor, partial(self._edge, what, fn, *args)
        )

    @staticmethod
    def _edge(what: str, fn: Callable[..., T], *args: Any) -> T:
        with translated(what):
            return fn(*args)

    def _connect(self) -> None:
        self._conn = connect(self.path, busy_timeout=self.busy_timeout)

    def _disconnect(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def _read(self, fn: Callable[..., T], *args: Any) -> T:
        # One read transaction: the header and the messages come from one snapshot.
        with transaction(self._connection(), write=False) as conn:
            return fn(conn, *args)

    def _write(self, fn: Callable[..., T], *args: Any) -> T:
        with transaction(self._connection(), write=True) as conn:
            return fn(conn, *args)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise sqlite3.ProgrammingError("no connection")
        return self._conn

    def _drain(self) -> None:
        """Commit every queued save in one transaction (group commit)."""
        batch: list[_QueuedSave] = []
        while self._queue:
            batch.append(self._queue.popleft())
        if not batch:
            return
        try:
            with transaction(self._connection(), write=True) as conn:
                for item in batch:
                    self._save_one(conn, item)
        except Exception as e:
            # The transaction is rolled back: no save of the batch happened.
            error = translate(e, "save") if isinstance(e, sqlite3.Error) else e
            for item in batch:
                item.error = error

    def _save_one(self, conn: sqlite3.Connection, item: _QueuedSave) -> None:
        conn.execute(queries.SAVEPOINT)
        try:
            ops.save(conn, item.checkpoint, item.stored_messages, self.history_limit)
        except Exception as e:
            if isinstance(e, sqlite3.Error) and not conn.in_transaction:
                raise  # SQLite rolled back the whole transaction: fail the batch
            conn.execute(queries.ROLLBACK_TO_SAVEPOINT)
            item.error = translate(e, "save") if isinstance(e, sqlite3.Error) else e
        conn.execute(queries.RELEASE_SAVEPOINT)


def path_from_url(url: str) -> Path:
    """The file of a ``sqlite:`` URL (see :class:`SqliteStore`). Raises ``ValueError``."""
    parts = urlsplit(url)
    if parts.scheme != "sqlite":
        raise ValueError(f"not a sqlite URL: {url!r}")
    if parts.netloc:
        raise ValueError(
            f"sqlite URL takes no host: {url!r} "
            "(use sqlite:///abs/path/file.db or sqlite:relative/path.db)"
        )
    if parts.query or parts.fragment:
        raise ValueError(f"sqlite URL takes no query or fragment: {url!r}")
    path = unquote(parts.path)
    if path.lstrip("/") == ":memory:":
        raise ValueError(
            f"in-memory SQLite is not durable: {url!r} (use memory:// for a throwaway store)"
        )
    if not path or path.endswith("/"):
        raise ValueError(f"sqlite URL needs a file path: {url!r}")
    return Path(path)
