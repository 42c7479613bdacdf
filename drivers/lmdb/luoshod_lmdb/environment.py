"""An open LMDB environment: one per directory and process, shared by the stores on it.

LMDB forbids opening one environment twice in a process (its locks are per process, so
a second handle would share them and closing it would release them), so every
:class:`~.driver.LmdbStore` on a directory uses the one :class:`Environment` of the
registry here, with its one database thread. Every transaction runs on that thread,
which is also what resizing the map requires (no transaction of the process may be open).

Here live, too: the schema version check and migrations, the write transaction that
grows the map when it is full, and the translation of ``lmdb`` exceptions into
:mod:`luoshod.errors` (the driver's edge).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

import lmdb

from luoshod.errors import NEWER_LUOSHOD, StoreError, StoreFull
from luoshod.store.kit.codec import FORMAT_VERSION
from luoshod.store.kit.groupcommit import DatabaseThread

from . import layout
from .layout import Dbs

log = logging.getLogger("luoshod.store.lmdb")

T = TypeVar("T")

MiB = 1 << 20
DEFAULT_MAP_SIZE = 64 * MiB
DEFAULT_MAX_MAP_SIZE = 1 << 40  # 1 TiB of address space; the disk is usually the limit
MAX_DBS = 24


class SchemaTooNew(Exception):
    """The environment was written by a newer luoshod."""


def _migrate_to_1(txn: lmdb.Transaction[bytes], dbs: Dbs) -> None:
    txn.put(layout.NEXT_LOG_ID_KEY, layout.u64(1), db=dbs.meta)


#: ``MIGRATIONS[i]`` takes the environment from schema version ``i`` to ``i + 1``. Append
#: new steps; never edit a released one.
def _migrate_to_2(txn: lmdb.Transaction[bytes], dbs: Dbs) -> None:
    """Leases: their database is created at open like every other; the version moves on
    so that a luoshod without leases (which would write without checking them) refuses
    the environment."""


def _migrate_to_3(txn: lmdb.Transaction[bytes], dbs: Dbs) -> None:
    """Applied request records (R74) in ``requests`` and ``request_order``, created at open:
    a luoshod that kept them in the session's header refuses the environment."""


def _migrate_to_4(txn: lmdb.Transaction[bytes], dbs: Dbs) -> None:
    """Queued inputs (R69) in ``queue``, created at open: a luoshod without the queue
    (whose delete would leave a session's queue behind) refuses the environment."""


def _migrate_to_5(txn: lmdb.Transaction[bytes], dbs: Dbs) -> None:
    """Schedules (R87) in ``schedules``, created at open."""


MIGRATIONS: list[Callable[[lmdb.Transaction[bytes], Dbs], None]] = [
    _migrate_to_1,
    _migrate_to_2,
    _migrate_to_3,
    _migrate_to_4,
    _migrate_to_5,
]
SCHEMA_VERSION = len(MIGRATIONS)


#: LMDB's meta pages (pages 0 and 1 of ``data.mdb``, format 1): where their fields are.
_META_MAGIC, _META_PSIZE, _META_LAST_PG = 16, 40, 136
_MDB_MAGIC = 0xBEEFC0DE


def check_not_truncated(data: Path) -> None:
    """Refuse a ``data.mdb`` shorter than its newest meta page says it is (a truncated
    copy or restore): LMDB would map it, and the process would die of SIGBUS on the first
    read of a missing page, with no word of why. Raises ``StoreError`` naming the file."""
    try:
        size = data.stat().st_size
    except FileNotFoundError:
        return  # a new environment
    with data.open("rb") as f:
        head = f.read(_META_LAST_PG + 16)
        if len(head) < _META_LAST_PG + 16:
            raise StoreError(
                f"LMDB data file {data} is truncated: {size} bytes, not even its first page"
            )
        (magic,) = struct.unpack_from("<I", head, _META_MAGIC)
        if magic != _MDB_MAGIC:
            return  # not a meta page LMDB wrote: lmdb.open names what is wrong
        (psize,) = struct.unpack_from("<I", head, _META_PSIZE)
        f.seek(psize)
        second = f.read(_META_LAST_PG + 16)
    metas = [head] + ([second] if len(second) == _META_LAST_PG + 16 else [])
    last_pg, _ = max(
        (struct.unpack_from("<QQ", m, _META_LAST_PG) for m in metas), key=lambda lt: lt[1]
    )
    needed = (last_pg + 1) * psize
    if size < needed:
        raise StoreError(
            f"LMDB data file {data} is truncated: {size} bytes, but its pages go up to "
            f"byte {needed} (restore it whole from a backup)"
        )


class Environment:
    """The environment of one directory, its named databases and its database thread."""

    def __init__(self, path: Path, *, map_size: int, max_map_size: int) -> None:
        self.path = path
        self.map_size = map_size
        self.max_map_size = max_map_size
        self.thread = DatabaseThread("luoshod-lmdb")
        self.refs = 0
        self.opened: Future[None] | None = None
        self.stale_readers_cleared = 0
        self._env: lmdb.Environment | None = None
        self._dbs: Dbs | None = None

    # -- on the database thread ------------------------------------------------------------

    def open(self) -> None:
        with translated("open"):
            self.path.mkdir(parents=True, exist_ok=True)
            check_not_truncated(self.path / "data.mdb")
            env = lmdb.open(
                str(self.path),
                map_size=self.map_size,
                subdir=True,
                max_dbs=MAX_DBS,
                sync=True,  # a commit returns once its data and meta page are on disk
                metasync=True,
                lock=True,  # LMDB's own lock file: several processes may share the directory
                readahead=False,
            )
            try:
                # Reader slots of processes that died mid-read would pin old pages forever.
                self.stale_readers_cleared = env.reader_check()
                self._env = env
                self._dbs = self.write(self._migrate)
            except BaseException:
                self._env = None
                env.close()
                raise
        if self.stale_readers_cleared:
            log.info("cleared %d stale LMDB readers in %s", self.stale_readers_cleared, self.path)

    def close(self) -> None:
        env, self._env = self._env, None
        if env is not None:
            with translated("close"):
                env.close()

    def read(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(txn, dbs, *args)`` in a read transaction (one snapshot)."""
        with self._begin(write=False) as txn:
            return fn(txn, self._dbs, *args)

    def write(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(txn, dbs, *args)`` in a write transaction, committed (and synced) on return.

        When the map is full the transaction is aborted, the map doubled (up to
        ``max_map_size``) and ``fn`` run again from the start; past the maximum this raises
        ``StoreFull`` and nothing was written. ``fn`` must therefore not leave state behind
        that a second run would trip over.
        """
        while True:
            try:
                with self._begin(write=True) as txn:
                    return fn(txn, self._dbs, *args)
            except lmdb.MapFullError:
                self._grow()

    def usage(self) -> dict[str, int]:
        """Map size, pages in use and page size (for tests and the benchmark)."""
        env = self._environment()
        info, stat = env.info(), env.stat()
        return {
            "map_size": info["map_size"],
            "last_pgno": info["last_pgno"],
            "page_size": stat["psize"],
        }

    def _migrate(self, txn: lmdb.Transaction[bytes], _: Any) -> Dbs:
        env = self._environment()
        handles = {name: env.open_db(name, txn=txn, create=True) for name in layout.DATABASES}
        dbs = Dbs(handles, env.stat()["psize"] - layout.PAGE_HEADER)
        found = txn.get(layout.SCHEMA_VERSION_KEY, db=dbs.meta)
        version = layout.from_u64(found) if found is not None else 0
        if version > SCHEMA_VERSION:
            raise SchemaTooNew(
                f"{self.path} has schema version {version}, newer than this driver's "
                f"{SCHEMA_VERSION}: it was written by a newer luoshod; upgrade luoshod and "
                "luoshod-lmdb to open it"
            )
        marked = txn.get(layout.FORMAT_VERSION_KEY, db=dbs.meta)
        written = layout.from_u64(marked) if marked is not None else 0
        if written > FORMAT_VERSION:
            raise SchemaTooNew(
                f"{self.path} holds records in store format {written}, and this luoshod "
                f"reads formats up to {FORMAT_VERSION}: it was written by a newer luoshod; "
                "upgrade luoshod and luoshod-lmdb to open it"
            )
        for step in MIGRATIONS[version:]:
            step(txn, dbs)
        txn.put(layout.SCHEMA_VERSION_KEY, layout.u64(SCHEMA_VERSION), db=dbs.meta)
        if written < FORMAT_VERSION:
            txn.put(layout.FORMAT_VERSION_KEY, layout.u64(FORMAT_VERSION), db=dbs.meta)
        return dbs

    def _environment(self) -> lmdb.Environment:
        if self._env is None:
            raise StoreError(f"LMDB store {self.path} is not open")
        return self._env

    @contextlib.contextmanager
    def _begin(self, *, write: bool) -> Iterator[lmdb.Transaction[bytes]]:
        env = self._environment()
        try:
            txn = env.begin(write=write)
        except lmdb.MapResizedError:
            # Another process grew the map past ours: adopt its size.
            env.set_mapsize(0)
            txn = env.begin(write=write)
        with txn:
            yield txn

    def _grow(self) -> None:
        env = self._environment()
        current = env.info()["map_size"]
        if current >= self.max_map_size:
            raise StoreFull(
                f"LMDB store {self.path} is full: its map reached max_map_size "
                f"({self.max_map_size} bytes)",
                max_map_size=self.max_map_size,
            )
        grown = min(self.max_map_size, current * 2)
        env.set_mapsize(grown)
        log.info("LMDB map of %s grown from %d to %d bytes", self.path, current, grown)


# -- the registry: one Environment per directory and process -------------------------------

_registry_lock = threading.Lock()
_open: dict[Path, Environment] = {}
_closing: dict[Path, Future[None]] = {}


async def acquire(path: Path, *, map_size: int, max_map_size: int) -> Environment:
    """The open environment of ``path``, opened on first use. Raises ``StoreError``.

    A store opening a directory another store of this process has open shares its
    environment (and the first store's map sizes).
    """
    while True:
        with _registry_lock:
            closing = _closing.get(path)
            if closing is None:
                env = _open.get(path)
                if env is None:
                    env = _open[path] = Environment(
                        path, map_size=map_size, max_map_size=max_map_size
                    )
                    env.thread.start()
                    env.opened = env.thread.submit(env.open)
                env.refs += 1
                break
        await asyncio.wrap_future(closing)  # the last store of it is closing it: wait
    try:
        assert env.opened is not None
        await asyncio.wrap_future(env.opened)
    except BaseException:
        await release(env)
        raise
    return env


async def release(env: Environment) -> None:
    """Drop a store's use of ``env``; the last one closes it."""
    with _registry_lock:
        env.refs -= 1
        if env.refs:
            return
        del _open[env.path]
        done = _closing[env.path] = Future()
    try:
        with contextlib.suppress(StoreError):
            await env.thread.call("close", env.close)
        await env.thread.stop()
    finally:
        with _registry_lock:
            del _closing[env.path]
        done.set_result(None)


# -- the edge ------------------------------------------------------------------------------


def translate(e: BaseException, what: str) -> StoreError:
    """The :mod:`luoshod.errors` equivalent of an ``lmdb`` (or file system) exception."""
    if isinstance(e, lmdb.MapFullError | lmdb.DiskError):  # DiskError is ENOSPC
        return StoreFull(f"LMDB store is full: {what} failed: {e}", operation=what)
    if isinstance(e, SchemaTooNew):  # written_by: the daemon's refusal says to upgrade
        return StoreError(
            f"LMDB {what} failed: {e}",
            operation=what,
            error=type(e).__name__,
            written_by=NEWER_LUOSHOD,
        )
    if isinstance(e, lmdb.Error | OSError):
        return StoreError(f"LMDB {what} failed: {e}", operation=what, error=type(e).__name__)
    raise TypeError(f"not a storage error: {e!r}")


@contextlib.contextmanager
def translated(what: str) -> Iterator[None]:
    """Library exceptions leave as ``StoreError``/``StoreFull``; ours pass through."""
    try:
        yield
    except (lmdb.Error, OSError, SchemaTooNew) as e:
        raise translate(e, what) from e
