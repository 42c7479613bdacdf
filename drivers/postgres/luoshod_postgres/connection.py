"""The URL, the connection pool, transactions, and the translation of psycopg's errors.

Every psycopg (and pool) exception leaves the driver as ``StoreError`` (``StoreFull`` for
a full disk) through :func:`translated`, the driver's one edge.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import re
import select
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import AsyncConnection, AsyncCursor, sql
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import AsyncConnectionPool

from luoshod.errors import NEWER_LUOSHOD, StoreError, StoreFull

from . import queries
from .arrays import packed
from .migrations import SchemaTooNew, migrate

log = logging.getLogger("luoshod.store.postgres")
T = TypeVar("T")

SCHEMES = ("postgresql", "postgres")
DEFAULT_CONNECT_TIMEOUT = 5  # seconds (libpq's connect_timeout); a down server fails fast
DEFAULT_POOL_MIN_SIZE = 1
DEFAULT_POOL_MAX_SIZE = 10
DEFAULT_POOL_TIMEOUT = 10.0  # seconds a call waits for a connection before StoreError
#: Seconds a transaction of this daemon may wait on the daemon mid-way (the server ends
#: the connection past it, releasing its locks): a daemon stopped (SIGSTOP, a VM paused)
#: inside a save must not keep the session's rows locked, or another daemon's takeover
#: waits for it (R52). The driver's transactions wait on the daemon for milliseconds.
DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT = 5.0
#: Seconds a statement waits for a row or advisory lock. Past it the driver ends the
#: transactions that have waited on their daemon mid-way for longer than
#: ``idle_in_transaction_timeout`` (:data:`queries.END_STALLED`) and tries again, at most
#: :data:`LOCK_RETRIES` times, then fails (``StoreError``, sqlstate 55P03).
DEFAULT_LOCK_TIMEOUT = 5.0
LOCK_RETRIES = 3
#: Seconds a call goes on trying through a lost connection (a failover of the server) before
#: it fails, when the URL names several hosts; 0 (no retry) with one host, unless the
#: URL's ``failover_timeout`` says otherwise.
DEFAULT_FAILOVER_TIMEOUT = 30.0
#: The first and the longest pause between two tries through a failover (doubling, jittered).
FAILOVER_FIRST_PAUSE = 0.05
FAILOVER_LONGEST_PAUSE = 1.0
#: Seconds commit marks are kept (queries.PRUNE_MARKS) and between two prunings.
MARKS_KEPT = 600.0
MARKS_PRUNED_EVERY = 60.0
#: libpq's TCP keepalives and user timeout (a stalled or vanished server is noticed), and
#: the server's keepalives on its end (a vanished daemon host is noticed), in seconds.
DEFAULT_KEEPALIVES = {
    "keepalives": "1",
    "keepalives_idle": "10",
    "keepalives_interval": "5",
    "keepalives_count": "3",
    "tcp_user_timeout": "30000",
}
SERVER_KEEPALIVES = {
    "tcp_keepalives_idle": 10,
    "tcp_keepalives_interval": 5,
    "tcp_keepalives_count": 3,
}
IDLE = psycopg.pq.TransactionStatus.IDLE
_SCHEMA = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


@dataclass(frozen=True)
class Target:
    """What a ``postgresql://`` URL says: libpq's URL (the driver's own parameters taken
    out, defaults added), the schema, and the pool's sizes and timeout."""

    conninfo: str
    schema: str | None = None
    pool_min_size: int = DEFAULT_POOL_MIN_SIZE
    pool_max_size: int = DEFAULT_POOL_MAX_SIZE
    pool_timeout: float = DEFAULT_POOL_TIMEOUT
    idle_in_transaction_timeout: float = DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    failover_timeout: float = 0.0

    @property
    def redacted(self) -> str:
        """The URL without its password, for messages."""
        parts = urlsplit(self.conninfo)
        host = parts.netloc.rpartition("@")[2]
        user = parts.netloc.rpartition("@")[0].partition(":")[0]
        netloc = f"{user}@{host}" if user else host
        return urlunsplit(parts._replace(netloc=netloc, query=""))


def target_from_url(url: str) -> Target:
    """Parse a ``postgresql://`` (or ``postgres://``) URL. Raises ``ValueError``.

    Query parameters the driver takes itself: ``schema`` (created at open; default: the
    connection's current schema, usually ``public``), ``pool_min_size``, ``pool_max_size``
    and ``pool_timeout`` (seconds), ``idle_in_transaction_timeout`` and ``lock_timeout``
    (seconds, 0 turns one off; see the defaults above), ``failover_timeout`` (seconds a call
    goes on trying through a lost connection; default :data:`DEFAULT_FAILOVER_TIMEOUT` when
    the URL names several hosts, else 0: off). Every other one goes to libpq as
    it is (``sslmode``, ``connect_timeout``, ``application_name``, ``keepalives*``,
    ``tcp_user_timeout``, ...); ``connect_timeout`` defaults to 5 seconds,
    ``application_name`` to ``luoshod``, and the keepalives to :data:`DEFAULT_KEEPALIVES`.
    """
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES:
        raise ValueError(f"not a postgresql URL: {url!r}")
    if parts.fragment:
        raise ValueError(f"postgresql URL takes no fragment: {url!r}")
    params = dict(parse_qsl(parts.query, keep_blank_values=True))
    ours: dict[str, Any] = {}  # Target's own fields, checked by their kind below
    try:
        if (schema := params.pop("schema", None)) is not None:
            if not _SCHEMA.fullmatch(schema):
                raise ValueError(f"schema must be a plain identifier, got {schema!r}")
            ours["schema"] = schema
        for name, kind in (
            ("pool_min_size", int),
            ("pool_max_size", int),
            ("pool_timeout", float),
            ("idle_in_transaction_timeout", float),
            ("lock_timeout", float),
            ("failover_timeout", float),
        ):
            if name in params:
                ours[name] = kind(params.pop(name))
    except ValueError as e:
        raise ValueError(f"bad postgresql URL {url!r}: {e}") from e
    params.setdefault("connect_timeout", str(DEFAULT_CONNECT_TIMEOUT))
    params.setdefault("application_name", "luoshod")
    for name, value in DEFAULT_KEEPALIVES.items():
        params.setdefault(name, value)
    conninfo = urlunsplit(parts._replace(scheme="postgresql", query=urlencode(params)))
    try:
        hosts = str(conninfo_to_dict(conninfo).get("host") or "")  # libpq's own check
    except psycopg.Error as e:
        raise ValueError(f"bad postgresql URL {url!r}: {e}") from e
    if "failover_timeout" not in ours and "," in hosts:
        ours["failover_timeout"] = DEFAULT_FAILOVER_TIMEOUT
    target = Target(conninfo, **ours)
    if not 0 <= target.pool_min_size <= target.pool_max_size or target.pool_max_size < 1:
        raise ValueError(f"need 0 <= pool_min_size <= pool_max_size, >= 1: {url!r}")
    if not target.pool_timeout > 0:
        raise ValueError(f"pool_timeout must be > 0: {url!r}")
    for name in ("idle_in_transaction_timeout", "lock_timeout"):
        if not 0 <= getattr(target, name) < 2**31 / 1000:  # PostgreSQL's limit, in ms
            raise ValueError(f"{name} must be seconds >= 0 (0: off): {url!r}")
    if not 0 <= target.failover_timeout < 86400:
        raise ValueError(f"failover_timeout must be seconds >= 0 (0: off): {url!r}")
    return target


def new_pool(target: Target) -> AsyncConnectionPool:
    """The pool (not opened). Its connections are in autocommit mode (transactions are
    explicit), commit synchronously whatever the server's default (a save is durable when
    acknowledged), and find the tables in ``target.schema``. Each is checked when taken
    from the pool (:func:`check`), so connections broken by a restart of the server are
    replaced instead of failing a call. A transaction left waiting on a stopped daemon
    ends after ``idle_in_transaction_timeout`` (its locks with it), a lock wait after
    ``lock_timeout``, and the server's keepalives notice a vanished daemon host."""

    async def configure(conn: AsyncConnection) -> None:
        await conn.execute("SET synchronous_commit = on")
        settings = {
            "idle_in_transaction_session_timeout": round(target.idle_in_transaction_timeout * 1000),
            "lock_timeout": round(target.lock_timeout * 1000),
            **SERVER_KEEPALIVES,
        }
        for name, value in settings.items():
            await conn.execute(
                sql.SQL("SET {} = {}").format(sql.Identifier(name), sql.Literal(value))
            )
        if target.schema is not None:
            await conn.execute(
                sql.SQL("SET search_path = {}").format(sql.Identifier(target.schema))
            )

    return AsyncConnectionPool(
        target.conninfo,
        min_size=target.pool_min_size,
        max_size=target.pool_max_size,
        timeout=target.pool_timeout,
        # The pool retries a failed connection with a doubling delay until this timeout,
        # then gives the slot up; the next call then connects at once. The default (5
        # minutes) would leave a pool waiting minutes after the server came back.
        reconnect_timeout=target.pool_timeout,
        kwargs={"autocommit": True},
        configure=configure,
        check=check,
        name="luoshod",
        open=False,
    )


async def check(conn: AsyncConnection) -> None:
    """The pool's check of a connection it hands out: a round trip to the server
    (psycopg_pool's own check) only when the connection is not plainly idle and sound.

    A connection idle in the pool has nothing to read: a server that restarts or ends it
    (a shutdown, ``pg_terminate_backend``, a failover, a proxy that drops it) sends its
    error and closes the socket, which then reads at once. So a socket with nothing to
    read on a connection whose status is OK is handed out as it is (a poll, no round
    trip: the round trip cost ~80 µs of the event loop's CPU a call, and its latency);
    anything else is asked the server, and a broken connection raises and is replaced."""
    pgconn = conn.pgconn
    if pgconn.status == psycopg.pq.ConnStatus.OK and not conn.closed:
        with contextlib.suppress(OSError, ValueError):
            poll = select.poll()  # no limit on the descriptor's number (select() has one)
            poll.register(pgconn.socket, select.POLLIN)
            if not poll.poll(0):  # nothing to read, no hang-up, no error
                return
    await AsyncConnectionPool.check_connection(conn)


async def open_pool(pool: AsyncConnectionPool, target: Target) -> None:
    """Open ``pool`` (its first connection within ``pool_timeout``) and migrate the schema.
    Raises ``psycopg.Error`` or ``SchemaTooNew``."""
    await pool.open(wait=True, timeout=target.pool_timeout)
    async with pool.connection() as conn:
        await migrate(conn, target.schema)


@contextlib.asynccontextmanager
async def snapshot(pool: AsyncConnectionPool) -> AsyncIterator[AsyncConnection]:
    """A read-only transaction on one snapshot (several statements see one state)."""
    async with pool.connection() as conn, conn.transaction():
        await conn.execute(queries.READ_SNAPSHOT)
        yield conn


@contextlib.asynccontextmanager
async def writing(
    pool: AsyncConnectionPool,
    session_ids: list[str],
    mark: int | None = None,
    prune_marks: bool = False,
) -> AsyncIterator[AsyncConnection]:
    """A write transaction holding the lock of each of ``session_ids`` until it ends.

    Every transaction that reads a session's state to write it takes these locks first,
    in id order, so two of them (in any process) never interleave on a session and never
    deadlock; the checks of R7, R33 and the fencing token run inside, before any write.
    With ``mark``, the transaction inserts it as its commit mark (:func:`committed` then
    tells whether it committed), and with ``prune_marks`` deletes the old ones.
    """
    # Pipeline mode: statements are sent without waiting for the previous one's result,
    # and a round trip is made only where a result is read (and at commit).
    #
    # Results are read after a Sync, not after a flush request (psycopg's default in a
    # pipeline): the server waits for the next statement as "idle in transaction" only
    # after a Sync, and only then does idle_in_transaction_session_timeout end a
    # transaction whose daemon stopped mid-way (after a flush request it would wait, locks
    # held, for as long as the daemon stays stopped). The round trips are the same.
    #
    # BEGIN and COMMIT are sent as statements of the pipeline, not through psycopg's
    # transaction(): inside a pipeline that syncs when it begins and again before COMMIT,
    # two round trips more a transaction (and a third of a save's CPU). A transaction
    # that fails on the database's side (its pipeline aborted, a statement refused, the
    # connection lost) closes its connection: the server rolls it back, and the pool
    # connects a new one (no statement prepared in an aborted pipeline is kept). One ended
    # by an exception of ours is rolled back.
    async with pool.connection() as conn:
        factory = conn.cursor_factory
        ok = False
        try:
            async with conn.pipeline():
                conn.cursor_factory = SyncingCursor
                await conn.execute(queries.BEGIN, prepare=False)
                try:
                    if session_ids:
                        await conn.execute(
                            queries.LOCK_SESSIONS,
                            (queries.LOCK_SESSION, packed(sorted(session_ids))),
                        )
                    if mark is not None:
                        await conn.execute(queries.MARK_COMMIT, {"mark": mark})
                    if prune_marks:
                        await conn.execute(queries.PRUNE_MARKS, (MARKS_KEPT,))
                    yield conn
                    ok = True
                finally:
                    if ok:
                        await conn.execute(queries.COMMIT, prepare=False)
                    else:
                        with contextlib.suppress(psycopg.Error):
                            await conn.execute(queries.ROLLBACK, prepare=False)
        except BaseException as e:
            if isinstance(e, psycopg.Error) or conn.info.transaction_status != IDLE:
                with contextlib.suppress(Exception):
                    await conn.close()
            raise
        finally:
            conn.cursor_factory = factory


class SyncingCursor(AsyncCursor[Any]):
    """A cursor whose reads first sync its connection's pipeline (see :func:`writing`).

    One class for every transaction: a class made per transaction (it was) cost the event
    loop more than a statement."""

    async def _sync(self) -> None:
        pipeline = self.connection._pipeline
        if pipeline is not None:
            await pipeline.sync()

    async def fetchone(self) -> Any:
        await self._sync()
        return await super().fetchone()

    async def fetchmany(self, size: int = 0) -> list[Any]:
        await self._sync()
        return await super().fetchmany(size)

    async def fetchall(self) -> list[Any]:
        await self._sync()
        return await super().fetchall()


def new_mark() -> int:
    """A commit mark: a random positive bigint."""
    return random.SystemRandom().randrange(1, 2**63)


async def committed(pool: AsyncConnectionPool, mark: int) -> bool:
    """Whether the write transaction marked ``mark`` committed: on a connection to whichever
    server takes writes now, wait for the mark's lock (that transaction has then ended,
    whatever became of it) and touch the mark. True once the touch commits (synchronous
    commit: the standby has it, and the marked transaction before it); False when there
    is no mark (it was rolled back, or lost with the old primary: it will never land).
    Raises ``psycopg.Error`` when that cannot be told now (a lost connection again, or the
    lock not given within ``lock_timeout``)."""
    try:
        async with pool.connection() as conn, conn.transaction():
            await conn.execute(queries.LOCK_MARK, (mark,))
            found = await (await conn.execute(queries.CONFIRM_MARK, (mark,))).fetchone()
            return found is not None
    except psycopg.errors.LockNotAvailable as e:  # the marked transaction has not ended yet
        raise Undecided(str(e)) from e


class NotCommitted(Exception):
    """A write transaction whose commit's answer was lost turned out not committed: it is
    tried again whole."""


class Undecided(Exception):
    """Whether a commit landed cannot be told yet: asked again (:func:`through_failover`)."""


class CommitUnknown(Exception):
    """Whether a commit landed could not be told within ``failover_timeout``: the call
    fails, and is never tried again whole."""


#: SQLSTATEs of a connection lost or a server that does not take writes (yet): the
#: connection exceptions (class 08), a server shutting down or starting (57P01-57P03), a
#: standby (read-only transaction: a server demoted under a pooled connection).
_LOST_STATES = ("57P01", "57P02", "57P03", "25006")


def connection_lost(e: BaseException) -> bool:
    """Whether ``e`` is a lost connection (or no server taking writes): a call may be tried
    again on another connection once a server takes writes. A pool that gave no connection
    in time is one (``PoolTimeout``, no SQLSTATE)."""
    if isinstance(e, (NotCommitted, Undecided)):
        return True
    if not isinstance(e, psycopg.Error):
        return False
    state = e.sqlstate
    if state is None:
        return isinstance(e, psycopg.OperationalError)
    return state.startswith("08") or state in _LOST_STATES


async def through_failover(target: Target, attempt: Callable[[], Awaitable[T]]) -> T:
    """``attempt()``, tried again after a lost connection (:func:`connection_lost`) with a
    doubling, jittered pause until ``target.failover_timeout`` seconds have passed; the
    last error then. With ``failover_timeout`` 0, ``attempt()`` once."""
    if not target.failover_timeout:
        return await attempt()
    deadline = time.monotonic() + target.failover_timeout
    pause, tries = FAILOVER_FIRST_PAUSE, 0
    while True:
        try:
            result = await attempt()
        except Exception as e:
            if not connection_lost(e) or time.monotonic() + pause > deadline:
                raise
            tries += 1
            if tries == 1:
                log.warning(
                    "PostgreSQL connection lost (%s): trying again for up to %g s",
                    str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__,
                    target.failover_timeout,
                )
            await asyncio.sleep(pause * random.uniform(0.5, 1.0))
            pause = min(pause * 2, FAILOVER_LONGEST_PAUSE)
            continue
        if tries:
            log.warning("PostgreSQL reached again after %d tries", tries)
        return result


def translate(e: BaseException, what: str) -> StoreError:
    """The :mod:`luoshod.errors` equivalent of a database-layer exception."""
    if isinstance(e, psycopg.Error):
        state = e.sqlstate or ""
        if state == "53100":  # disk_full
            return StoreFull(f"PostgreSQL store is full: {what} failed: {e}", operation=what)
        code = state or type(e).__name__
        return StoreError(f"PostgreSQL {what} failed ({code}): {e}", operation=what, code=code)
    if isinstance(e, SchemaTooNew):  # written_by: the daemon's refusal says to upgrade
        return StoreError(
            f"PostgreSQL {what} failed: {e}", operation=what, written_by=NEWER_LUOSHOD
        )
    if isinstance(e, OSError):
        return StoreError(f"PostgreSQL {what} failed: {e}", operation=what)
    if isinstance(e, (NotCommitted, Undecided, CommitUnknown)):
        return StoreError(f"PostgreSQL {what} failed: {e}", operation=what, code="08006")
    raise TypeError(f"not a database error: {e!r}")


async def bounded_lock_waits(
    target: Target, pool: AsyncConnectionPool, attempt: Callable[[], Awaitable[T]]
) -> T:
    """``attempt()``; when a lock wait in it times out, end the stalled transactions
    (:data:`queries.END_STALLED`) and try it again (a transaction that timed out was
    rolled back whole, so trying again is safe). PostgreSQL ends a transaction whose
    daemon stopped while it waited for an answer (idle in transaction); one whose daemon
    stopped between two statements of a pipeline waits for the next statement as "active"
    and no server timeout ends it: this does, with the same bound."""
    for tries in range(LOCK_RETRIES + 1):
        try:
            return await attempt()
        except psycopg.errors.LockNotAvailable:
            if tries == LOCK_RETRIES or not target.idle_in_transaction_timeout:
                raise
        async with pool.connection() as conn:
            ended = await (
                await conn.execute(queries.END_STALLED, (target.idle_in_transaction_timeout,))
            ).fetchall()
        if ended:
            log.warning(
                "ended %d PostgreSQL transaction(s) stalled on their daemon for over %g s (pids "
                "%s)",
                len(ended),
                target.idle_in_transaction_timeout,
                ", ".join(str(pid) for (pid,) in ended),
            )
    raise AssertionError("unreachable")


@contextlib.contextmanager
def translated(what: str) -> Iterator[None]:
    """The driver's edge: database-layer exceptions leave as ``StoreError``/``StoreFull``."""
    try:
        yield
    except (psycopg.Error, SchemaTooNew, OSError, NotCommitted, Undecided, CommitUnknown) as e:
        raise translate(e, what) from e
