"""The ``lmdb:`` driver's façade: URL, lifecycle, and group commit.

The records are laid out in :mod:`.layout`, the operations are in :mod:`.ops`, and the
environment (map growth, migrations, the translation of ``lmdb`` errors) in
:mod:`.environment`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl, unquote, urlsplit

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
from luoshod.errors import LuoshoError, StoreError
from luoshod.store.kit import (
    DEFAULT_HISTORY_LIMIT,
    Capability,
    Renewal,
    file_in_the_way,
    local_path,
    read_only,
)
from luoshod.store.kit.groupcommit import GroupCommit, Queued
from luoshod.store.kit.prepared import Prepared, PreparedSave, QueuedWrites

from . import environment, layout, ops, queue, schedules
from .environment import DEFAULT_MAP_SIZE, DEFAULT_MAX_MAP_SIZE, Environment, translated

T = TypeVar("T")


class LmdbStore(QueuedWrites):
    """A durable store in an LMDB environment (a directory), shareable by several processes.

    URL forms (``from_url``):

    - ``lmdb:///abs/path/dir``: an absolute path (three slashes, then the path);
    - ``lmdb:relative/dir``: relative to the working directory at construction;
    - query parameters: ``map_size`` (the initial map, default 64 MiB) and
      ``max_map_size`` (default 1 TiB), in bytes or with a ``KiB``/``MiB``/``GiB``/``TiB``
      suffix, e.g. ``lmdb:///var/lib/luoshod?max_map_size=8GiB``.

    :meth:`open` creates the directory if missing. Durable: the environment syncs every
    commit (LMDB's ``sync`` and ``metasync``, never turned off), so a save is
    acknowledged once it is on disk. Saves queued while the database thread is busy are
    written in one write transaction, one sync (group commit); the version check of R7
    runs inside that transaction, and LMDB's lock file lets one process write at a time,
    so two processes racing on one session cannot both win. When the map is full it is
    doubled and the transaction retried, up to ``max_map_size``; past that a save fails
    with ``StoreFull`` and the previous state is intact. Reader slots left by dead
    processes are cleared at open. A lease is a record of ``leases`` whose token a save
    under it checks in its write transaction; expiries are by :attr:`clock`, this host's
    clock by default (the processes sharing an environment share it).

    Session and approval ids must be 1 to 400 UTF-8 bytes without NUL (``InvalidArgument``
    otherwise); the service allows 128 characters.
    """

    #: The store contract this release is written for (a literal: a driver is released
    #: apart from luoshod, and luoshod refuses it if the two differ).
    contract_version = 2
    #: Headers in their compact form (``codec.compact_header``): a third of their JSON;
    #: a row's header written as JSON before reads on.
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
        map_size: int | None = None,
        max_map_size: int = DEFAULT_MAX_MAP_SIZE,
    ) -> None:
        super().__init__(history_limit=history_limit)
        if not str(path):
            raise ValueError("LmdbStore needs a directory path")
        if map_size is None:
            map_size = min(DEFAULT_MAP_SIZE, max_map_size)
        if map_size < 1 or max_map_size < map_size:
            raise ValueError(
                f"need 0 < map_size <= max_map_size, got {map_size} and {max_map_size}"
            )
        self.path = local_path(path)
        self.map_size = map_size
        self.max_map_size = max_map_size
        self._env: Environment | None = None
        # None until open: QueuedWrites types it as always there, which _before_write makes
        # true of every write (it refuses one on a store that is not open).
        self._saves: GroupCommit[Prepared] | None = None  # type: ignore[assignment]  # see above
        #: Lease takes and releases, group-committed like saves: a burst of run starts
        #: (each takes its session's lease) shares syncs instead of one each.
        self._lease_writes: GroupCommit[tuple[Callable[..., Any], tuple[Any, ...]]] | None = None

    @classmethod
    def from_url(cls, url: str, *, history_limit: int = DEFAULT_HISTORY_LIMIT) -> LmdbStore:
        path, options = parse_url(url)
        return cls(path, history_limit=history_limit, **options)

    def exists(self) -> bool:
        return (self.path / "data.mdb").is_file()

    def check_location(self) -> None:
        file_in_the_way(self.path)
        read_only(self.path, [self.path / "data.mdb", self.path / "lock.mdb"], self.path)

    def disk_bytes(self) -> int:
        """``data.mdb`` (the lock file holds no data)."""
        try:
            return (self.path / "data.mdb").stat().st_size
        except FileNotFoundError:
            return 0

    def __repr__(self) -> str:
        return f"LmdbStore({str(self.path)!r}, history_limit={self.history_limit})"

    # -- lifecycle -----------------------------------------------------------------------

    async def _open(self) -> None:
        env = await environment.acquire(
            self.path, map_size=self.map_size, max_map_size=self.max_map_size
        )
        self._env, self._saves = env, GroupCommit(env.thread, self._apply_batch)
        self._lease_writes = GroupCommit(env.thread, self._apply_lease_batch)

    async def _close(self) -> None:
        env, saves, lease_writes = self._env, self._saves, self._lease_writes
        if env is None or saves is None:
            return
        self._env = None
        try:
            await saves.close()  # every queued save is committed first
            if lease_writes is not None:
                await lease_writes.close()
        finally:
            await environment.release(env)

    # -- the contract --------------------------------------------------------------------

    async def load(self, session_id: str) -> Checkpoint | None:
        return await self._read("load", ops.load, session_id)

    async def delete(
        self, session_id: str, *, keep_history: bool = False, keep_queue: bool = False
    ) -> bool:
        return await self._write("delete", ops.delete, session_id, keep_history, keep_queue)

    async def find_request(self, session_id: str, request_id: str) -> AppliedRequest | None:
        return await self._read("find_request", ops.find_request, session_id, request_id)

    async def requests(self, session_id: str) -> list[AppliedRequest]:
        return await self._read("requests", ops.requests, session_id)

    async def _list_sessions(
        self, status: Status | None, after: str, limit: int
    ) -> list[SessionSummary]:
        return await self._read("list_sessions", ops.list_sessions, status, after, limit)

    async def _list_sessions_in(
        self, status: Status | None, low: str, high: str, skip: str, limit: int
    ) -> list[SessionSummary]:
        return await self._read(
            "list_sessions", ops.list_sessions_in, status, low, high, skip, limit
        )

    async def _history(self, session_id: str, limit: int | None) -> list[HistoryEntry]:
        return await self._read("history", ops.history, session_id, limit)

    async def _acquire_lease(
        self, session_id: str, owner: str, ttl: float, address: str = ""
    ) -> Lease:
        return await self._lease_write(
            "acquire_lease", ops.acquire_lease, session_id, owner, ttl, address, self.clock
        )

    async def _renew_lease(self, lease: Lease, ttl: float) -> Lease:
        return await self._write("renew_lease", ops.renew_lease, lease, ttl, self.clock)

    async def _renew_leases(self, leases: list[Lease], ttl: float) -> Renewal:
        return await self._write("renew_leases", ops.renew_leases, leases, ttl, self.clock)

    async def _list_leases(self, owner: str | None, after: str, limit: int) -> list[Lease]:
        return await self._read("list_leases", ops.list_leases, owner, after, limit, self.clock)

    async def release_lease(self, lease: Lease) -> None:
        await self._lease_write("release_lease", ops.release_lease, lease)

    async def release_leases_of(self, owner: str) -> int:
        return await self._write("release_leases_of", ops.release_leases_of, owner, self.clock)

    async def _read_events(self, session_id: str, after_seq: int, limit: int) -> EventPage:
        return await self._read("read_events", ops.read_events, session_id, after_seq, limit)

    async def get_approval(self, approval_id: str) -> Approval | None:
        return await self._read("get_approval", ops.get_approval, approval_id)

    async def _list_approvals(
        self, session_id: str | None, after: str, limit: int
    ) -> list[Approval]:
        return await self._read("list_approvals", ops.list_approvals, session_id, after, limit)

    async def _enqueue_input(
        self, session_id: str, request_id: str, data: bytes, front: bool, now: float
    ) -> QueuedInput:
        key = layout.id_key(session_id)
        return await self._write(
            "enqueue_input", queue.enqueue, key, session_id, request_id, data, front, now
        )

    async def _queued_inputs(self, session_id: str) -> list[QueuedInput]:
        return await self._read("queued_inputs", queue.queued, session_id)

    async def _remove_queued_input(self, session_id: str, request_id: str) -> bool:
        return await self._write("remove_queued_input", queue.remove, session_id, request_id)

    async def _replace_queued_input(self, session_id: str, request_id: str, data: bytes) -> bool:
        return await self._write(
            "replace_queued_input", queue.replace, session_id, request_id, data
        )

    async def _queued_sessions(self, after: str, limit: int) -> list[str]:
        return await self._read("queued_sessions", queue.sessions, after, limit)

    async def _create_schedule(self, name: str, data: bytes) -> StoredSchedule | None:
        return await self._write("create_schedule", schedules.create, name, data)

    async def _get_schedule(self, name: str) -> StoredSchedule | None:
        return await self._read("get_schedule", schedules.get, name)

    async def _list_schedules(self) -> list[StoredSchedule]:
        return await self._read("list_schedules", schedules.every)

    async def _update_schedule(self, name: str, data: bytes, version: int) -> StoredSchedule | None:
        return await self._write("update_schedule", schedules.update, name, data, version)

    async def _delete_schedule(self, name: str) -> bool:
        return await self._write("delete_schedule", schedules.delete, name)

    async def _session_ids(self, after: str, limit: int) -> list[str]:
        return await self._read("session_ids", ops.session_ids, after, limit)

    async def _import_session(
        self,
        session_id: str,
        latest: Checkpoint | None,
        history: list[Checkpoint],
        approvals: list[Approval],
        events: list[StoredEvent],
        requests: list[AppliedRequest],
    ) -> None:
        key = layout.id_key(session_id)
        for a in approvals:
            layout.id_key(a.approval_id, "approval id")
        await self._write(
            "import_session",
            ops.import_session,
            key,
            latest,
            history,
            approvals,
            events,
            requests,
        )

    # -- the database thread -------------------------------------------------------------

    def _environment(self, what: str) -> Environment:
        if self._env is None:
            raise StoreError(f"LMDB store {self.path} is not open", operation=what)
        return self._env

    async def _read(self, what: str, fn: Callable[..., T], *args: Any) -> T:
        env = self._environment(what)
        return await env.thread.call(what, _edge, what, env.read, fn, *args)

    async def _write(self, what: str, fn: Callable[..., T], *args: Any) -> T:
        env = self._environment(what)
        return await env.thread.call(what, _edge, what, env.write, fn, *args)

    async def _lease_write(self, what: str, fn: Callable[..., T], *args: Any) -> T:
        """``fn(txn, dbs, *args)`` in the next batch of lease writes (one transaction)."""
        self._environment(what)
        assert self._lease_writes is not None
        result: T = await self._lease_writes.submit((fn, args))
        return result

    def _apply_lease_batch(
        self, batch: list[Queued[tuple[Callable[..., Any], tuple[Any, ...]]]]
    ) -> None:
        """Lease takes and releases in one transaction; on the thread. One refused (a
        lease held by another daemon, an id LMDB cannot key) is refused alone: the ops
        raise before they write."""
        env = self._environment("lease")
        with translated("lease"):
            env.write(_each_lease_write, batch)

    def _before_write(self, what: str, payload: Prepared) -> None:
        """Refuse a write to a store that is not open, or of an id LMDB cannot key
        (``InvalidArgument``), before it is queued."""
        self._environment(what)
        layout.id_key(payload.session_id)
        for e in payload.enqueue:
            layout.id_key(e.session_id)
        if isinstance(payload, PreparedSave) and payload.approval is not None:
            layout.id_key(payload.approval.approval_id, "approval id")

    def _apply_batch(self, batch: list[Queued[Prepared]]) -> None:
        """Write a batch of saves in one transaction (group commit); on the thread."""
        env = self._environment("save")
        with translated("save"):
            env.write(ops.save_batch, batch)


def _each_lease_write(
    txn: Any, dbs: Any, batch: list[Queued[tuple[Callable[..., Any], tuple[Any, ...]]]]
) -> None:
    for item in batch:  # run again from the start when the map grows (Environment.write)
        fn, args = item.payload
        try:
            item.result, item.error = fn(txn, dbs, *args), None
        except LuoshoError as e:
            item.result, item.error = None, e


def _edge(what: str, run: Callable[..., T], fn: Callable[..., T], *args: Any) -> T:
    with translated(what):
        return run(fn, *args)


_SIZE = re.compile(r"(\d+)\s*(|k|kib|m|mib|g|gib|t|tib)", re.IGNORECASE)
_UNITS = {"": 0, "k": 10, "kib": 10, "m": 20, "mib": 20, "g": 30, "gib": 30, "t": 40, "tib": 40}


def parse_size(text: str) -> int:
    """Bytes from ``"1048576"``, ``"64MiB"``, ``"8G"``… Raises ``ValueError``."""
    m = _SIZE.fullmatch(text.strip())
    if not m:
        raise ValueError(f"not a size in bytes (e.g. 1073741824 or 1GiB): {text!r}")
    return int(m.group(1)) << _UNITS[m.group(2).lower()]


def parse_url(url: str) -> tuple[Path, dict[str, int]]:
    """The directory and options of an ``lmdb:`` URL (see :class:`LmdbStore`)."""
    parts = urlsplit(url)
    if parts.scheme != "lmdb":
        raise ValueError(f"not an lmdb URL: {url!r}")
    if parts.netloc:
        raise ValueError(
            f"lmdb URL takes no host: {url!r} (use lmdb:///abs/path/dir or lmdb:relative/dir)"
        )
    if parts.fragment:
        raise ValueError(f"lmdb URL takes no fragment: {url!r}")
    path = unquote(parts.path)
    if not path:
        raise ValueError(f"lmdb URL needs a directory path: {url!r}")
    options: dict[str, int] = {}
    for name, value in parse_qsl(parts.query, keep_blank_values=True, strict_parsing=False):
        if name not in ("map_size", "max_map_size"):
            raise ValueError(f"unknown lmdb URL option {name!r} (map_size, max_map_size)")
        options[name] = parse_size(value)
    return Path(path), options
