"""How the ``sqlite:`` driver stores checkpoint headers: in their compact form
(``codec.compact_header``: a BLOB in the ``header`` column, declared TEXT, which SQLite
keeps as the bytes it was given), and a file of store format 3 (JSON headers, as every
release before the compact form wrote) loads, lists, keeps its history and saves on, old
and new rows side by side, and is marked format 4 from then on."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from luoshod.store.conformance.test_store_headers import reads_and_saves_on, save_three
from luoshod.store.kit import codec
from luoshod_sqlite import SqliteStore
from luoshod_sqlite.migrations import APPLICATION_ID


def headers(path: Path) -> list[tuple[str, str, str | bytes]]:
    """(table, SQLite's type of the value, the value) of every stored header."""
    conn = sqlite3.connect(path)
    try:
        return [
            (table, kind, header)
            for table in ("sessions", "history")
            for kind, header in conn.execute(
                f"SELECT typeof(header), header FROM {table} ORDER BY rowid"
            )
        ]
    finally:
        conn.close()


async def opened(path: Path) -> SqliteStore:
    store = SqliteStore(path)
    await store.open()
    return store


async def test_headers_are_stored_as_compact_blobs(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    saved = await save_three(await opened(path))
    found = headers(path)
    assert [(table, kind) for table, kind, _ in found] == [("sessions", "blob")] + [
        ("history", "blob")
    ] * 3
    for _, _, header in found:
        assert isinstance(header, bytes)
        assert header[:2] == bytes((codec.COMPACT_HEADER, codec.HEADER_DICTIONARY))
        assert len(header) < len(codec.header_json(header).encode()) / 2
    # The latest row's header is the last save's, JSON once inflated.
    assert json.loads(codec.header_json(found[0][2]))["version"] == 3
    assert json.loads(codec.header_json(found[0][2])) == json.loads(codec.encode_header(saved[-1]))


async def test_a_file_with_json_headers_loads_and_saves_on(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    saved = await save_three(await opened(path))
    # The file as the release before the compact form (store format 3) wrote it: every
    # header JSON text of format 3, every record marked format 3, the file marked so.
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        for table in ("sessions", "history"):
            for rowid, header in conn.execute(f"SELECT rowid, header FROM {table}").fetchall():
                text = codec.header_json(header).replace(
                    f'{{"format":{codec.FORMAT_VERSION},', '{"format":3,', 1
                )
                conn.execute(f"UPDATE {table} SET header = ? WHERE rowid = ?", (text, rowid))
        for rowid, body in conn.execute("SELECT rowid, body FROM messages").fetchall():
            assert body[0] >> 4 == codec.FORMAT_VERSION
            conn.execute(
                "UPDATE messages SET body = ? WHERE rowid = ?",
                (bytes((0x30 | body[0] & 0x0F,)) + body[1:], rowid),
            )
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID | 3}")
    finally:
        conn.close()
    assert {kind for _, kind, _ in headers(path)} == {"text"}
    assert all(json.loads(h)["format"] == 3 for _, _, h in headers(path))

    await reads_and_saves_on(await opened(path), saved)
    # Marked format 4 now: a luoshod of format 3, which would misread the compact
    # headers, refuses the file at open by name.
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA application_id").fetchone() == (
            APPLICATION_ID | codec.FORMAT_VERSION,
        )
    finally:
        conn.close()
    assert codec.FORMAT_VERSION >= 4  # format 5 (per-turn usage) keeps the compact headers
    kinds = [(table, kind) for table, kind, _ in headers(path)]
    assert kinds == [
        ("sessions", "blob"),
        ("history", "text"),
        ("history", "text"),
        ("history", "text"),
        ("history", "blob"),
    ]
