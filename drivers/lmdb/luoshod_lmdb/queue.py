"""The input queue (``Capability.QUEUE``, R68, R69) in the ``queue`` database: a session's
inputs under ``session id, NUL, position`` (:func:`.layout.queue_key`), so a cursor reads
them in queue order; a write transaction of LMDB excludes every other writer, so the
ends read by an enqueue stay the ends."""

from __future__ import annotations

import base64
import json
from typing import Any

import lmdb

from luoshod.domain import QueuedInput

from . import layout
from .layout import Dbs, keys_under


def _decode(session_id: str, key: bytes, value: bytes) -> QueuedInput:
    d = json.loads(value)
    return QueuedInput(
        session_id,
        d["request_id"],
        layout.queue_position(key),
        base64.b64decode(d["data"]),
        d["enqueued_at"],
    )


def _entries(
    txn: lmdb.Transaction[bytes], dbs: Dbs, session_id: str
) -> list[tuple[bytes, QueuedInput]]:
    key = layout.readable_key(session_id)
    if key is None:
        return []
    return [(k, _decode(session_id, k, bytes(v))) for k, v in keys_under(txn, dbs.queue, key)]


def enqueue(
    txn: lmdb.Transaction[bytes],
    dbs: Dbs,
    key: bytes,
    session_id: str,
    request_id: str,
    data: bytes,
    front: bool,
    now: float,
) -> QueuedInput:
    entries = _entries(txn, dbs, session_id)
    for _, q in entries:
        if q.request_id == request_id:
            return q
    if not entries:
        position = 0
    else:
        position = entries[0][1].position - 1 if front else entries[-1][1].position + 1
    value: dict[str, Any] = {
        "request_id": request_id,
        "data": base64.b64encode(data).decode(),
        "enqueued_at": now,
    }
    txn.put(layout.queue_key(key, position), layout.encode_json(value), db=dbs.queue)
    return QueuedInput(session_id, request_id, position, data, now)


def queued(txn: lmdb.Transaction[bytes], dbs: Dbs, session_id: str) -> list[QueuedInput]:
    return [q for _, q in _entries(txn, dbs, session_id)]


def remove(txn: lmdb.Transaction[bytes], dbs: Dbs, session_id: str, request_id: str) -> bool:
    for k, q in _entries(txn, dbs, session_id):
        if q.request_id == request_id:
            return bool(txn.delete(k, db=dbs.queue))
    return False


def replace(
    txn: lmdb.Transaction[bytes], dbs: Dbs, session_id: str, request_id: str, data: bytes
) -> bool:
    for k, q in _entries(txn, dbs, session_id):
        if q.request_id == request_id:
            value: dict[str, Any] = {
                "request_id": request_id,
                "data": base64.b64encode(data).decode(),
                "enqueued_at": q.enqueued_at,
            }
            txn.put(k, layout.encode_json(value), db=dbs.queue)
            return True
    return False


def sessions(txn: lmdb.Transaction[bytes], dbs: Dbs, after: str, limit: int) -> list[str]:
    """Distinct sessions of the queue after ``after``: one seek per session, not a scan of
    its inputs (a session's keys end before ``id + 0x01``)."""
    cursor = txn.cursor(db=dbs.queue)
    found: list[str] = []
    start = after.encode() + b"\x01" if after else b""
    while len(found) < limit and (cursor.set_range(start) if start else cursor.first()):
        k = bytes(cursor.key())
        sid = k[: k.index(b"\0")]
        found.append(sid.decode())
        start = sid + b"\x01"
    return found
