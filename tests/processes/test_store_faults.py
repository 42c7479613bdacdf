"""Issue 14's faults a disk gives, as ``luoshod serve`` meets them at start: a store file
that is garbage, cut short, or written by a newer luoshod is refused with one line naming
the file and what is wrong (exit 2), never opened as an empty store, and left as it was.
"Written by a newer luoshod" is either a newer schema or records of a newer codec format
(``FORMAT_VERSION``), which the drivers mark store-wide: SQLite in the file's application
id, LMDB in its meta database, PostgreSQL in the one row of `luoshod_format`."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from luoshod.domain import Checkpoint, Message, Role
from luoshod.store import store_from_url
from luoshod.store.kit import codec
from luoshod.store.kit.codec import FORMAT_VERSION
from luoshod_lmdb.environment import SCHEMA_VERSION as LMDB_SCHEMA
from luoshod_sqlite.migrations import APPLICATION_ID


def serve(url: str) -> tuple[int, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "luoshod", "serve", "--listen", "127.0.0.1:0", "--store", url],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def a_store_with_sessions(url: str, n: int = 40) -> None:
    async def fill() -> None:
        store = store_from_url(url)
        await store.open()
        try:
            for k in range(n):
                cp = Checkpoint(f"s-{k}", messages=[Message(Role.USER, "x" * 2000)], version=1)
                await store.save(cp, stored_messages=0)
        finally:
            await store.close()

    asyncio.run(fill())


def cut(path: Path, keep: float) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


def garbage(path: Path) -> None:
    path.write_bytes(b"not a store at all " * 400)


def newer_sqlite(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 999")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # all of it in the file compared
    conn.close()


def newer_sqlite_format(path: Path) -> None:
    """As a luoshod of the next codec format leaves a file: marked with its format (the
    file's application id) and a session saved in it."""
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID | (FORMAT_VERSION + 1)}")
    (header,) = conn.execute("SELECT header FROM sessions WHERE session_id = 's-0'").fetchone()
    newer = codec.header_json(header).replace(
        f'"format":{FORMAT_VERSION},', f'"format":{FORMAT_VERSION + 1},', 1
    )
    assert newer != codec.header_json(header)
    # In the form the driver stores (compact: codec.compact_header).
    conn.execute(
        "UPDATE sessions SET header = ? WHERE session_id = 's-0'",
        (codec.compact_header(newer) if isinstance(header, bytes) else newer,),
    )
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def in_lmdb_meta(key: bytes, value: int) -> Callable[[Path], None]:
    """Sets a key of an LMDB environment's meta database, as a newer luoshod leaves it."""

    def damage(env_dir: Path) -> None:
        import lmdb

        from luoshod_lmdb import layout

        env = lmdb.open(str(env_dir), max_dbs=16)
        try:
            with env.begin(write=True) as txn:
                txn.put(key, layout.u64(value), db=env.open_db(layout.META, txn=txn))
        finally:
            env.close()

    return damage


CASES: dict[str, tuple[str, str, Callable[[Path], None], str]] = {
    # name: (URL template, the file to damage, the damage, what the line must say)
    "sqlite-garbage": ("sqlite:///{d}/s.db", "s.db", garbage, "not a database"),
    "sqlite-truncated": ("sqlite:///{d}/s.db", "s.db", lambda p: cut(p, 0.3), "malformed"),
    "sqlite-newer": ("sqlite:///{d}/s.db", "s.db", newer_sqlite, "newer"),
    "lmdb-truncated": ("lmdb:///{d}/env", "env/data.mdb", lambda p: cut(p, 0.5), "truncated"),
    "lmdb-garbage": ("lmdb:///{d}/env", "env/data.mdb", garbage, "not an LMDB file"),
    # Written by a newer luoshod: a newer schema, or records of a newer codec format.
    "sqlite-newer-format": (
        "sqlite:///{d}/s.db",
        "s.db",
        newer_sqlite_format,
        f"store format {FORMAT_VERSION + 1}",
    ),
    "lmdb-newer-schema": (
        "lmdb:///{d}/env",
        "env",
        in_lmdb_meta(b"schema_version", LMDB_SCHEMA + 1),
        "newer",
    ),
    "lmdb-newer-format": (
        "lmdb:///{d}/env",
        "env",
        in_lmdb_meta(b"format_version", FORMAT_VERSION + 1),
        f"store format {FORMAT_VERSION + 1}",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_damaged_or_newer_store_is_refused_at_start_naming_the_file(
    tmp_path: Path, case: str
) -> None:
    template, name, damage, says = CASES[case]
    url = template.format(d=tmp_path)
    a_store_with_sessions(url)
    damage(tmp_path / name)
    target = tmp_path / name
    if url.startswith("lmdb:"):
        # The daemon gets a copy of data.mdb that this process never opened: LMDB's locks are
        # per process (fcntl on lock.mdb, its writer mutex in it), and this process opened
        # the environment twice (the driver's handle, then the damage's), which LMDB forbids;
        # a daemon sharing that lock file with a live test process is not what is tested.
        url = template.format(d=tmp_path / "copy")
        (tmp_path / "copy" / "env").mkdir(parents=True)
        shutil.copyfile(tmp_path / "env" / "data.mdb", tmp_path / "copy" / "env" / "data.mdb")
        target = tmp_path / "copy" / "env" / "data.mdb"
    before = unchanging(target.read_bytes())
    code, out = serve(url)
    lines = out.splitlines()
    assert code == 2, out  # not a daemon serving an empty store, not a crash (SIGBUS was -7)
    assert len(lines) == 1 and "luoshod listening" not in out, out
    assert str(tmp_path) in lines[0] and says in lines[0], lines[0]
    if "newer" in case:  # the URL is right: the advice is to upgrade, not to look elsewhere
        assert lines[0].endswith(
            "upgrade luoshod (and the store's driver) to serve it, or point --store at "
            "a store this version wrote"
        ), lines[0]
        assert "check the --store URL" not in lines[0], lines[0]
    else:
        assert lines[0].endswith("check the --store URL and that the store is reachable"), lines[0]
    assert unchanging(target.read_bytes()) == before  # left as it was, for whoever restores it


def unchanging(data: bytes) -> bytes:
    """A file's bytes, with a SQLite header's counters that opening it moves masked: the
    file change counter (bytes 24-27) and the version-valid-for number and library version
    (92-99); the rest of the file must be untouched."""
    if data.startswith(b"SQLite format 3\0"):
        return data[:24] + bytes(4) + data[28:92] + bytes(8) + data[100:]
    return data


def test_a_postgresql_store_of_a_newer_format_is_refused_at_start_naming_the_database(
    postgres_url: str,
) -> None:
    # PostgreSQL's mark: the one row of luoshod_format (as SQLite's application id and
    # LMDB's format_version), written when the schema is created.
    import psycopg

    a_store_with_sessions(postgres_url, n=3)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        assert conn.execute("SELECT format_version FROM luoshod_format").fetchall() == [
            (FORMAT_VERSION,)
        ]
        conn.execute("UPDATE luoshod_format SET format_version = %s", (FORMAT_VERSION + 1,))
    code, out = serve(postgres_url)
    lines = out.splitlines()
    assert code == 2, out
    assert len(lines) == 1 and "luoshod listening" not in out, out
    database = postgres_url.rsplit("/", 1)[1]
    assert database in lines[0] and f"store format {FORMAT_VERSION + 1}" in lines[0], lines[0]
    assert lines[0].endswith(
        "upgrade luoshod (and the store's driver) to serve it, or point --store at "
        "a store this version wrote"
    ), lines[0]
    with psycopg.connect(postgres_url, autocommit=True) as conn:  # left as it was
        assert conn.execute("SELECT format_version FROM luoshod_format").fetchall() == [
            (FORMAT_VERSION + 1,)
        ]
        assert conn.execute("SELECT count(*) FROM sessions").fetchone() == (3,)
