"""Issue 16: the ``postgresql:`` driver group-commits lease takes and releases, as the
SQLite and LMDB drivers do: a burst of run starts (each takes its session's lease) shares
a few transactions instead of one commit each, and one refused (a lease another daemon
holds) is refused alone. Seen in the rows themselves: the rows one transaction wrote share
its id (``xmin``). On the session's real throw-away server (tests/support/postgres_server.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import psycopg
import pytest

from luoshod.errors import SessionBusy
from luoshod.store import store_from_url
from luoshod_postgres import PostgresStore
from tests.support.postgres_server import PostgresServer

BURST = 300
HELD_ELSEWHERE = 15


@pytest.fixture
def url(postgres_server: PostgresServer, schema: str) -> str:
    return f"{postgres_server.url}?schema={schema}"


@pytest.fixture
def raw(postgres_server: PostgresServer, schema: str) -> Iterator[psycopg.Connection]:
    """A plain connection to look at the lease rows behind the driver's back."""
    with psycopg.connect(postgres_server.url, autocommit=True) as conn:
        conn.execute(f"SET search_path = {schema}")
        yield conn


@pytest.fixture
async def stores(url: str) -> AsyncIterator[tuple[PostgresStore, PostgresStore]]:
    """Two daemons' stores on one database."""
    a, b = store_from_url(url), store_from_url(url)
    assert isinstance(a, PostgresStore) and isinstance(b, PostgresStore)
    await a.open()
    await b.open()
    yield a, b
    await b.close()
    await a.close()


def transactions(raw: psycopg.Connection, sessions: list[str]) -> int:
    """How many transactions last wrote the lease rows of ``sessions``."""
    row = raw.execute(
        "SELECT count(DISTINCT xmin::text) FROM leases WHERE session_id = ANY(%s)", (sessions,)
    ).fetchone()
    assert row is not None
    return int(row[0])


async def test_a_burst_of_lease_takes_and_releases_shares_transactions_and_a_refusal_stays_alone(
    stores: tuple[PostgresStore, PostgresStore], raw: psycopg.Connection
) -> None:
    a, b = stores
    sessions = [f"burst-{k:04d}" for k in range(BURST)]
    elsewhere = sessions[:: BURST // HELD_ELSEWHERE][:HELD_ELSEWHERE]  # spread through the burst
    for sid in elsewhere:
        await b.acquire_lease(sid, owner="daemon-b", ttl=60)

    got = await asyncio.gather(
        *(a.acquire_lease(sid, owner="daemon-a", ttl=60) for sid in sessions),
        return_exceptions=True,
    )
    taken = {sid: g for sid, g in zip(sessions, got) if not isinstance(g, BaseException)}
    refused = {sid: g for sid, g in zip(sessions, got) if isinstance(g, BaseException)}
    # Each refused alone, naming the holder; every other lease taken, with its own token.
    assert sorted(refused) == sorted(elsewhere)
    assert all(
        isinstance(e, SessionBusy) and e.metadata["holder"] == "daemon-b" for e in refused.values()
    )
    assert len(taken) == BURST - HELD_ELSEWHERE
    assert all(lease.owner == "daemon-a" and lease.token == 1 for lease in taken.values())
    listed, _ = await a.list_leases(page_size=BURST + 1, page_token="", owner="daemon-a")
    assert sorted(lease.session_id for lease in listed) == sorted(taken)
    # One commit a lease before; now a few transactions wrote them all.
    written_by = transactions(raw, list(taken))
    print(f"{len(taken)} leases taken in {written_by} transactions")
    assert written_by <= len(taken) // 10

    # Fencing unchanged: each lease is the session's, and a release frees it for the other.
    await asyncio.gather(*(a.release_lease(lease) for lease in taken.values()))
    assert (await a.list_leases(page_size=BURST + 1, page_token="", owner="daemon-a"))[0] == []
    assert transactions(raw, list(taken)) <= len(taken) // 10
    retaken = await b.acquire_lease(sessions[1], owner="daemon-b", ttl=60)
    assert retaken.token == 2


async def test_a_take_and_a_release_of_one_session_queued_together_keep_their_order(
    stores: tuple[PostgresStore, PostgresStore],
) -> None:
    a, _ = stores
    first = await a.acquire_lease("s-order", owner="daemon-a", ttl=60)
    # Queued in this order into one batch: the release lands first, so the take succeeds.
    released, second = await asyncio.gather(
        a.release_lease(first), a.acquire_lease("s-order", owner="daemon-a", ttl=60)
    )
    assert released is None and second.token == first.token + 1
    # And the other way round: a take queued before the release finds the lease held.
    busy, _ = await asyncio.gather(
        a.acquire_lease("s-order", owner="daemon-b", ttl=60),
        a.release_lease(second),
        return_exceptions=True,
    )
    assert isinstance(busy, SessionBusy)
