"""``luoshod store copy`` carries checkpoint headers between drivers that store them in
different forms: it reads checkpoints and writes them with ``import_session``, so each
destination stores them in its own form (compact on SQLite and LMDB, JSON on PostgreSQL),
whatever the source's rows held — compact, or JSON written before the compact form."""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path

import lmdb
import psycopg

from luoshod.domain import Checkpoint, Message, Role
from luoshod.store import Store, store_from_url
from luoshod.store.conformance.test_store_headers import awkward_checkpoint
from luoshod.store.copy import copy_store
from luoshod.store.kit import codec
from luoshod_lmdb import layout
from luoshod_lmdb.layout import Row

LIMIT = 5


async def open_store(url: str) -> Store:
    store = store_from_url(url, history_limit=LIMIT)
    await store.open()
    return store


async def fill(url: str) -> dict[str, list[Checkpoint]]:
    """Two sessions paused in sub-agents, three saves each; each one's checkpoints,
    newest first (its history)."""
    store = await open_store(url)
    saved: dict[str, list[Checkpoint]] = {}
    try:
        for sid in ("compact", "was-json"):
            cp = awkward_checkpoint(sid)
            cp.history_limit = None
            for i in range(3):
                cp.version, cp.step_index = i + 1, i
                if i:
                    cp.messages.append(Message(Role.USER, f"more {i}"))
                saved.setdefault(sid, []).insert(0, copy.deepcopy(cp))
                await store.save(
                    cp, stored_messages=len(cp.messages) - (1 if i else len(cp.messages))
                )
    finally:
        await store.close()
    return saved


async def holds(url: str, saved: dict[str, list[Checkpoint]]) -> None:
    store = await open_store(url)
    try:
        for sid, history in saved.items():
            assert await store.load(sid) == history[0], (url, sid)
            assert [e.checkpoint for e in await store.history(sid)] == history, (url, sid)
    finally:
        await store.close()


def sqlite_headers(path: Path) -> list[str | bytes]:
    conn = sqlite3.connect(path)
    try:
        return [
            h for t in ("sessions", "history") for (h,) in conn.execute(f"SELECT header FROM {t}")
        ]
    finally:
        conn.close()


def lmdb_headers(env_dir: Path) -> list[bytes]:
    env = lmdb.open(str(env_dir), max_dbs=16, readonly=True)
    try:
        with env.begin() as txn:
            return [
                Row.decode(value).header
                for name in (layout.SESSIONS, layout.HISTORY)
                for _, value in txn.cursor(db=env.open_db(name, txn=txn, create=False))
            ]
    finally:
        env.close()


def compact(header: str | bytes) -> bool:
    return isinstance(header, bytes) and header[:2] == bytes(
        (codec.COMPACT_HEADER, codec.HEADER_DICTIONARY)
    )


async def test_copy_carries_headers_across_their_forms(tmp_path: Path, postgres_url: str) -> None:
    first, back = tmp_path / "first.db", tmp_path / "back.db"
    saved = await fill(f"sqlite://{first}")
    # One session's rows as a release before the compact form wrote them.
    conn = sqlite3.connect(first, isolation_level=None)
    try:
        for table in ("sessions", "history"):
            for rowid, header in conn.execute(
                f"SELECT rowid, header FROM {table} WHERE session_id = 'was-json'"
            ).fetchall():
                conn.execute(
                    f"UPDATE {table} SET header = ? WHERE rowid = ?",
                    (codec.header_json(header), rowid),
                )
    finally:
        conn.close()
    kinds = sorted(type(h).__name__ for h in sqlite_headers(first))
    assert kinds == ["bytes"] * 4 + ["str"] * 4  # mixed rows
    await holds(f"sqlite://{first}", saved)

    urls = [f"sqlite://{first}", postgres_url, f"lmdb://{tmp_path}/via", f"sqlite://{back}"]
    for a, b in zip(urls, urls[1:]):
        report = await copy_store(a, b, history_limit=LIMIT, progress=False)
        assert (report.copied, report.skipped) == (2, 0), (a, b)
        await holds(b, saved)
        # Copied again: equal checkpoints, whatever form each side stores them in.
        again = await copy_store(a, b, history_limit=LIMIT, progress=False)
        assert (again.copied, again.skipped) == (0, 2), (a, b)

    # Each destination stores them in its own form: PostgreSQL JSON an operator queries …
    with psycopg.connect(postgres_url) as pg:
        rows = pg.execute(
            # Read as text: these headers hold an escaped NUL (\u0000), which PostgreSQL's
            # json operators cannot make text of (an operator's query of such a value fails).
            "SELECT pg_typeof(header)::text, header::text FROM sessions"
            " UNION ALL SELECT pg_typeof(header)::text, header::text FROM history"
        ).fetchall()
    found = sorted(
        (kind, json.loads(text)["session_id"], json.loads(text)["format"]) for kind, text in rows
    )
    assert found == sorted([("json", sid, codec.FORMAT_VERSION) for sid in saved for _ in range(4)])
    # … LMDB and SQLite compact.
    assert len(lmdb_headers(tmp_path / "via")) == 8
    assert all(map(compact, lmdb_headers(tmp_path / "via")))
    assert len(sqlite_headers(back)) == 8 and all(map(compact, sqlite_headers(back)))
    assert json.loads(codec.header_json(sqlite_headers(back)[0]))["format"] == codec.FORMAT_VERSION
