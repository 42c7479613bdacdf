"""How the ``lmdb:`` driver lays records out: its named databases, keys and values.

Keys are bytes that sort the way they are read. A session id is its UTF-8 bytes; keys
under a session are ``id + NUL + big-endian number`` (ids hold no NUL, so one session's
keys are contiguous and sessions come in id order).

==================  =====================================  ==============================
database            key                                    value
==================  =====================================  ==============================
``meta``            ``schema_version``, ``next_log_id``    u64
``sessions``        session id                             :class:`Row` (the latest)
``by_status``       status byte + session id               empty (list by status)
``history``         session id, NUL, u64 seq               :class:`Row` (one entry)
``history_ends``    session id                             u64 first and last seq kept
``logs``            session id, NUL, u64 log id            empty (the session's logs)
``chunks``          u64 log id, u32 chunk number           bytes of the log's stream
``events``          session id, NUL, u64 seq               a loose event, or a block of
                    (a block: its last seq)                64 compressed (kit's
                                                           ``eventblocks``)
``event_counts``    session id                             u64 events kept
``approvals``       approval id                            the approval's JSON
``by_session``      session id, NUL, approval id           empty (a session's approvals)
``leases``          session id                             :class:`LeaseRow` (kept after
                                                           a delete: tokens only grow)
``requests``        session id, NUL, 16-byte hash of the   u64 number, then the applied
                    request id (:func:`request_key`)       request record's JSON (R74)
``request_order``   session id, NUL, u64 number            the hash (the session's
                                                           records in the order first
                                                           written; numbers are dense)
``queue``           session id, NUL, u64 position + 2**62  a queued input's JSON (R69;
                                                           :func:`queue_key`)
``schedules``       schedule name                          u64 version, then the
                                                           schedule's data (R87)
==================  =====================================  ==============================

**Message logs.** A log is a byte stream of messages, each a small fixed header and its
texts as UTF-8 (:mod:`luoshod.store.kit.codec`). The stream is cut into chunks of exactly one
overflow page each (page size − 16 bytes), so a chunk fills its page whatever the size of
the messages and whatever order sessions write in; values stored per message would leave
pages half empty (LMDB splits a full leaf page in two) or waste most of a last overflow
page. A save appends its new messages' bytes: it rewrites the log's last, partial chunk and
adds new ones, so it writes O(new messages). A :class:`Row` (the latest checkpoint or a
history entry) is a header over a prefix of a log: ``(log_id, message_count, byte_count)``;
saves only extend logs, so every prefix a row refers to stays as it was.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import lmdb

from luoshod.domain import Status
from luoshod.errors import InvalidArgument
from luoshod.store.kit import codec

META = b"meta"
SESSIONS = b"sessions"
BY_STATUS = b"by_status"
HISTORY = b"history"
HISTORY_ENDS = b"history_ends"
LOGS = b"logs"
CHUNKS = b"chunks"
EVENTS = b"events"
EVENT_COUNTS = b"event_counts"
APPROVALS = b"approvals"
BY_SESSION = b"by_session"
LEASES = b"leases"
REQUESTS = b"requests"
REQUEST_ORDER = b"request_order"
QUEUE = b"queue"
SCHEDULES = b"schedules"
DATABASES = (
    META,
    SESSIONS,
    BY_STATUS,
    HISTORY,
    HISTORY_ENDS,
    LOGS,
    CHUNKS,
    EVENTS,
    EVENT_COUNTS,
    APPROVALS,
    BY_SESSION,
    LEASES,
    REQUESTS,
    REQUEST_ORDER,
    QUEUE,
    SCHEDULES,
)

SCHEMA_VERSION_KEY = b"schema_version"
#: The newest codec format (``luoshod.store.kit.codec.FORMAT_VERSION``) any luoshod wrote to
#: the environment, u64; none before it was kept (format 1 or older). A luoshod of an older
#: format refuses the environment at open, rather than meet the newer records one by one.
FORMAT_VERSION_KEY = b"format_version"
NEXT_LOG_ID_KEY = b"next_log_id"

#: A session id is at most this many UTF-8 bytes (LMDB keys are at most 511 bytes).
MAX_ID_BYTES = 400
#: An overflow page's header; a chunk of ``page_size - PAGE_HEADER`` bytes fills its page.
PAGE_HEADER = 16

_U64 = struct.Struct(">Q")
_CHUNK_KEY = struct.Struct(">QI")
_ROW = struct.Struct(">QIQQB")  # log id, message count, byte count, version, status

STATUS_CODES = {
    Status.IN_PROGRESS: 1,
    Status.AWAITING_APPROVAL: 2,
    Status.FINISHED: 3,
    Status.SLEEPING: 4,
}
STATUSES = {code: status for status, code in STATUS_CODES.items()}


def id_key(value: str, what: str = "session id") -> bytes:
    """The key of a session (or approval) id. Raises ``InvalidArgument`` for one LMDB
    cannot key: empty, with a NUL, or longer than :data:`MAX_ID_BYTES` in UTF-8."""
    key = value.encode()
    if not key or b"\0" in key or len(key) > MAX_ID_BYTES:
        raise InvalidArgument(
            f"the lmdb store cannot key {what} {value[:60]!r}: it must be 1 to "
            f"{MAX_ID_BYTES} UTF-8 bytes with no NUL",
            reason="INVALID_ID",
        )
    return key


def readable_key(value: str) -> bytes | None:
    """:func:`id_key` for a lookup: ``None`` (nothing stored) instead of an error."""
    try:
        return id_key(value)
    except InvalidArgument:
        return None


def under(sid_key: bytes) -> bytes:
    """The prefix of every key under a session (history, logs, events, approvals)."""
    return sid_key + b"\0"


def numbered(sid_key: bytes, n: int) -> bytes:
    return sid_key + b"\0" + _U64.pack(n)


def number_of(key: bytes) -> int:
    n: int = _U64.unpack_from(key, len(key) - 8)[0]
    return n


_ENDS = struct.Struct(">QQ")


def ends(first: int, last: int) -> bytes:
    return _ENDS.pack(first, last)


def from_ends(value: bytes) -> tuple[int, int]:
    first, last = _ENDS.unpack(value)
    return first, last


def u64(n: int) -> bytes:
    return _U64.pack(n)


def from_u64(value: bytes) -> int:
    n: int = _U64.unpack(value)[0]
    return n


def request_hash(request_id: str) -> bytes:
    """A request id as a key part of fixed size: ids of up to 128 characters after a
    session id of up to 400 bytes would not fit LMDB's 511-byte keys."""
    return hashlib.blake2b(request_id.encode(), digest_size=16).digest()


def request_key(sid_key: bytes, request_id: str) -> bytes:
    return under(sid_key) + request_hash(request_id)


#: Queue positions are signed (an input put first goes below the smallest); keys hold them
#: shifted into u64 so that they sort as numbers.
QUEUE_OFFSET = 1 << 62


def queue_key(sid_key: bytes, position: int) -> bytes:
    return numbered(sid_key, position + QUEUE_OFFSET)


def queue_position(key: bytes) -> int:
    return number_of(key) - QUEUE_OFFSET


def chunk_key(log_id: int, n: int) -> bytes:
    return _CHUNK_KEY.pack(log_id, n)


def log_of_chunk(key: bytes) -> int:
    log_id: int = _U64.unpack_from(key)[0]
    return log_id


@dataclass(slots=True, frozen=True)
class Row:
    """A checkpoint as stored: a header over the first ``count`` messages of a log."""

    log_id: int
    count: int
    nbytes: int
    version: int
    status: Status
    #: The checkpoint's header: its compact form (:func:`codec.compact_header`), or its
    #: JSON as UTF-8 (:func:`codec.encode_header`) in a row written before that.
    header: bytes

    def encode(self) -> bytes:
        head = _ROW.pack(
            self.log_id, self.count, self.nbytes, self.version, STATUS_CODES[self.status]
        )
        return head + self.header

    @classmethod
    def decode(cls, value: bytes) -> Row:
        log_id, count, nbytes, version, status = _ROW.unpack_from(value)
        return cls(log_id, count, nbytes, version, STATUSES[status], value[_ROW.size :])

    @staticmethod
    def log_id_of(value: bytes) -> int:
        log_id: int = _U64.unpack_from(value)[0]
        return log_id

    def header_dict(self) -> dict[str, Any]:
        return codec.decode_header(self.header)


_LEASE = struct.Struct(">Qd")  # token, expires_at (0 when released); then the owner


@dataclass(slots=True, frozen=True)
class LeaseRow:
    """token, expiry, the owner's name, then (after a NUL, absent in a record written
    before addresses were kept) the holder's advertised address (R89)."""

    owner: str
    token: int
    expires_at: float
    address: str = ""

    def encode(self) -> bytes:
        tail = b"\0" + self.address.encode() if self.address else b""
        return _LEASE.pack(self.token, self.expires_at) + self.owner.encode() + tail

    @classmethod
    def decode(cls, value: bytes) -> LeaseRow:
        token, expires_at = _LEASE.unpack_from(value)
        owner, _, address = bytes(value[_LEASE.size :]).partition(b"\0")
        return cls(owner.decode(), token, expires_at, address.decode())


def encode_json(d: Any) -> bytes:
    return codec.encode_json(d).encode()


# -- the open databases, and a session's keys in one ------------------------------------


class Dbs:
    """The open named databases of an environment (attributes named as in
    :data:`DATABASES`), and the size of a log chunk."""

    def __init__(self, handles: dict[bytes, Any], chunk_size: int) -> None:
        for name, handle in handles.items():
            setattr(self, name.decode(), handle)
        self.chunk_size = chunk_size

    meta: Any
    sessions: Any
    by_status: Any
    history: Any
    history_ends: Any
    logs: Any
    chunks: Any
    events: Any
    event_counts: Any
    approvals: Any
    by_session: Any
    leases: Any
    queue: Any
    requests: Any
    request_order: Any
    schedules: Any


def keys_under(
    txn: lmdb.Transaction[bytes], db: Any, sid_key: bytes, *, reverse: bool = False
) -> Iterator[tuple[bytes, bytes]]:
    """(key, value) of a session's keys in ``db``, in key order (or reversed)."""
    prefix = under(sid_key)
    cursor = txn.cursor(db=db)
    if reverse:
        found = cursor.set_range(prefix + b"\xff" * 8)
        found = cursor.prev() if found else cursor.last()
        items = cursor.iterprev() if found else iter(())
    else:
        items = cursor.iternext() if cursor.set_range(prefix) else iter(())
    for key, value in items:
        if not key.startswith(prefix):
            return
        yield key, value
