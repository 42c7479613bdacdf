"""The ``postgresql:`` driver's façade: URL, lifecycle, the pool, group commit, leases.

SQL lives in :mod:`.queries`, the schema in :mod:`.migrations`, the operations in
:mod:`.ops`; every psycopg exception is translated in :mod:`.connection`.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, TypeVar

import psycopg
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

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
from luoshod.store.kit import DEFAULT_HISTORY_LIMIT, Capability, Renewal, lease_busy, lease_lost
from luoshod.store.kit.groupcommit import AsyncGroupCommit, Queued
from luoshod.store.kit.prepared import Prepared, QueuedWrites

from . import ops, queries, queue, schedules
from .connection import (
    MARKS_PRUNED_EVERY,
    CommitUnknown,
    NotCommitted,
    Target,
    bounded_lock_waits,
    committed,
    connection_lost,
    log,
    new_mark,
    new_pool,
    open_pool,
    snapshot,
    target_from_url,
    through_failover,
    translated,
    writing,
)

T = TypeVar("T")


class PostgresStore(QueuedWrites):
    """A durable store in a PostgreSQL database, shared by any number of daemons.

    URL: ``postgresql://user:password@host:port/database?schema=luoshod`` (or
    ``postgres://``), with libpq's parameters and the driver's own (``schema``,
    ``pool_min_size``, ``pool_max_size``, ``pool_timeout``, ``idle_in_transaction_timeout``,
    ``lock_timeout``; :func:`.target_from_url`).
    :meth:`open` creates the schema if asked for and migrates it.

    Every call takes a connection from an async pool; a save is acknowledged after its
    transaction commits (``synchronous_commit`` on). Saves and appends queued while a
    batch is being written are committed together in one transaction (group commit),
    which locks their sessions (advisory locks, in id order) and checks each fencing
    token, claim (R33) and version (R7) before anything is written, so two daemons racing
    on one session or approval cannot both win and a refused save does not sink the
    others. Leases are rows whose expiry is by the database's clock (or by
    :attr:`clock` once a test sets it). Lease takes and releases queued meanwhile are
    committed together too, in one transaction of their own (a burst of run starts shares
    one commit instead of one each); one refused (a lease held elsewhere) is refused alone.

    While the server is unreachable every call fails with ``StoreError`` within
    ``pool_timeout`` (default 10 s); the pool reconnects by itself when it is back.

    Through a failover (a URL naming the cluster's hosts, libpq keeping the one that takes
    writes with ``target_session_attrs=read-write``), a call that loses its connection is
    tried again on a new one for up to ``failover_timeout`` seconds (default 30 with
    several hosts). A write transaction whose commit's answer was lost is never simply
    tried again: its commit mark tells whether it landed (:func:`.connection.committed`),
    and only one that did not is written again, so a save is neither applied twice nor
    reported failed when it landed.
    """

    #: The store contract this release is written for (a literal: a driver is released
    #: apart from luoshod, and luoshod refuses it if the two differ).
    contract_version = 2
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

    def __init__(self, target: Target, *, history_limit: int = DEFAULT_HISTORY_LIMIT) -> None:
        super().__init__(history_limit=history_limit)
        self.clock = database_clock
        self.target = target
        self._pool: AsyncConnectionPool | None = None
        self._saves: AsyncGroupCommit[Prepared] = AsyncGroupCommit("luoshod-postgres", self._apply)
        self._lease_writes: AsyncGroupCommit[LeaseOp] = AsyncGroupCommit(
            "luoshod-postgres-leases", self._apply_leases
        )
        self._marks_pruned = 0.0  # time.monotonic() of the last pruning of commit marks

    @classmethod
    def from_url(cls, url: str, *, history_limit: int = DEFAULT_HISTORY_LIMIT) -> PostgresStore:
        return cls(target_from_url(url), history_limit=history_limit)

    def __repr__(self) -> str:
        return f"PostgresStore({self.target.redacted!r}, history_limit={self.history_limit})"

    # -- lifecycle -----------------------------------------------------------------------

    async def _open(self) -> None:
        pool = new_pool(self.target)
        try:
            with translated("open"):
                await open_pool(pool, self.target)
        except BaseException:
            await pool.close()
            raise
        self._pool = pool
        self._saves = AsyncGroupCommit("luoshod-postgres", self._apply)
        self._lease_writes = AsyncGroupCommit("luoshod-postgres-leases", self._apply_leases)

    async def _close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        try:
            await self._saves.close()  # every queued save is committed first
            await self._lease_writes.close()  # and every lease write
        finally:
            await pool.close()

    # -- the contract --------------------------------------------------------------------

    async def load(self, session_id: str) -> Checkpoint | None:
        return await self._autocommit("load", ops.load, session_id)

    def _before_write(self, what: str, payload: Prepared) -> None:
        self._require(what)

    async def delete(
        self, session_id: str, *, keep_history: bool = False, keep_queue: bool = False
    ) -> bool:
        return await self._write(
            "delete", [session_id], ops.delete, session_id, keep_history, keep_queue
        )

    async def _read_events(self, session_id: str, after_seq: int, limit: int) -> EventPage:
        return await self._snapshot("read_events", ops.read_events, session_id, after_seq, limit)

    async def find_request(self, session_id: str, request_id: str) -> AppliedRequest | None:
        return await self._autocommit("find_request", ops.find_request, session_id, request_id)

    async def requests(self, session_id: str) -> list[AppliedRequest]:
        return await self._autocommit("requests", ops.requests, session_id)

    async def get_approval(self, approval_id: str) -> Approval | None:
        return await self._autocommit("get_approval", ops.get_approval, approval_id)

    async def _list_approvals(
        self, session_id: str | None, after: str, limit: int
    ) -> list[Approval]:
        return await self._autocommit(
            "list_approvals", ops.list_approvals, session_id, after, limit
        )

    async def _list_sessions(
        self, status: Status | None, after: str, limit: int
    ) -> list[SessionSummary]:
        return await self._autocommit("list_sessions", ops.list_sessions, status, after, limit)

    async def _list_sessions_in(
        self, status: Status | None, low: str, high: str, skip: str, limit: int
    ) -> list[SessionSummary]:
        return await self._autocommit(
            "list_sessions", ops.list_sessions_in, status, low, high, skip, limit
        )

    async def _history(self, session_id: str, limit: int | None) -> list[HistoryEntry]:
        return await self._snapshot("history", ops.history, session_id, limit)

    async def _session_ids(self, after: str, limit: int) -> list[str]:
        return await self._autocommit("session_ids", ops.session_ids, after, limit)

    async def _import_session(
        self,
        session_id: str,
        latest: Checkpoint | None,
        history: list[Checkpoint],
        approvals: list[Approval],
        events: list[StoredEvent],
        requests: list[AppliedRequest],
    ) -> None:
        await self._write(
            "import_session",
            [session_id],
            ops.import_session,
            session_id,
            latest,
            history,
            approvals,
            events,
            requests,
        )

    # -- the input queue -----------------------------------------------------------------

    async def _enqueue_input(
        self, session_id: str, request_id: str, data: bytes, front: bool, now: float
    ) -> QueuedInput:
        return await self._write(
            "enqueue_input", [session_id], queue.enqueue, session_id, request_id, data, front, now
        )

    async def _queued_inputs(self, session_id: str) -> list[QueuedInput]:
        return await self._autocommit("queued_inputs", queue.queued, session_id)

    async def _remove_queued_input(self, session_id: str, request_id: str) -> bool:
        return await self._write(
            "remove_queued_input", [session_id], queue.remove, session_id, request_id
        )

    async def _replace_queued_input(self, session_id: str, request_id: str, data: bytes) -> bool:
        return await self._write(
            "replace_queued_input", [session_id], queue.replace, session_id, request_id, data
        )

    async def _queued_sessions(self, after: str, limit: int) -> list[str]:
        return await self._autocommit("queued_sessions", queue.sessions, after, limit)

    # -- schedules (R87) ----------------------------------------------------------------

    async def _create_schedule(self, name: str, data: bytes) -> StoredSchedule | None:
        return await self._write("create_schedule", [], schedules.create, name, data)

    async def _get_schedule(self, name: str) -> StoredSchedule | None:
        return await self._autocommit("get_schedule", schedules.get, name)

    async def _list_schedules(self) -> list[StoredSchedule]:
        return await self._autocommit("list_schedules", schedules.every)

    async def _update_schedule(self, name: str, data: bytes, version: int) -> StoredSchedule | None:
        return await self._write("update_schedule", [], schedules.update, name, data, version)

    async def _delete_schedule(self, name: str) -> bool:
        return await self._write("delete_schedule", [], schedules.delete, name)

    # -- leases --------------------------------------------------------------------------

    async def _acquire_lease(
        self, session_id: str, owner: str, ttl: float, address: str = ""
    ) -> Lease:
        self._require("acquire_lease")
        args = {
            "session_id": session_id,
            "owner": owner,
            "ttl": ttl,
            "now": self._now(),
            "address": address,
        }
        lease: Lease = await self._lease_writes.submit((session_id, _acquire, args))
        return lease

    async def _renew_lease(self, lease: Lease, ttl: float) -> Lease:
        args = {
            "session_id": lease.session_id,
            "token": lease.token,
            "ttl": ttl,
            "now": self._now(),
        }
        renewed = await self._fetchone("renew_lease", queries.RENEW_LEASE, args)
        if renewed is None:
            held = await self._fetchone("renew_lease", queries.SELECT_LEASE, (lease.session_id,))
            raise lease_lost(lease, held[1] if held else None)
        return replace(lease, expires_at=renewed[0])

    async def release_lease(self, lease: Lease) -> None:
        self._require("release_lease")
        args = {"session_id": lease.session_id, "token": lease.token}
        await self._lease_writes.submit((lease.session_id, _release, args))

    async def _renew_leases(self, leases: list[Lease], ttl: float) -> Renewal:
        args = {
            "sessions": [lease.session_id for lease in leases],
            "tokens": [lease.token for lease in leases],
            "ttl": ttl,
            "now": self._now(),
        }
        rows = {
            r[0]: r[1:] for r in await self._fetchall("renew_leases", queries.RENEW_LEASES, args)
        }
        renewed, lost = [], []
        for lease in leases:
            expires_at, token = rows.get(lease.session_id, (None, None))
            if expires_at is not None:
                renewed.append(replace(lease, expires_at=expires_at))
            else:
                lost.append(lease_lost(lease, token))
        return Renewal(renewed, lost)

    async def _list_leases(self, owner: str | None, after: str, limit: int) -> list[Lease]:
        args = {"after": after, "owner": owner, "limit": limit, "now": self._now()}
        rows = await self._fetchall("list_leases", queries.LIST_LEASES, args)
        return [Lease(*row) for row in rows]

    async def release_leases_of(self, owner: str) -> int:
        row = await self._fetchone(
            "release_leases_of", queries.RELEASE_LEASES_OF, {"owner": owner, "now": self._now()}
        )
        return int(row[0]) if row else 0

    def _now(self) -> float | None:
        """The "now" of a lease statement: ``None`` for the database's clock (the default),
        else the clock set on the store."""
        return None if self.clock is database_clock else self.clock()

    # -- calls on the pool ---------------------------------------------------------------

    def _require(self, what: str) -> AsyncConnectionPool:
        if self._pool is None:
            raise StoreError("luoshod-postgres: the store is not open", operation=what)
        return self._pool

    async def _autocommit(self, what: str, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """``fn(conn, *args)`` outside a transaction (one statement, or statements that
        need no common snapshot)."""
        pool = self._require(what)

        async def attempt() -> T:
            async with pool.connection() as conn:
                return await fn(conn, *args)

        # Tried again whole through a failover: reads, and writes that may land twice
        # harmlessly (a renewal, a release).
        with translated(what):
            return await through_failover(
                self.target, lambda: bounded_lock_waits(self.target, pool, attempt)
            )

    async def _snapshot(self, what: str, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """``fn(conn, *args)`` in a read-only transaction on one snapshot."""
        pool = self._require(what)

        async def attempt() -> T:
            async with snapshot(pool) as conn:
                return await fn(conn, *args)

        with translated(what):
            return await through_failover(self.target, attempt)

    async def _write(
        self, what: str, sessions: list[str], fn: Callable[..., Awaitable[T]], *args: Any
    ) -> T:
        """``fn(conn, *args)`` in a write transaction holding the sessions' locks."""
        pool = self._require(what)
        if not self.target.failover_timeout:

            async def attempt() -> T:
                async with writing(pool, sessions) as conn:
                    return await fn(conn, *args)

            with translated(what):
                return await bounded_lock_waits(self.target, pool, attempt)

        async def marked() -> T:
            mark, ran = new_mark(), False
            prune = time.monotonic() - self._marks_pruned > MARKS_PRUNED_EVERY
            try:
                async with writing(pool, sessions, mark, prune) as conn:
                    result = await fn(conn, *args)
                    ran = True  # what fails from here on is the commit
            except psycopg.Error as e:
                if not (ran and connection_lost(e)):
                    raise  # nothing was committed: tried again whole, or failed
                log.warning("PostgreSQL %s: the commit's answer was lost (%s)", what, e)
                try:
                    landed = await through_failover(self.target, lambda: committed(pool, mark))
                except Exception as unknown:
                    raise CommitUnknown(
                        f"{what}: whether it was committed could not be told: {unknown}"
                    ) from e
                if not landed:
                    raise NotCommitted(f"{what} was not committed before the failover") from e
                log.warning("PostgreSQL %s: committed after all (its mark is there)", what)
            if prune:
                self._marks_pruned = time.monotonic()
            return result

        with translated(what):
            return await through_failover(
                self.target, lambda: bounded_lock_waits(self.target, pool, marked)
            )

    async def _fetchone(self, what: str, statement: str, args: Any) -> tuple[Any, ...] | None:
        return await self._autocommit(what, _fetchone, statement, args)

    async def _fetchall(self, what: str, statement: str, args: Any) -> list[tuple[Any, ...]]:
        return await self._autocommit(what, _fetchall, statement, args)

    async def _apply_leases(self, batch: list[Queued[LeaseOp]]) -> None:
        """Lease takes and releases queued together, in one transaction (one commit).

        Each op runs as it would alone, one after the other in the order of their session
        ids (a session's own ops in the order they came): every transaction that locks
        several lease rows (this one, a renewal, a save batch's fencing check) locks them
        in id order, so none of them deadlock. One refused (a lease held elsewhere) is
        refused alone; a database error fails the whole batch, nothing of it written."""
        ordered = sorted(batch, key=lambda item: item.payload[0])

        async def each(conn: AsyncConnection) -> None:
            for item in ordered:
                _sid, op, args = item.payload
                try:
                    item.result, item.error = await op(conn, args), None
                except LuoshoError as e:
                    item.result, item.error = None, e

        await self._write("lease", [], each)

    async def _apply(self, batch: list[Queued[Prepared]]) -> None:
        """Commit a batch of saves and appends in one transaction (group commit)."""
        # With the keys the batch queues inputs in, whose enqueue reads the queue's ends.
        sessions = sorted(
            {item.payload.session_id for item in batch}
            | {e.session_id for item in batch for e in item.payload.enqueue}
        )
        await self._write("save", sessions, ops.save_batch, batch)


def database_clock() -> float:
    """The default :attr:`PostgresStore.clock`: it stands for the database's clock, which
    lease statements read themselves (so daemons on different hosts agree). Called, it
    answers this host's time, its best estimate."""
    return time.time()


async def _fetchone(conn: AsyncConnection, statement: str, args: Any) -> tuple[Any, ...] | None:
    return await (await conn.execute(statement, args)).fetchone()


async def _fetchall(conn: AsyncConnection, statement: str, args: Any) -> list[tuple[Any, ...]]:
    return await (await conn.execute(statement, args)).fetchall()


async def _execute(conn: AsyncConnection, statement: str, args: Any) -> None:
    await conn.execute(statement, args)


#: A queued lease write: its session, the op, and the op's statement arguments.
LeaseOp = tuple[str, Callable[[AsyncConnection, dict[str, Any]], Awaitable[Any]], dict[str, Any]]


async def _acquire(conn: AsyncConnection, args: dict[str, Any]) -> Lease:
    """Take the session's lease, or raise ``SessionBusy`` naming its live holder."""
    while True:
        granted = await _fetchone(conn, queries.ACQUIRE_LEASE, args)
        if granted is not None:
            token, expires_at = granted
            return Lease(args["session_id"], args["owner"], token, expires_at, args["address"])
        held = await _fetchone(conn, queries.SELECT_LIVE_LEASE, args)
        # None: released or expired in between (as it was refused); try again.
        if held is not None:
            holder, _token, expires_at = held
            raise lease_busy(args["session_id"], holder, expires_at)


async def _release(conn: AsyncConnection, args: dict[str, Any]) -> None:
    await conn.execute(queries.RELEASE_LEASE, args)
