#!/usr/bin/env python3
"""PostgreSQL lease burst: N run starts at once, each taking its session's lease (not a test).

A burst of run starts on a daemon sharing PostgreSQL takes N leases together. The driver
group-commits them (one transaction a batch, ``PostgresStore._apply_leases``); this
measures that side by side with one commit a lease (each take a statement of its own in
autocommit, as the driver did before), on a throw-away local server with fsync on
(tests/support/postgres_server.py) or ``--postgres-url``: the burst's wall time, the transactions
that wrote the lease rows (their distinct ``xmin``), then the same for the releases.

    .venv/bin/python bench/pg_lease_burst.py            # 2,000 leases, 3 rounds
    .venv/bin/python bench/pg_lease_burst.py --leases 500 --rounds 1
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from luoshod.store import store_from_url  # noqa: E402
from luoshod_postgres import PostgresStore  # noqa: E402
from luoshod_postgres import driver as pg  # noqa: E402
from tests.support.postgres_server import PostgresServer, ServerUnavailable  # noqa: E402


async def burst(url: str, leases: int, batched: bool) -> tuple[float, int, float, int]:
    """Seconds and transactions to take ``leases`` leases at once, then to release them."""
    schema = f"b_{uuid.uuid4().hex[:10]}"
    store = store_from_url(f"{url}?schema={schema}")
    assert isinstance(store, PostgresStore)
    await store.open()
    sessions = [f"s-{k:05d}" for k in range(leases)]

    async def take(sid: str) -> Any:
        if batched:
            return await store.acquire_lease(sid, owner="bench", ttl=60)
        args = {"session_id": sid, "owner": "bench", "ttl": 60.0, "now": None}
        return await store._autocommit("acquire_lease", pg._acquire, args)  # one commit each

    async def release(lease: Any) -> None:
        if batched:
            await store.release_lease(lease)
        else:
            args = {"session_id": lease.session_id, "token": lease.token}
            await store._autocommit("release_lease", pg._release, args)

    try:
        t0 = time.perf_counter()
        taken = await asyncio.gather(*(take(sid) for sid in sessions))
        take_s = time.perf_counter() - t0
        take_tx = transactions(url, schema)
        t0 = time.perf_counter()
        await asyncio.gather(*(release(lease) for lease in taken))
        release_s = time.perf_counter() - t0
        release_tx = transactions(url, schema)
    finally:
        await store.close()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
    return take_s, take_tx, release_s, release_tx


def transactions(url: str, schema: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(f"SELECT count(DISTINCT xmin::text) FROM {schema}.leases").fetchone()
    return int(row[0]) if row else 0


async def main_async(opts: argparse.Namespace) -> int:
    server = None
    url = opts.postgres_url
    with tempfile.TemporaryDirectory(prefix="luoshod-pg-lease-burst-") as tmp:
        if not url:
            Path(tmp).chmod(0o711)
            try:
                server = PostgresServer(fsync=True, parent=Path(tmp))
                url = server.start().url
            except ServerUnavailable as e:
                print(f"skipped: {e}")
                return 0
        try:
            got: dict[bool, list[tuple[float, int, float, int]]] = {True: [], False: []}
            for _ in range(opts.rounds):  # the two ways one after the other, each round
                for batched in (False, True):
                    got[batched].append(await burst(url, opts.leases, batched))
        finally:
            if server is not None:
                server.remove()
    print(
        f"\nPostgreSQL lease burst: {opts.leases} leases taken at once, then released "
        f"(median of {opts.rounds} rounds, fsync on)\n"
    )
    print(f"{'writes':<22} {'take s':>7} {'takes/s':>8} {'tx':>6} {'release s':>9} {'tx':>6}")
    for batched, label in ((False, "one commit a lease"), (True, "group-committed")):
        take_s = statistics.median(r[0] for r in got[batched])
        release_s = statistics.median(r[2] for r in got[batched])
        print(
            f"{label:<22} {take_s:>7.2f} {opts.leases / take_s:>8.0f} "
            f"{statistics.median(r[1] for r in got[batched]):>6.0f} {release_s:>9.2f} "
            f"{statistics.median(r[3] for r in got[batched]):>6.0f}"
        )
    ratio = statistics.median(r[0] for r in got[False]) / statistics.median(r[0] for r in got[True])
    print(f"\ngroup-committed takes: {ratio:.1f}x the rate of one commit a lease")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leases", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--postgres-url", default="", help="a server to use (default: a throw-away one)"
    )
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
