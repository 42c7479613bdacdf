"""What is particular to the ``lmdb:`` driver: URLs, the map that grows and its maximum,
stale readers, the layout on disk, ids, and its errors."""

from __future__ import annotations

import asyncio
import multiprocessing
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import lmdb
import pytest

from luoshod.domain import AppliedRequest, Checkpoint, Message, Role
from luoshod.errors import InvalidArgument, StoreError, StoreFull
from luoshod.store import Capability, store_from_url
from luoshod.store.conformance import process_workers
from luoshod.store.conformance.helpers import SessionWriter, approval, event_range, rich_checkpoint
from luoshod.store.kit import codec
from luoshod_lmdb import LmdbStore, layout
from luoshod_lmdb.environment import DEFAULT_MAP_SIZE, SCHEMA_VERSION

MiB = 1 << 20


@pytest.fixture
def env_dir(tmp_path: Path) -> Path:
    return tmp_path / "env"


@pytest.fixture
async def lmdb_store(env_dir: Path) -> AsyncIterator[LmdbStore]:
    store = LmdbStore(env_dir)
    await store.open()
    yield store
    await store.close()


def entries(store: LmdbStore, db: str) -> int:
    """Records in one of the named databases, read behind the driver's back."""

    def count(txn: lmdb.Transaction, dbs: object) -> int:
        return txn.stat(getattr(dbs, db))["entries"]

    assert store._env is not None
    return store._env.read(count)


# -- URL -----------------------------------------------------------------------------------


def test_capabilities() -> None:
    assert LmdbStore.capabilities == set(Capability)  # every one there is


def test_absolute_url_with_options(tmp_path: Path) -> None:
    store = store_from_url(
        f"lmdb://{tmp_path}/a%20b/env?map_size=2MiB&max_map_size=1073741824", history_limit=7
    )
    assert isinstance(store, LmdbStore)
    assert store.path == tmp_path / "a b" / "env"
    assert (store.map_size, store.max_map_size, store.history_limit) == (2 * MiB, 1 << 30, 7)


def test_defaults_and_relative_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = store_from_url("lmdb:.luoshod/store")
    assert store.path == tmp_path / ".luoshod" / "store"
    assert store.map_size == DEFAULT_MAP_SIZE
    # A small maximum lowers the initial map to it.
    assert store_from_url("lmdb:x?max_map_size=1MiB").map_size == MiB


@pytest.mark.parametrize(
    "url, match",
    [
        ("lmdb://host/x", "no host"),
        ("lmdb://", "directory path"),
        ("lmdb:///x#frag", "no fragment"),
        ("lmdb:///x?sync=0", "unknown lmdb URL option"),
        ("lmdb:///x?max_map_size=lots", "not a size"),
        ("lmdb:///x?map_size=2GiB&max_map_size=1GiB", "map_size <= max_map_size"),
    ],
)
def test_bad_urls_are_refused(url: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        store_from_url(url)


# -- lifecycle -----------------------------------------------------------------------------


async def test_open_creates_the_directory_and_its_two_files(env_dir: Path) -> None:
    # Opening and closing as such are the kit's rules (test_store_lifecycle.py).
    store = LmdbStore(env_dir)
    await store.open()
    assert (env_dir / "data.mdb").is_file() and (env_dir / "lock.mdb").is_file()
    await store.close()


async def test_stores_of_one_directory_in_one_process_share_its_environment(
    env_dir: Path,
) -> None:
    one, two = LmdbStore(env_dir), LmdbStore(env_dir, history_limit=3)
    await one.open()
    await two.open()
    try:
        assert one._env is two._env  # LMDB forbids a second handle in one process
        w = SessionWriter(two, "s")
        for _ in range(5):
            await w.save()
        assert len(await one.history("s")) == 3  # the limit of the store that saved
    finally:
        await one.close()
    assert await two.load("s") == w.snapshots[-1]  # still open after the other closed
    await two.close()


async def test_a_newer_schema_is_refused(env_dir: Path) -> None:
    env = lmdb.open(str(env_dir), max_dbs=16)
    meta = env.open_db(layout.META)
    with env.begin(write=True) as txn:
        txn.put(layout.SCHEMA_VERSION_KEY, layout.u64(SCHEMA_VERSION + 1), db=meta)
    env.close()
    with pytest.raises(StoreError, match="newer"):
        await LmdbStore(env_dir).open()


async def test_the_environment_is_marked_with_the_format_and_a_newer_mark_is_refused(
    env_dir: Path,
) -> None:
    store = LmdbStore(env_dir)
    await store.open()
    await store.close()
    env = lmdb.open(str(env_dir), max_dbs=16)
    meta = env.open_db(layout.META)
    with env.begin(write=True) as txn:
        assert layout.from_u64(txn.get(layout.FORMAT_VERSION_KEY, db=meta)) == codec.FORMAT_VERSION
        txn.put(layout.FORMAT_VERSION_KEY, layout.u64(codec.FORMAT_VERSION + 1), db=meta)
    env.close()
    with pytest.raises(StoreError, match=f"store format {codec.FORMAT_VERSION + 1}.*newer luoshod"):
        await LmdbStore(env_dir).open()


async def test_an_environment_of_schema_2_opens_and_gains_request_records(env_dir: Path) -> None:
    # Schema 2 as it was: no request record databases (created at open since 3), nor the
    # queue (since 4).
    store = LmdbStore(env_dir)
    await store.open()
    w = SessionWriter(store, "s")
    for _ in range(3):
        await w.save()
    await store.close()
    env = lmdb.open(str(env_dir), max_dbs=16)
    with env.begin(write=True) as txn:
        for name in (layout.REQUESTS, layout.REQUEST_ORDER, layout.QUEUE, layout.SCHEDULES):
            txn.drop(env.open_db(name, txn=txn), delete=True)
        txn.put(layout.SCHEMA_VERSION_KEY, layout.u64(2), db=env.open_db(layout.META, txn=txn))
    env.close()
    assert SCHEMA_VERSION == 5
    store = LmdbStore(env_dir)
    await store.open()
    try:
        assert await store.load("s") == w.snapshots[-1]
        assert await store.requests("s") == []
        record = AppliedRequest("req-1", "0" * 32, "run-1", 1)
        w.store = store
        cp = w.snapshots[-1]
        cp.version += 1
        await store.save(cp, stored_messages=len(cp.messages), requests=[record])
        assert await store.find_request("s", "req-1") == record
        await store.enqueue_input("s", "q-1", b"x", now=1.0)
        assert [q.request_id for q in await store.queued_inputs("s")] == ["q-1"]
    finally:
        await store.close()
    env = lmdb.open(str(env_dir), max_dbs=16)
    with env.begin() as txn:
        found = txn.get(layout.SCHEMA_VERSION_KEY, db=env.open_db(layout.META, txn=txn))
        assert layout.from_u64(found) == 5
    env.close()


async def test_a_file_where_the_directory_should_be_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(StoreError, match="LMDB open failed") as info:
        await LmdbStore(tmp_path / "file").open()
    assert isinstance(info.value.__cause__, OSError | lmdb.Error)


def _lmdb_process(env_dir: Path, begin_read: bool) -> subprocess.Popen[str]:
    """A process holding ``env_dir`` open (in a read transaction if ``begin_read``)."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import lmdb, sys; env = lmdb.open(sys.argv[1], max_dbs=16); "
            "txn = env.begin() if sys.argv[2] == '1' else None; "
            "print('ready', flush=True); sys.stdin.read()",
            str(env_dir),
            "1" if begin_read else "0",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    return proc


async def test_stale_readers_are_cleared_at_open(env_dir: Path) -> None:
    async with _open(env_dir):
        pass  # create the environment
    # While some process keeps the environment open (the first to open it resets the
    # reader table), a process that dies inside a read transaction leaves its slot taken.
    holder = _lmdb_process(env_dir, begin_read=False)
    try:
        reader = _lmdb_process(env_dir, begin_read=True)
        reader.send_signal(signal.SIGKILL)
        reader.wait()
        async with _open(env_dir) as store:
            assert store._env is not None and store._env.stale_readers_cleared == 1
    finally:
        holder.kill()
        holder.wait()


# -- the map -------------------------------------------------------------------------------


async def test_the_map_grows_when_full(env_dir: Path) -> None:
    async with _open(env_dir, "map_size=1MiB&max_map_size=64MiB") as store:
        writers = [SessionWriter(store, f"s{i}") for i in range(8)]
        for _ in range(6):
            await asyncio.gather(*(w.save(add=2, size=50_000) for w in writers))
        assert store._env is not None and store._env.usage()["map_size"] >= 4 * MiB
        for w in writers:
            assert await store.load(w.session_id) == w.snapshots[-1]


async def test_past_max_map_size_saves_fail_with_store_full_and_change_nothing(
    env_dir: Path,
) -> None:
    async with _open(env_dir, "map_size=1MiB&max_map_size=2MiB") as store:
        w = SessionWriter(store, "s")
        small = [SessionWriter(store, f"small-{i}") for i in range(5)]
        with pytest.raises(StoreFull) as info:
            for _ in range(100):
                await w.save(add=1, size=100_000)
        assert info.value.reason == "STORE_FULL"
        before = w.snapshots[-1]
        assert await store.load("s") == before
        assert [e.checkpoint for e in await store.history("s")] == w.snapshots[::-1]
        # In one batch with a save that does not fit, the saves that do fit still land.
        results = await asyncio.gather(
            w.save(add=1, size=1_500_000),
            *(s.save(add=1, size=100) for s in small),
            return_exceptions=True,
        )
        assert isinstance(results[0], StoreFull)
        assert [isinstance(r, Checkpoint) for r in results[1:]] == [True] * 5
        assert await store.load("s") == before
    async with _open(env_dir, "max_map_size=2MiB") as store:
        assert await store.load("s") == before  # and so it stays after a reopen
        for s in small:
            assert await store.load(s.session_id) == s.snapshots[-1]


async def test_a_map_grown_by_another_process_is_adopted(env_dir: Path) -> None:
    async with _open(env_dir, "map_size=1MiB&max_map_size=64MiB") as store:
        w = SessionWriter(store, "mine")
        await w.save()
        ctx = multiprocessing.get_context("spawn")
        child = ctx.Process(
            target=process_workers.fill,
            args=(f"lmdb://{env_dir}?map_size=1MiB&max_map_size=64MiB", "other", 40, 200_000),
        )
        child.start()
        await asyncio.to_thread(child.join, 60)
        assert child.exitcode == 0
        # The data file is now larger than this process's map: reads and writes go on.
        cp = await store.load("other-39")
        assert cp is not None and len(cp.messages[0].content) == 200_000
        await w.save(add=1, size=300_000)
        assert await store.load("mine") == w.snapshots[-1]


# -- layout --------------------------------------------------------------------------------


async def test_a_save_appends_to_one_log_in_page_sized_chunks(lmdb_store: LmdbStore) -> None:
    w = SessionWriter(lmdb_store, "s")
    for _ in range(100):
        await w.save(add=2, size=1000)
    assert lmdb_store._env is not None
    chunk = lmdb_store._env.usage()["page_size"] - layout.PAGE_HEADER
    stream = len(codec.encode_messages(w.messages))
    assert entries(lmdb_store, "logs") == 1
    assert entries(lmdb_store, "chunks") == -(-stream // chunk)  # full chunks, one partial
    assert entries(lmdb_store, "history") == 50


async def test_a_rewritten_transcript_gets_a_new_log_and_the_old_one_goes(
    env_dir: Path,
) -> None:
    async with _open(env_dir, history_limit=2) as store:
        w = SessionWriter(store, "s")
        await w.save(add=3)
        await w.save(add=3)
        w.rewrite(keep=4, tag="new")
        await w.save(add=1)
        assert entries(store, "logs") == 2  # the history still reads the old log
        assert [e.checkpoint for e in await store.history("s")] == w.snapshots[:-3:-1]
        await w.save(add=1)  # the last entry over the old log leaves the ring
        assert entries(store, "logs") == 1
        assert await store.load("s") == w.snapshots[-1]


async def test_delete_leaves_no_records_behind(lmdb_store: LmdbStore) -> None:
    w = SessionWriter(lmdb_store, "s")
    for i in range(3):
        await w.save(add=2, events=event_range(i + 1, i + 1), approval=approval(f"a{i}", "s"))
    await lmdb_store.save(
        rich_checkpoint("other"), stored_messages=0, approval=approval("b", "other")
    )
    await lmdb_store.append_events("other", event_range(1, 2))
    await lmdb_store.delete("s", keep_history=True)
    assert entries(lmdb_store, "history") == 4 and entries(lmdb_store, "logs") == 2
    assert entries(lmdb_store, "events") == 5 and entries(lmdb_store, "event_counts") == 2
    assert entries(lmdb_store, "approvals") == entries(lmdb_store, "by_session") == 1
    await lmdb_store.delete("s")
    await lmdb_store.delete("other")
    for db in (
        "sessions",
        "by_status",
        "history",
        "history_ends",
        "logs",
        "chunks",
        "events",
        "event_counts",
        "approvals",
        "by_session",
    ):
        assert entries(lmdb_store, db) == 0, db


async def test_a_log_pruned_to_nothing_keeps_no_count(env_dir: Path) -> None:
    async with _open(env_dir) as store:
        store.event_log_limit = 0
        await store.append_events("s", event_range(1, 3))
        assert entries(store, "events") == entries(store, "event_counts") == 0


def test_messages_round_trip_through_the_stream() -> None:
    messages = rich_checkpoint().messages + [Message(Role.USER, "")]
    stream = codec.encode_messages(messages)
    assert codec.decode_messages(stream) == messages
    assert codec.decode_messages(b"") == []
    with pytest.raises(ValueError, match="not an encoded message"):
        codec.decode_messages(stream[:-1])


# -- ids -----------------------------------------------------------------------------------


@pytest.mark.parametrize("sid", ["", "a\0b", "x" * 401], ids=["empty", "nul", "long"])
async def test_ids_lmdb_cannot_key_are_refused(lmdb_store: LmdbStore, sid: str) -> None:
    with pytest.raises(InvalidArgument):
        await lmdb_store.save(Checkpoint(sid, version=1), stored_messages=0)
    assert await lmdb_store.load(sid) is None
    assert await lmdb_store.history(sid) == []
    assert await lmdb_store.delete(sid) is False


class _open:
    """``async with _open(dir, "query", history_limit=n) as store``: an opened LmdbStore."""

    def __init__(self, path: Path, query: str = "", *, history_limit: int = 50) -> None:
        self.url = f"lmdb://{path}" + (f"?{query}" if query else "")
        self.history_limit = history_limit

    async def __aenter__(self) -> LmdbStore:
        self.store = store_from_url(self.url, history_limit=self.history_limit)
        await self.store.open()
        return self.store  # type: ignore[return-value]

    async def __aexit__(self, *exc: object) -> None:
        await self.store.close()
