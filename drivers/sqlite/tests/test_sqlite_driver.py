"""What is particular to the ``sqlite:`` driver: URLs, the file, the layout, its errors."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from luoshod.domain import AppliedRequest, EventPage, Status
from luoshod.errors import StoreError, StoreFull
from luoshod.store import Capability, store_from_url
from luoshod.store.conformance.helpers import SessionWriter, approval, event_range
from luoshod_sqlite import SqliteStore
from luoshod_sqlite.migrations import MIGRATIONS, SCHEMA_VERSION, migrate


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "db" / "luoshod.db"


@pytest.fixture
async def sqlite_store(db_path: Path) -> AsyncIterator[SqliteStore]:
    store = SqliteStore(db_path)
    await store.open()
    yield store
    await store.close()


@contextlib.contextmanager
def raw(path: Path) -> Iterator[sqlite3.Connection]:
    """A plain connection to inspect the file behind the driver's back."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        yield conn
    finally:
        conn.close()


def count(path: Path, table: str) -> int:
    with raw(path) as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def file_bytes(path: Path) -> int:
    return sum(os.path.getsize(p) for p in (path, Path(f"{path}-wal")) if p.exists())


# -- URL and file ------------------------------------------------------------------------


def test_capabilities() -> None:
    assert SqliteStore.capabilities == set(Capability)  # every one there is


def test_absolute_url(tmp_path: Path) -> None:
    store = store_from_url(f"sqlite://{tmp_path}/a%20b/x.db", history_limit=7)
    assert isinstance(store, SqliteStore)
    assert store.path == tmp_path / "a b" / "x.db"
    assert store.history_limit == 7


def test_relative_url_is_resolved_at_construction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert store_from_url("sqlite:data/x.db").path == tmp_path / "data" / "x.db"


@pytest.mark.parametrize(
    "url, match",
    [
        ("sqlite:///:memory:", "not durable"),
        ("sqlite::memory:", "not durable"),
        ("sqlite://host/x.db", "no host"),
        ("sqlite:///x.db?mode=ro", "no query"),
        ("sqlite://", "file path"),
        ("sqlite:///tmp/dir/", "file path"),
    ],
)
def test_bad_urls_are_refused(url: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        store_from_url(url)


def test_memory_path_is_refused() -> None:
    with pytest.raises(ValueError, match="file path"):
        SqliteStore(":memory:")


async def test_open_creates_the_directory_and_a_wal_file(db_path: Path) -> None:
    store = SqliteStore(db_path)
    await store.open()
    try:
        assert db_path.is_file()
        with raw(db_path) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        await store.close()


# -- migrations --------------------------------------------------------------------------


def test_migrations_apply_once_and_are_idempotent(tmp_path: Path) -> None:
    assert len(MIGRATIONS) == SCHEMA_VERSION
    with raw(tmp_path / "m.db") as conn:
        assert migrate(conn) == 0
        assert migrate(conn) == SCHEMA_VERSION
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


async def test_reopening_keeps_the_data_and_the_schema(db_path: Path) -> None:
    for _ in range(2):
        store = SqliteStore(db_path)
        await store.open()
        await store.close()
    with raw(db_path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def schema(conn: sqlite3.Connection) -> set[tuple[str, str]]:
    return set(conn.execute("SELECT name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"))


NEW_IN_2 = ("approvals", "events", "event_logs")
NEW_IN_3 = ("leases",)
NEW_IN_4 = ("requests",)  # and its index, dropped with it
NEW_IN_5 = ("queued_inputs",)  # and its index, dropped with it
NEW_IN_6 = ("schedules",)


async def test_a_file_of_schema_1_opens_and_gains_approvals_event_logs_and_leases(
    db_path: Path, tmp_path: Path
) -> None:
    # A file as schema 1 left it, with sessions and histories in it: written by this
    # driver, then the tables of migrations 2 and 3 dropped (they only add tables).
    store = SqliteStore(db_path, history_limit=3)
    await store.open()
    writers = [SessionWriter(store, f"s{i}") for i in range(3)]
    for w in writers:
        for _ in range(4):
            await w.save(add=2)
    await store.delete("s2", keep_history=True)
    await store.close()
    with raw(db_path) as conn:
        for table in NEW_IN_2 + NEW_IN_3 + NEW_IN_4 + NEW_IN_5 + NEW_IN_6:
            conn.execute(f"DROP TABLE {table}")
        conn.execute("PRAGMA user_version = 1")
        old = schema(conn)
    with raw(tmp_path / "v1.db") as conn:
        for statement in MIGRATIONS[0]:
            conn.execute(statement)
        assert schema(conn) == old  # exactly what schema 1 was

    store = SqliteStore(db_path, history_limit=3)
    await store.open()
    try:
        with raw(db_path) as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 7
            assert {name for name, _ in schema(conn) - old} >= set(
                NEW_IN_2 + NEW_IN_3 + NEW_IN_4 + NEW_IN_5 + NEW_IN_6
            )
        for w in writers[:2]:
            assert await store.load(w.session_id) == w.snapshots[-1]
        assert [e.checkpoint for e in await store.history("s2")] == writers[2].snapshots[:-4:-1]
        # The new tables work, for old sessions too.
        w = writers[0]
        w.store = store
        await w.save(approval=approval("appr", "s0"), events=event_range(1, 2))
        await store.append_events("s2", event_range(1, 1))
        assert await store.get_approval("appr") == approval("appr", "s0")
        assert await store.read_events("s0", after_seq=0, limit=9) == EventPage(
            event_range(1, 2), 1, 2
        )
        assert await store.read_events("s2", after_seq=0, limit=9) == EventPage(
            event_range(1, 1), 1, 1
        )
        record = AppliedRequest("req-1", "0" * 32, "run-1", 1)
        cp = await store.load("s1")
        assert cp is not None
        cp.version += 1
        await store.save(cp, stored_messages=len(cp.messages), requests=[record])
        assert await store.find_request("s1", "req-1") == record
    finally:
        await store.close()
    with raw(db_path) as conn:  # opening again migrates nothing more
        before = schema(conn)
        assert migrate(conn) == SCHEMA_VERSION and schema(conn) == before


async def test_a_newer_schema_is_refused(db_path: Path) -> None:
    db_path.parent.mkdir()
    with raw(db_path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="newer"):
        await SqliteStore(db_path).open()


async def test_the_file_is_marked_with_the_format_and_a_newer_mark_is_refused(
    db_path: Path,
) -> None:
    from luoshod.store.kit.codec import FORMAT_VERSION
    from luoshod_sqlite.migrations import APPLICATION_ID

    db_path.parent.mkdir()
    with raw(db_path) as conn:  # a file of a luoshod from before the mark
        migrate(conn)
        assert conn.execute("PRAGMA application_id").fetchone()[0] == 0
    store = SqliteStore(db_path)
    await store.open()
    await store.close()
    with raw(db_path) as conn:
        assert (
            conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID | FORMAT_VERSION
        )
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID | (FORMAT_VERSION + 1)}")
    with pytest.raises(StoreError, match=f"store format {FORMAT_VERSION + 1}.*newer luoshod"):
        await SqliteStore(db_path).open()
    with raw(db_path) as conn:  # another application's id is not ours to judge or change
        conn.execute("PRAGMA application_id = 1234")
    await SqliteStore(db_path).open()
    with raw(db_path) as conn:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == 1234


# -- layout: O(new messages) --------------------------------------------------------------


async def test_each_message_is_stored_once_across_200_saves(
    sqlite_store: SqliteStore, db_path: Path
) -> None:
    w = SessionWriter(sqlite_store, "long")
    size = 1000
    for _ in range(200):
        await w.save(add=2, size=size)
    await sqlite_store.close()

    assert count(db_path, "messages") == 400
    assert count(db_path, "logs") == 1
    assert count(db_path, "history") == 50
    transcript = sum(len(m.content) for m in w.messages)  # ~400 kB
    # What copying the transcript into every save would store: the latest plus 50 entries.
    full_copies = transcript + sum(len(m.content) for cp in w.snapshots[-50:] for m in cp.messages)
    stored = file_bytes(db_path)
    # Page fill and the 50 history headers cost some, not a transcript per save.
    assert stored < 2 * transcript, (stored, transcript)
    assert stored < full_copies / 20, (stored, full_copies)


async def test_history_entries_are_prefixes_of_one_log(
    sqlite_store: SqliteStore, db_path: Path
) -> None:
    w = SessionWriter(sqlite_store, "s")
    for _ in range(5):
        await w.save(add=2)
    with raw(db_path) as conn:
        rows = conn.execute("SELECT log_id, message_count FROM history ORDER BY id").fetchall()
        [(session_log,)] = conn.execute("SELECT log_id FROM sessions").fetchall()
    assert {log for log, _ in rows} == {session_log}
    assert [n for _, n in rows] == [2, 4, 6, 8, 10]


async def test_rewritten_transcript_gets_a_new_log_and_the_old_one_is_collected(
    db_path: Path,
) -> None:
    store = SqliteStore(db_path, history_limit=2)
    await store.open()
    try:
        w = SessionWriter(store, "s")
        await w.save(add=3)
        await w.save(add=3)
        w.rewrite(keep=4, tag="new")
        await w.save(add=1)
        assert count(db_path, "logs") == 2  # the history still reads the old log
        assert [e.checkpoint for e in await store.history("s")] == w.snapshots[:-3:-1]
        await w.save(add=1)  # the last entry over the old log leaves the ring
        assert count(db_path, "logs") == 1
        assert count(db_path, "messages") == len(w.messages)
        assert await store.load("s") == w.snapshots[-1]
    finally:
        await store.close()


async def test_delete_leaves_no_rows_behind(sqlite_store: SqliteStore, db_path: Path) -> None:
    w = SessionWriter(sqlite_store, "s")
    for i in range(3):
        await w.save(add=2, events=event_range(i + 1, i + 1), approval=approval(f"a{i}", "s"))
    await sqlite_store.delete("s", keep_history=True)
    assert (count(db_path, "sessions"), count(db_path, "history")) == (0, 3)
    assert count(db_path, "messages") == 6  # the history's log is kept
    assert (count(db_path, "events"), count(db_path, "event_logs")) == (3, 1)  # and events
    assert count(db_path, "approvals") == 0
    await sqlite_store.delete("s")
    for table in ("sessions", "history", "logs", "messages", "approvals", "events", "event_logs"):
        assert count(db_path, table) == 0, table


async def test_an_event_log_keeps_its_count_in_step_with_its_events(
    db_path: Path,
) -> None:
    store = SqliteStore(db_path)
    store.event_log_limit = 4
    await store.open()
    try:
        w = SessionWriter(store, "s")
        await w.save(events=event_range(1, 3))
        await store.append_events("s", event_range(3, 6))  # 3 is logged already
        await store.append_events("t", event_range(1, 2))
        with raw(db_path) as conn:
            kept = dict(conn.execute("SELECT session_id, kept FROM event_logs"))
            counted = dict(
                conn.execute("SELECT session_id, count(*) FROM events GROUP BY session_id")
            )
        assert kept == counted == {"s": 4, "t": 2}
        assert (await store.read_events("s", after_seq=0, limit=9)).events == event_range(3, 6)
    finally:
        await store.close()


async def test_an_event_log_written_before_blocks_reads_and_then_seals(db_path: Path) -> None:
    """A file whose event log is all loose rows, as every release before blocks wrote it
    (here put in with plain SQL: 100 events, range 1..64 complete but loose): it reads as
    it is, with no migration, and the ranges later appends complete are sealed; the range
    that was complete before stays loose."""
    store = SqliteStore(db_path)
    await store.open()
    await store.close()
    with raw(db_path) as conn:
        conn.executemany(
            "INSERT INTO events (session_id, seq, data) VALUES ('s', ?, ?)",
            [(e.seq, e.data) for e in event_range(1, 100)],
        )
        conn.execute("INSERT INTO event_logs (session_id, kept) VALUES ('s', 100)")
    store = SqliteStore(db_path)
    await store.open()
    try:
        assert await store.read_events("s", after_seq=0, limit=1000) == EventPage(
            event_range(1, 100), 1, 100
        )
        await store.append_events("s", event_range(101, 130))
        assert await store.read_events("s", after_seq=0, limit=1000) == EventPage(
            event_range(1, 130), 1, 130
        )
        with raw(db_path) as conn:
            keys = [
                seq
                for (seq,) in conn.execute(
                    "SELECT seq FROM events WHERE session_id = 's' ORDER BY seq"
                )
            ]
            blocks = [
                seq
                for (seq, data) in conn.execute("SELECT seq, data FROM events")
                if data[:1] == b"\x00"
            ]
        assert blocks == [128]
        assert keys == list(range(1, 65)) + [128, 129, 130]
    finally:
        await store.close()


async def test_an_append_costs_the_same_however_long_the_log(tmp_path: Path) -> None:
    """Pruning deletes the oldest few rows from the start of the index, O(new events): the
    database does the same work for a log of 100 events as for one of 20,000 (the append
    of 64 events below prunes one block of 64 and seals one range in both)."""

    async def vm_steps(limit: int) -> int:
        store = SqliteStore(tmp_path / f"{limit}.db")
        store.event_log_limit = limit
        await store.open()
        try:
            await store.append_events("s", event_range(1, limit))  # full
            steps = [0]

            def count_steps(on: bool) -> None:
                handler = (lambda: steps.__setitem__(0, steps[0] + 1)) if on else None
                store._connection().set_progress_handler(handler, 1)

            await store._call("test", count_steps, True)
            await store.append_events("s", event_range(limit + 1, limit + 64))  # 64 pruned
            await store._call("test", count_steps, False)
            page = await store.read_events("s", after_seq=0, limit=1)
            assert (page.first_kept, page.last) == (65, limit + 64)
            return steps[0]
        finally:
            await store.close()

    short, long = await vm_steps(100), await vm_steps(20_000)
    assert short > 0
    assert long < 1.5 * short, (short, long)


async def test_status_filter_uses_the_index(sqlite_store: SqliteStore, db_path: Path) -> None:
    from luoshod_sqlite import queries

    with raw(db_path) as conn:
        plan = conn.execute(
            "EXPLAIN QUERY PLAN " + queries.LIST_SESSIONS_BY_STATUS,
            {"status": Status.FINISHED.value, "after": "", "limit": 10},
        ).fetchall()
    assert any("sessions_by_status" in row[-1] for row in plan), plan


# -- errors ------------------------------------------------------------------------------


async def test_a_full_store_raises_store_full_and_keeps_the_previous_state(
    sqlite_store: SqliteStore,
) -> None:
    w = SessionWriter(sqlite_store, "s")
    await w.save(add=2)
    before = w.snapshots[-1]

    def cap_size(conn: sqlite3.Connection) -> None:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages + 2}")

    await sqlite_store._call("test", lambda: cap_size(sqlite_store._connection()))
    with pytest.raises(StoreFull) as info:
        await w.save(add=50, size=4000)
    assert info.value.reason == "STORE_FULL"
    assert await sqlite_store.load("s") == before
    assert [e.checkpoint for e in await sqlite_store.history("s")] == [before]


async def test_a_locked_database_is_a_store_error(db_path: Path) -> None:
    store = SqliteStore(db_path, busy_timeout=0.05)
    await store.open()
    try:
        with raw(db_path) as other:
            other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
            with pytest.raises(StoreError, match="locked") as info:
                await SessionWriter(store, "s").save()
            assert not isinstance(info.value.__cause__, StoreError)
            assert await store.load("s") is None  # readers are not blocked (WAL)
            other.execute("ROLLBACK")
        await SessionWriter(store, "s").save()
    finally:
        await store.close()


async def test_a_corrupt_file_is_a_store_error(db_path: Path) -> None:
    db_path.parent.mkdir()
    db_path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="SQLite open failed") as info:
        await SqliteStore(db_path).open()
    assert isinstance(info.value.__cause__, sqlite3.Error)


async def test_an_unusable_path_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(StoreError):
        await SqliteStore(tmp_path / "file" / "x.db").open()  # parent is a file


async def test_a_save_cancelled_while_queued_is_never_applied(sqlite_store: SqliteStore) -> None:
    gate = threading.Event()
    busy = asyncio.ensure_future(sqlite_store._call("test", gate.wait))  # hold the thread
    w = SessionWriter(sqlite_store, "s")
    task = asyncio.create_task(w.save())
    await asyncio.sleep(0)  # one turn of the loop: the save is queued behind the gate
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task  # settles while the database thread is still held
    gate.set()
    await busy
    later = SessionWriter(sqlite_store, "other")
    await later.save()  # a later drain must not pick the cancelled save up
    assert await sqlite_store.load("s") is None


async def test_message_bodies_are_binary_and_old_json_bodies_still_read(
    sqlite_store: SqliteStore, db_path: Path
) -> None:
    w = SessionWriter(sqlite_store, "s")
    await w.save(add=2)
    with raw(db_path) as conn:
        assert {type(b) for (b,) in conn.execute("SELECT body FROM messages")} == {bytes}
        # A body as earlier versions wrote it: the message's JSON text.
        conn.execute(
            "UPDATE messages SET body = ? WHERE idx = 0",
            ('{"role": "user", "content": "s-0 "}',),
        )
    assert await sqlite_store.load("s") == w.snapshots[-1]
