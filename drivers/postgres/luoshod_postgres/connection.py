"""The URL, the connection pool, transactions, and the translation of psycopg's errors.

Every psycopg (and pool) exception leaves the driver as ``StoreError`` (``StoreFull`` for
a full disk) through :func:`translated`, the driver's one edge.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import AsyncConnection, sql
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import AsyncConnectionPool

from luoshod.errors import StoreError, StoreFull
from . import queries
from .migrations import SchemaTooNew, migrate

SCHEMES = ("postgresql", "postgres")
DEFAULT_CONNECT_TIMEOUT = 5  # seconds (libpq's connect_timeout); a down server fails fast
DEFAULT_POOL_MIN_SIZE = 1
DEFAULT_POOL_MAX_SIZE = 10
DEFAULT_POOL_TIMEOUT = 10.0  # seconds a call waits for a connection before StoreError
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
    and ``pool_timeout`` (seconds). Every other one goes to libpq as it is
    (``sslmode``, ``connect_timeout``, ``application_name``, ...); ``connect_timeout``
    defaults to 5 seconds and ``application_name`` to ``luoshod``.
    """
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES:
        raise ValueError(f"not a postgresql URL: {url!r}")
    if parts.fragment:
        raise ValueError(f"postgresql URL takes no fragment: {url!r}")
    params = dict(parse_qsl(parts.query, keep_blank_values=True))
    ours: dict[str, object] = {}
    try:
        if (schema := params.pop("schema", None)) is not None:
            if not _SCHEMA.fullmatch(schema):
                raise ValueError(f"schema must be a plain identifier, got {schema!r}")
            ours["schema"] = schema
        for name, kind in (("pool_min_size", int), ("pool_max_size", int),
                           ("pool_timeout", float)):
            if name in params:
                ours[name] = kind(params.pop(name))
    except ValueError as e:
        raise ValueError(f"bad postgresql URL {url!r}: {e}") from e
    params.setdefault("connect_timeout", str(DEFAULT_CONNECT_TIMEOUT))
    params.setdefault("application_name", "luoshod")
    conninfo = urlunsplit(parts._replace(scheme="postgresql", query=urlencode(params)))
    try:
        conninfo_to_dict(conninfo)  # libpq's own check of the URL
    except psycopg.Error as e:
        raise ValueError(f"bad postgresql URL {url!r}: {e}") from e
    target = Target(conninfo, **ours)  # type: ignore[arg-type]
    if not 0 <= target.pool_min_size <= target.pool_max_size or target.pool_max_size < 1:
        raise ValueError(f"need 0 <= pool_min_size <= pool_max_size, >= 1: {url!r}")
    if not target.pool_timeout > 0:
        raise ValueError(f"pool_timeout must be > 0: {url!r}")
    return target


def new_pool(target: Target) -> AsyncConnectionPool:
    """The pool (not opened). Its connections are in autocommit mode (transactions are
    explicit), commit synchronously whatever the server's default (a save is durable when
    acknowledged), and find the tables in ``target.schema``. Each is checked when taken
    from the pool, so connections broken by a restart of the server are replaced instead
    of failing a call."""

    async def configure(conn: AsyncConnection) -> None:
        await conn.execute("SET synchronous_commit = on")
        if target.schema is not None:
            await conn.execute(sql.SQL("SET search_path = {}").format(sql.Identifier(target.schema)))

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
        check=AsyncConnectionPool.check_connection,
        name="luoshod",
        open=False,
    )


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
async def writing(pool: AsyncConnectionPool, session_ids: list[str]) -> AsyncIterator[AsyncConnection]:
    """A write transaction holding the lock of each of ``session_ids`` until it ends.

    Every transaction that reads a session's state to write it takes these locks first,
    in id order, so two of them (in any process) never interleave on a session and never
    deadlock; the checks of R7, R33 and the fencing token run inside, before any write.
    """
    # Pipeline mode: statements are sent without waiting for the previous one's result,
    # and a round trip is made only where a result is read (and at commit).
    async with pool.connection() as conn, conn.pipeline(), conn.transaction():
        if session_ids:
            await conn.execute(queries.LOCK_SESSIONS, (queries.LOCK_SESSION, sorted(session_ids)))
        yield conn


def translate(e: BaseException, what: str) -> StoreError:
    """The :mod:`luoshod.errors` equivalent of a database-layer exception."""
    if isinstance(e, psycopg.Error):
        state = e.sqlstate or ""
        if state == "53100":  # disk_full
            return StoreFull(f"PostgreSQL store is full: {what} failed: {e}", operation=what)
        code = state or type(e).__name__
        return StoreError(f"PostgreSQL {what} failed ({code}): {e}", operation=what, code=code)
    if isinstance(e, (SchemaTooNew, OSError)):
        return StoreError(f"PostgreSQL {what} failed: {e}", operation=what)
    raise TypeError(f"not a database error: {e!r}")


@contextlib.contextmanager
def translated(what: str) -> Iterator[None]:
    """The driver's edge: database-layer exceptions leave as ``StoreError``/``StoreFull``."""
    try:
        yield
    except (psycopg.Error, SchemaTooNew, OSError) as e:
        raise translate(e, what) from e
