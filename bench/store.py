#!/usr/bin/env python3
"""Store benchmark: durable saves per second and bytes on disk, per driver (not a test).

In one run, on one disk (a temporary directory under ``--dir``, default ``bench/out``):

  1. the raw fsync rate: write 8 KiB and fsync, in a loop, for ``--seconds``;
  2. durable saves/s of each driver with 1 session and with 64 concurrent sessions, each
     save adding 8 KiB of messages (two of 4 KiB) to its session; memory:// for reference.
     Target: with 64 sessions, sqlite and lmdb reach 5x the raw fsync rate. postgres
     runs on ``--postgres-url``, or else on a throw-away local server (started with
     tests/postgres_server.py, its data in the same directory, fsync on), each cell in a
     schema of its own; its bytes on disk are the sizes of its tables and their indexes;
  3. one session of 50, 200 and 500 turns (four messages a turn: user, assistant with a
     tool call, tool result, assistant answer; two saves a turn; history limit 50): the
     bytes on disk after it (store closed) against the raw transcript bytes (the UTF-8
     bytes of the texts and tool calls), and the median time of its last 100 saves.
     Targets: bytes at 500 turns <= 1.5x the raw transcript; median save at 500 turns
     <= 1.2x the one at 50 turns.

Every save is durable when it is acknowledged (the drivers' defaults). Everything is
removed at the end.

    .venv/bin/python bench/store.py             # about a minute
    .venv/bin/python bench/store.py --quick     # smoke run
    .venv/bin/python bench/store.py --drivers postgres --postgres-url postgresql://...
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from luoshod.domain import Checkpoint, Message, Role, ToolCall
from luoshod.store import Store, store_from_url

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from postgres_server import PostgresServer  # noqa: E402
KiB = 1024
THROUGHPUT_TARGET = 5.0  # x the raw fsync rate, with 64 sessions
BYTES_TARGET = 1.5  # x the raw transcript, at 500 turns
FLAT_TARGET = 1.2  # median save at 500 turns over the one at 50 turns

#: The server of postgres:// cells (set by main_async); each cell gets its own schema.
POSTGRES_URL = ""

DRIVERS = {
    "memory": lambda d: "memory://",
    "sqlite": lambda d: f"sqlite://{d}/bench.db",
    "lmdb": lambda d: f"lmdb://{d}/bench-lmdb",
    "postgres": lambda d: postgres_url(d.name),
}


def postgres_url(cell: str) -> str:
    """The URL of a postgres cell: the server's, with a schema named for the cell."""
    sep = "&" if "?" in POSTGRES_URL else "?"
    return f"{POSTGRES_URL}{sep}schema=bench_{cell.replace('-', '_')}"


def raw_fsync_rate(directory: Path, seconds: float) -> float:
    """Appends of 8 KiB, each followed by fsync, per second."""
    path = directory / "fsync.probe"
    block = os.urandom(8 * KiB)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        n, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            os.write(fd, block)
            os.fsync(fd)
            n += 1
    finally:
        os.close(fd)
        path.unlink()
    return n / elapsed


def du(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())


def postgres_bytes(url: str) -> int:
    """The bytes of the tables (with their TOAST and indexes) of ``url``'s schema."""
    import psycopg

    from luoshod.store.postgres.connection import target_from_url

    target = target_from_url(url)
    with psycopg.connect(target.conninfo) as conn:
        row = conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind = 'r'",
            (target.schema,),
        ).fetchone()
    return int(row[0]) if row else 0


async def opened(url: str, history_limit: int = 50) -> Store:
    store = store_from_url(url, history_limit=history_limit)
    await store.open()
    return store


# -- saves per second ----------------------------------------------------------------------


async def saves_per_second(url: str, sessions: int, seconds: float) -> float:
    """Sessions saving back to back for ``seconds``, 8 KiB of new messages a save."""
    store = await opened(url)
    text = "".join(random.Random(1).choices("abcdefghij klmnopqrstuvwxyz", k=4 * KiB - 20))
    count = 0
    deadline = time.perf_counter() + seconds

    async def session(i: int) -> None:
        nonlocal count
        messages: list[Message] = []
        version = 0
        while time.perf_counter() < deadline:
            stored = len(messages)
            messages += (Message(Role.USER, text), Message(Role.ASSISTANT, text))
            version += 1
            # The store copies nothing it keeps from the list, so one list can grow.
            cp = Checkpoint(f"s{i}", messages, step_index=version, version=version)
            await store.save(cp, stored_messages=stored)
            count += 1

    start = time.perf_counter()
    try:
        await asyncio.gather(*(session(i) for i in range(sessions)))
        return count / (time.perf_counter() - start)
    finally:
        await store.close()


# -- one long session ----------------------------------------------------------------------


def turn(rng: random.Random, t: int) -> tuple[list[Message], list[Message]]:
    """The four messages of turn ``t``, as the two saves of that turn."""

    def text(size: int) -> str:
        k = int(size * rng.uniform(0.5, 1.5))
        return "".join(rng.choices("abcdefghij klmnopqrstuvwxyz", k=k))

    call = ToolCall(f"call_{t}", "search", f'{{"query": "{text(60)}"}}')
    first = [Message(Role.USER, text(300)), Message(Role.ASSISTANT, text(150), (call,))]
    second = [
        Message(Role.TOOL, text(6 * KiB), tool_call_id=call.id, tool_name=call.name),
        Message(Role.ASSISTANT, text(1500)),
    ]
    return first, second


def raw_bytes(messages: list[Message]) -> int:
    """The transcript's own bytes: texts and tool calls, as UTF-8."""
    total = 0
    for m in messages:
        total += len(m.content.encode()) + len(m.tool_call_id) + len(m.tool_name)
        for c in m.tool_calls:
            total += len(c.id) + len(c.name) + len(c.arguments_json.encode())
    return total


@dataclass
class Session:
    driver: str
    turns: int
    disk: int = 0
    raw: int = 0
    save_times: list[float] = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.save_times[-100:]) * 1000


async def long_session(driver: str, directory: Path, turns: int) -> Session:
    result = Session(driver, turns)
    url = DRIVERS[driver](directory)
    store = await opened(url, history_limit=50)
    rng = random.Random(turns)
    messages: list[Message] = []
    version = 0
    try:
        for t in range(turns):
            for new in turn(rng, t):
                stored = len(messages)
                messages += new
                version += 1
                cp = Checkpoint("long", messages, step_index=t, version=version)
                start = time.perf_counter()
                await store.save(cp, stored_messages=stored)
                result.save_times.append(time.perf_counter() - start)
    finally:
        await store.close()
    result.disk = postgres_bytes(url) if driver == "postgres" else du(directory)
    result.raw = raw_bytes(messages)
    return result


# -- the run -------------------------------------------------------------------------------


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


async def main_async(opts: argparse.Namespace) -> int:
    base = Path(opts.dir)
    base.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="store-bench-", dir=base))
    seconds = 1.0 if opts.quick else opts.seconds
    turn_counts = [50, 200] if opts.quick else [50, 200, 500]
    missed = False
    server = None
    global POSTGRES_URL
    POSTGRES_URL = opts.postgres_url
    try:
        if "postgres" in opts.drivers and not POSTGRES_URL:
            # Its data on the disk measured; the server's own user must reach its folder.
            work.chmod(0o711)
            server = PostgresServer(fsync=True, parent=work)
            POSTGRES_URL = server.start().url
        print(f"store benchmark in {work} ({os.uname().sysname}, Python {sys.version.split()[0]})")
        fsync_rate = raw_fsync_rate(work, seconds)
        print(f"\nraw fsync rate (8 KiB write + fsync, appended): {fsync_rate:,.0f}/s\n")

        print("durable saves/s, 8 KiB of new messages a save")
        header = f"{'driver':<8} {'sessions':>8} {'saves/s':>10} {'x fsync':>8}  target"
        print(header)
        print("-" * len(header))
        for name in opts.drivers:
            for sessions in (1, 64):
                d = work / f"{name}-{sessions}"
                d.mkdir()
                rate = await saves_per_second(DRIVERS[name](d), sessions, seconds)
                target = ""
                if name in ("sqlite", "lmdb") and sessions == 64:
                    ok = rate >= THROUGHPUT_TARGET * fsync_rate
                    missed |= not ok
                    target = f">= {THROUGHPUT_TARGET:.0f}x: {verdict(ok)}"
                ratio = rate / fsync_rate
                print(f"{name:<8} {sessions:>8} {rate:>10,.0f} {ratio:>7.1f}x  {target}")
                shutil.rmtree(d)

        print(
            "\none session, 4 messages and 2 saves a turn, history limit 50 "
            "(median of the last 100 saves)"
        )
        header = (
            f"{'driver':<8} {'turns':>5} {'raw KiB':>9} {'disk KiB':>9} {'disk/raw':>8} "
            f"{'median ms':>9} {'vs 50':>6}  targets"
        )
        print(header)
        print("-" * len(header))
        for name in opts.drivers:
            if name == "memory":
                continue
            first: Session | None = None
            for turns in turn_counts:
                d = work / f"{name}-turns-{turns}"
                d.mkdir()
                s = await long_session(name, d, turns)
                shutil.rmtree(d)
                first = first or s
                growth = s.median_ms / first.median_ms
                targets = ""
                if turns == 500:
                    ok_bytes = s.disk <= BYTES_TARGET * s.raw
                    ok_flat = growth <= FLAT_TARGET
                    # The targets are the embedded drivers' (issue 3); postgres is shown.
                    missed |= name != "postgres" and not (ok_bytes and ok_flat)
                    targets = (
                        f"bytes <= {BYTES_TARGET}x: {verdict(ok_bytes)}, "
                        f"time <= {FLAT_TARGET}x: {verdict(ok_flat)}"
                    )
                print(
                    f"{name:<8} {turns:>5} {s.raw / KiB:>9,.0f} {s.disk / KiB:>9,.0f} "
                    f"{s.disk / s.raw:>7.2f}x {s.median_ms:>9.3f} {growth:>5.2f}x  {targets}"
                )
    finally:
        if server is not None:
            server.remove()
        shutil.rmtree(work, ignore_errors=True)
    return 1 if missed and not opts.quick else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: 1 s cells, up to 200 turns"
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="length of each timed cell")
    parser.add_argument(
        "--dir", default=str(ROOT / "bench" / "out"), help="where the files go (the disk measured)"
    )
    parser.add_argument(
        "--drivers",
        type=lambda s: s.split(","),
        default=list(DRIVERS),
        help="comma-separated, from: memory, sqlite, lmdb, postgres",
    )
    parser.add_argument(
        "--postgres-url",
        default="",
        help="the PostgreSQL server of the postgres cells (default: a throw-away local one)",
    )
    opts = parser.parse_args()
    unknown = [n for n in opts.drivers if n not in DRIVERS]
    if unknown:
        parser.error(f"unknown drivers {unknown}; choose from {sorted(DRIVERS)}")
    return asyncio.run(main_async(opts))


if __name__ == "__main__":
    sys.exit(main())
