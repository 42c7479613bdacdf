"""Schedules (``Capability.SCHEDULES``, R87) in the ``schedules`` database: the name's
UTF-8 bytes to a u64 version and the schedule's data. A write transaction of LMDB excludes
every other writer, so the version a compare-and-set reads is the version it replaces."""

from __future__ import annotations

import lmdb

from luoshod.domain import StoredSchedule

from . import layout
from .layout import Dbs


def _decode(name: str, value: bytes) -> StoredSchedule:
    return StoredSchedule(name, layout.from_u64(value[:8]), bytes(value[8:]))


def create(txn: lmdb.Transaction[bytes], dbs: Dbs, name: str, data: bytes) -> StoredSchedule | None:
    key = layout.id_key(name, "schedule name")
    if not txn.put(key, layout.u64(1) + data, db=dbs.schedules, overwrite=False):
        return None
    return StoredSchedule(name, 1, data)


def get(txn: lmdb.Transaction[bytes], dbs: Dbs, name: str) -> StoredSchedule | None:
    key = layout.readable_key(name)
    found = None if key is None else txn.get(key, db=dbs.schedules)
    return None if found is None else _decode(name, bytes(found))


def every(txn: lmdb.Transaction[bytes], dbs: Dbs) -> list[StoredSchedule]:
    cursor = txn.cursor(db=dbs.schedules)
    return [_decode(bytes(k).decode(), bytes(v)) for k, v in cursor.iternext()]


def update(
    txn: lmdb.Transaction[bytes], dbs: Dbs, name: str, data: bytes, version: int
) -> StoredSchedule | None:
    found = get(txn, dbs, name)
    if found is None or found.version != version:
        return None
    txn.put(layout.id_key(name), layout.u64(version + 1) + data, db=dbs.schedules)
    return StoredSchedule(name, version + 1, data)


def delete(txn: lmdb.Transaction[bytes], dbs: Dbs, name: str) -> bool:
    key = layout.readable_key(name)
    return key is not None and bool(txn.delete(key, db=dbs.schedules))
