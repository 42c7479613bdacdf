"""The ``sqlite:`` driver's façade: URL, lifecycle, the database thread, group commit.

SQL lives in :mod:`.queries`, the schema in :mod:`.migrations`, the operations in
:mod:`.ops`; every ``sqlite3`` exception is translated in :mod:`.connection`.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

from luoshod.domain import (
    AppliedRequest,
    Approval,
    Checkpoint,
    EventPage,
    HistoryEntry,
    Lease,
    QueuedInput,
    SessionSummary,
    Status,
    StoredEvent,
    StoredSchedule,
)
from luoshod.errors import LuoshoError
from luoshod.store.kit import (
    DEFAULT_HISTORY_LIMIT,
    Capability,
    Renewal,
    file_in_the_way,
    local_path,
    read_only,
)
from luoshod.store.kit.groupcommit import DatabaseThread, GroupCommit, Queued
from luoshod.store.kit.prepared import PreparedEvents, PreparedSave, QueuedWrites

from . import ops, queue, schedules
from .connection import connect, transaction, translated

T = TypeVar("T")

DEFAULT_BUSY_TIMEOUT = 5.0  # seconds to wait for another process's write lock


class SqliteStore(QueuedWrites):
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
    IMMEDIATE`` transaction (group commit: one fsync, and a few statements for the whole
    batch), with their events, approvals and claims, and the ``append_events`` queued
    meanwhile. The claim check (R33) and the version check (R7) run inside that
    transaction, before anything of the save is written, so two processes racing on one
    session or one approval cannot both win and a refused save does not sink the others;
    a batch that does not fit is retried save by save. A lease is a row of ``leases``
    whose token a save under it checks in that same transaction; expiries are by
    :attr:`clock`, this host's clock by default (the processes sharing a file share it).
    """

    #: The store contract this release is written for (a literal: a driver is released
    #: apart from luoshod, and luoshod refuses it if the two differ).
    contract_version = 2
    #: Headers as bytes in their compact form (``codec.compact_header``): a third of
    #: their JSON. ``header`` is a TEXT column; SQLite keeps a bytes value as a BLOB and
    #: reads it back as bytes, so rows written as JSON before read on beside them.
    compact_headers = True
    capabilities = frozenset(
        {
            Capability.DURABLE,
            Capability.MULTI_PROCESS,
            Capability.HISTORY,
            Capability.APPROVALS,
            Capability.EVENT_LOG,
            Capability.LEASES,
            Capability.QUEUE,
            Capability.SCHEDULES,
        }
    )

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
        self.path = local_path(path)
        self.busy_timeout = busy_timeout
        self._thread = DatabaseThread("luoshod-sqlite")
        self._saves: GroupCommit[PreparedSave | PreparedEvents] = GroupCommit(
            self._thread, self._apply_batch
        )
        #: Lease takes and releases, group-committed like saves: a burst of run starts
        #: (each takes its session's lease) shares syncs instead of one each.
        self._lease_writes: GroupCommit[tuple[Callable[..., Any], tuple[Any, ...]]] = GroupCommit(
            self._thread, self._apply_lease_batch
        )
        self._conn: sqlite3.Connection | None = None  # touched only on the database thread

    @classmethod
    def from_url(cls, url: str, *, history_limit: int = DEFAULT_HISTORY_LIMIT) -> SqliteStore:
        return cls(path_from_url(url), history_limit=history_limit)

    def exists(self) -> bool:
        return self.path.is_file()

    def check_location(self) -> None:
        """The file's directory must exist: open would create it, so a mistyped path would
        serve a new, empty store."""
        file_in_the_way(self.path)
        if not self.path.parent.is_dir():
            raise ValueError(
                f"the directory {self.path.parent} does not exist; create it "
                f"(mkdir -p {self.path.parent}) or choose another --store path"
            )
        # The database, its WAL and shared-memory files, and the directory they are made in.
        files = [self.path, *(self.path.with_name(self.path.name + s) for s in ("-wal", "-shm"))]
        read_only(self.path, files, self.path.parent)

    def disk_bytes(self) -> int:
        """The database file with its ``-wal`` and ``-shm`` files."""
        files = (self.path, *(self.path.with_name(self.path.name + s) for s in ("-wal", "-shm")))
        return sum(_size(f) for f in files)

    def __repr__(self) -> str:
        return f"SqliteStore({str(self.path)!r}, history_limit={self.history_limit})"

    # -- lifecycle -----------------------------------------------------------------------

    async def _open(self) -> None:
        self._thread.start()
        self._saves = GroupCommit(self._thread, self._apply_batch)
        self._lease_writes = GroupCommit(self._thread, self._apply_lease_batch)
        try:
            await self._call("open", self._connect)
        except BaseException:
            await self._thread.stop()
            raise

    async def _close(self) -> None:
        try:
            await self._saves.close()  # every queued save is committed first
            await self._lease_writes.close()
            await self._call("close", self._disconnect)
        finally:
            await self._thread.stop()

    # -- the contract --------------------------------------------------------------------

    async def load(self, session_id: str) -> Checkpoint | None:
        return await self._call("load", self._read, ops.load, session_id)

    async def delete(
        self, session_id: str, *, keep_history: bool = False, keep_queue: bool = False
    ) -> bool:
        return await self._call(
            "delete", self._write, ops.delete, session_id, keep_history, keep_queue
        )

    async def find_request(self, session_id: str, request_id: str) -> AppliedRequest | None:
        return await self._call(
            "find_request", self._read, ops.find_request, session_id, request_id
        )

    async def requests(self, session_id: str) -> list[AppliedRequest]:
        return await self._call("requests", self._read, ops.requests, session_id)

    async def _acquire_lease(
        self, session_id: str, owner: str, ttl: float, address: str = ""
    ) -> Lease:
        lease: Lease = await self._lease_writes.submit(
            (ops.acquire_lease, (session_id, owner, ttl, address, self.clock))
        )
        return lease

    async def _renew_lease(self, lease: Lease, ttl: float) -> Lease:
        return await self._call("renew_lease", self._write, ops.renew_lease, lease, ttl, self.clock)

    async def _renew_leases(self, leases: list[Lease], ttl: float) -> Renewal:
        return await self._call(
            "renew_leases", self._write, ops.renew_leases, leases, ttl, self.clock
        )

    async def _list_leases(self, owner: str | None, after: str, limit: int) -> list[Lease]:
        return await self._call(
            "list_leases", self._read, ops.list_leases, owner, after, limit, self.clock
        )

    async def release_lease(self, lease: Lease) -> None:
        await self._lease_writes.submit((ops.release_lease, (lease,)))

    async def release_leases_of(self, owner: str) -> int:
        return await self._call(
            "release_leases_of", self._write, ops.release_leases_of, owner, self.clock
        )

    async def _read_events(self, session_id: str, after_seq: int, limit: int) -> EventPage:
        return await self._call(
            "read_events", self._read, ops.read_events, session_id, after_seq, limit
        )

    async def get_approval(self, approval_id: str) -> Approval | None:
        return await self._call("get_approval", self._read, ops.get_approval, approval_id)

    async def _list_approvals(
        self, session_id: str | None, after: str, limit: int
    ) -> list[Approval]:
        return await self._call(
            "list_approvals", self._read, ops.list_approvals, session_id, after, limit
        )

    async def _list_sessions(
        self, status: Status | None, after: str, limit: int
    ) -> list[SessionSummary]:
        return await self._call(
            "list_sessions", self._read, ops.list_sessions, status, after, limit
        )

    async def _list_sessions_in(
        self, status: Status | None, low: str, high: str, skip: str, limit: int
    ) -> list[SessionSummary]:
        return await self._call(
            "list_sessions", self._read, ops.list_sessions_in, status, low, high, skip, limit
        )

    async def _history(self, session_id: str, limit: int | None) -> list[HistoryEntry]:
        return await self._call("history", self._read, ops.history, session_id, limit)

    async def _session_ids(self, after: str, limit: int) -> list[str]:
        return await self._call("session_ids", self._read, ops.session_ids, after, limit)

    async def _import_session(
        self,
        session_id: str,
        latest: Checkpoint | None,
        history: list[Checkpoint],
        approvals: list[Approval],
        events: list[StoredEvent],
        requests: list[AppliedRequest],
    ) -> None:
        await self._call(
            "import_session",
            self._write,
            ops.import_session,
            session_id,
            latest,
            history,
            approvals,
            events,
            requests,
        )

    async def _enqueue_input(
        self, session_id: str, request_id: str, data: bytes, front: bool, now: float
    ) -> QueuedInput:
        return await self._call(
            "enqueue_input", self._write, queue.enqueue, session_id, request_id, data, front, now
        )

    async def _queued_inputs(self, session_id: str) -> list[QueuedInput]:
        return await self._call("queued_inputs", self._read, queue.queued, session_id)

    async def _remove_queued_input(self, session_id: str, request_id: str) -> bool:
        return await self._call(
            "remove_queued_input", self._write, queue.remove, session_id, request_id
        )

    async def _replace_queued_input(self, session_id: str, request_id: str, data: bytes) -> bool:
        return await self._call(
            "replace_queued_input", self._write, queue.replace, session_id, request_id, data
        )

    async def _queued_sessions(self, after: str, limit: int) -> list[str]:
        return await self._call("queued_sessions", self._read, queue.sessions, after, limit)

    async def _create_schedule(self, name: str, data: bytes) -> StoredSchedule | None:
        return await self._call("create_schedule", self._write, schedules.create, name, data)

    async def _get_schedule(self, name: str) -> StoredSchedule | None:
        return await self._call("get_schedule", self._read, schedules.get, name)

    async def _list_schedules(self) -> list[StoredSchedule]:
        return await self._call("list_schedules", self._read, schedules.every)

    async def _update_schedule(self, name: str, data: bytes, version: int) -> StoredSchedule | None:
        return await self._call(
            "update_schedule", self._write, schedules.update, name, data, version
        )

    async def _delete_schedule(self, name: str) -> bool:
        return await self._call("delete_schedule", self._write, schedules.delete, name)

    # -- the database thread -------------------------------------------------------------

    async def _call(self, what: str, fn: Callable[..., T], *args: Any) -> T:
        return await self._thread.call(what, self._edge, what, fn, *args)

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

    def _apply_batch(self, batch: list[Queued[PreparedSave | PreparedEvents]]) -> None:
        """Commit a batch of saves in one transaction (group commit); on the thread."""
        self._edge("save", self._write, ops.save_batch, batch)

    def _apply_lease_batch(
        self, batch: list[Queued[tuple[Callable[..., Any], tuple[Any, ...]]]]
    ) -> None:
        """Lease takes and releases in one transaction; on the thread. One refused (a
        lease held by another daemon) is refused alone: the ops raise before they write."""
        self._edge("lease", self._write, _each_lease_write, batch)


def _each_lease_write(
    conn: sqlite3.Connection, batch: list[Queued[tuple[Callable[..., Any], tuple[Any, ...]]]]
) -> None:
    for item in batch:
        fn, args = item.payload
        try:
            item.result, item.error = fn(conn, *args), None
        except LuoshoError as e:
            item.result, item.error = None, e


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


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
