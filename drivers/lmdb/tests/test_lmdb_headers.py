"""How the ``lmdb:`` driver stores checkpoint headers: in their compact form
(``codec.compact_header``) after each row's fixed fields, and an environment whose rows
hold JSON headers (store format 3, every release before the compact form) loads, lists,
keeps its history and saves on, old and new rows side by side, marked format 4 from then
on."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import lmdb

from luoshod.store.conformance.test_store_headers import reads_and_saves_on, save_three
from luoshod.store.kit import codec
from luoshod_lmdb import LmdbStore, layout
from luoshod_lmdb.layout import Row


def rows(env_dir: Path, change: Callable[[Row], Row] | None = None) -> list[tuple[bytes, Row]]:
    """(database, row) of the latest row and every history row, read (and, with
    ``change``, rewritten) behind the driver's back."""
    env = lmdb.open(str(env_dir), max_dbs=16)
    found = []
    try:
        with env.begin(write=change is not None) as txn:
            for name in (layout.SESSIONS, layout.HISTORY):
                db = env.open_db(name, txn=txn)
                for key, value in list(txn.cursor(db=db)):
                    row = Row.decode(value)
                    if change is not None:
                        row = change(row)
                        txn.put(key, row.encode(), db=db)
                    found.append((name, row))
    finally:
        env.close()
    return found


async def opened(env_dir: Path) -> LmdbStore:
    store = LmdbStore(env_dir)
    await store.open()
    return store


def is_compact(header: bytes) -> bool:
    return header[:2] == bytes((codec.COMPACT_HEADER, codec.HEADER_DICTIONARY))


async def test_headers_are_stored_compact(tmp_path: Path) -> None:
    env_dir = tmp_path / "env"
    saved = await save_three(await opened(env_dir))
    found = rows(env_dir)
    assert [name for name, _ in found] == [layout.SESSIONS] + [layout.HISTORY] * 3
    for _, row in found:
        assert is_compact(row.header)
        assert len(row.header) < len(codec.header_json(row.header).encode()) / 2
    assert json.loads(codec.header_json(found[0][1].header)) == json.loads(
        codec.encode_header(saved[-1])
    )


async def test_an_environment_with_json_headers_loads_and_saves_on(tmp_path: Path) -> None:
    env_dir = tmp_path / "env"
    saved = await save_three(await opened(env_dir))

    def as_json(row: Row) -> Row:  # as the release before the compact form (format 3) wrote it
        text = codec.header_json(row.header).replace(
            f'{{"format":{codec.FORMAT_VERSION},', '{"format":3,', 1
        )
        return Row(row.log_id, row.count, row.nbytes, row.version, row.status, text.encode())

    rows(env_dir, as_json)
    assert not any(is_compact(row.header) for _, row in rows(env_dir))
    assert format_mark(env_dir, 3) == codec.FORMAT_VERSION

    await reads_and_saves_on(await opened(env_dir), saved)
    assert [is_compact(row.header) for _, row in rows(env_dir)] == [True, False, False, False, True]
    # Marked format 4 or later at open: a luoshod of format 3 refuses the environment by name.
    assert format_mark(env_dir) == codec.FORMAT_VERSION >= 4


def format_mark(env_dir: Path, new: int | None = None) -> int:
    """The environment's format mark (``format_version`` of ``meta``); with ``new``, set
    it, as an environment of that format is marked. Returns the mark found."""
    env = lmdb.open(str(env_dir), max_dbs=16)
    try:
        with env.begin(write=new is not None) as txn:
            meta = env.open_db(layout.META, txn=txn)
            found = layout.from_u64(txn.get(layout.FORMAT_VERSION_KEY, db=meta))
            if new is not None:
                txn.put(layout.FORMAT_VERSION_KEY, layout.u64(new), db=meta)
    finally:
        env.close()
    return found
