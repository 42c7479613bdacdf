"""The binary form of a message that the embedded drivers store (LMDB and SQLite), and
the JSON of a checkpoint's header that every durable driver stores with each save.

A message is a small header (role, is_error, and the byte lengths of its content, tool
call id and tool name, the number of its tool calls) followed by those fields: the texts
as UTF-8, as they are, and each tool call as three such texts (format 3; until format 2
the header was fixed and the tool calls JSON, see below). Messages concatenate into a stream that
:func:`decode_messages` splits again. JSON-escaping a long tool result would cost more
than the rest of a save; copying its UTF-8 costs next to nothing.

**Format version.** What this module writes carries :data:`FORMAT_VERSION`, and every
read checks it, so bytes written by a newer luoshod (a driver is released apart from the
luoshod it runs on, and several daemons may share one store) are refused with a
``StoreError`` naming both versions instead of being misread:

- a message, in the high four bits of its first byte (the low four are its role). Bytes
  written before the version existed have 0 there (roles are 0 to 3): they are format 0,
  laid out as format 1, and read as they are. Every message carries its own version, so a
  log begun by one release and extended by another reads message by message;
- a header, as its ``"format"`` key (none: format 0, the same layout again).

A change of layout raises :data:`FORMAT_VERSION`; a reader keeps reading every version up
to its own. Format 2 (sub-agents, R59) adds the message's *owner* after the fixed header
(four bytes): 0 for the lead's messages, ``K`` for a message of the task ``task_K``,
whose records share the session's log (:mod:`.tasklog`); role code 4 there is that
task's description (a :class:`TaskRecord` with ``meta``), not a message.

Format 3 writes each record with varints instead of a fixed header (a record's mark and
``is_error``, then owner, lengths and the number of tool calls as varints, 7 bytes for a
usual message instead of 18) and its tool calls as length-prefixed strings instead of
JSON (half the bytes of a usual call); the limits stay format 2's (a tool call id or name
of at most 65535 bytes). It also moves the agent spec and the fingerprint out of the
header (where every save and every history entry repeated them, often most of a header's
bytes) into the log: role code 5 (owner 0) is an :class:`AgentRecord`,
``{"agent":…,"fingerprint":…}`` as JSON, written by a save only when they changed since
the last one the log holds; a header of format 3 has neither key and means the last
agent record of its prefix (none: no agent). Its ``message_count`` is always there (the
log holds more than the lead's messages), and keys at their default value are left out
(``decisions``, ``queued_input``, ``history_limit``, ``approval_id``, ``finish_reason``,
``business_state_json``, ``run_start``; ``total_usage`` when equal to ``usage``; a
usage's zero counts), which :func:`decode_header` puts back. A reader of format 2 refuses
these records and headers by name (a newer format), as the version mark is there for.

**Compact headers (format 4).** The drivers that store bytes (SQLite, LMDB) store a
header in its compact form (:func:`compact_header`): a byte JSON never starts with,
:data:`COMPACT_HEADER` (0x00), a byte naming a dictionary (:data:`HEADER_DICTIONARIES`),
then the header's JSON as raw deflate with that preset dictionary — a header's keys
and structure, so that the bytes of a header are mostly its values (about 240 bytes
instead of 860 for a header of a session with sub-agents). The JSON inside is the
header's JSON as it is, so the format version and the dictionary are independent: a later
luoshod may add a better dictionary under a new id and still read every id before it,
and an id this luoshod does not know is refused like a newer format. Format 4 is format 3
with headers that may be compact: its records are laid out as format 3's, and a store's
mark of format 4 makes a luoshod of format 3, which would misread a compact header,
refuse the store at open by name instead.

**Per-turn usage (format 5).** An assistant turn records the model that produced it and
that call's usage (``Message.model``, ``Message.usage``). A record of format 5 whose
``is_error`` byte has bit 1 (``0x02``) set carries them after its tool calls: the model
as a length-prefixed string, a varint ``k`` (0: no usage; else the number of counts),
``k`` varints (prompt, completion, total tokens, model calls, cached input, cache write,
reasoning tokens) and, when ``k`` > 0, the cost as an 8-byte big-endian double. Bit 0 is
``is_error`` as before; records without the bit are laid out as format 3's.

**Pinned messages (format 6).** Bit 3 (``0x08``) of a record's ``is_error`` byte marks a
pinned message (``Message.pinned``, R85); it adds no bytes to the record.
:func:`decode_header` reads JSON text, JSON bytes and the compact form alike, so a store
keeps reading the JSON headers it held before (rows of both forms may sit side by
side). PostgreSQL keeps the JSON, in a ``json`` column an operator can query.

**Reasoning (format 6).** An assistant turn keeps the reasoning blocks its model sent
(``Message.reasoning``, R84). A record of format 6 whose ``is_error`` byte has bit 2
(``0x04``) set carries them last: a varint count, then per block three length-prefixed
strings (the provider kind, the block's JSON as received, its readable text). The
block's JSON is copied as UTF-8, as it is, so a signature or an encrypted item goes back
to the provider byte for byte.
"""

from __future__ import annotations

import json
import struct
import threading
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

from ...domain import (
    AgentSpec,
    Checkpoint,
    FinishReason,
    HistoryEntry,
    Message,
    ReasoningBlock,
    Role,
    SessionSummary,
    Status,
    SubTask,
    ToolCall,
    Usage,
    drift_of,
)
from ...errors import NEWER_LUOSHOD, StoreError

#: The version of the bytes this codec writes, and the newest it reads (see above).
FORMAT_VERSION = 6

_HEADER = struct.Struct(">BBIHHI")  # formats 0 to 2
_OWNER = struct.Struct(">I")  # format 2: after the header
_MARK = FORMAT_VERSION << 4  # a message's first byte: its format, then its role
_ROLES = (Role.SYSTEM, Role.USER, Role.ASSISTANT, Role.TOOL)
_ROLE_CODES = {role: code for code, role in enumerate(_ROLES)}
_META = 4  # format 2, owned: the task's description
_AGENT = 5  # format 3, the lead's: the agent spec and fingerprint (an AgentRecord)
_TURN_META = 0x02  # format 5, in the is_error byte: the turn's model and usage follow
_REASONING = 0x04  # format 6, in the is_error byte: the turn's reasoning blocks follow
_PINNED = 0x08  # format 6, in the is_error byte: a pinned message (R85)
_COST = struct.Struct(">d")


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """A record of a session's log that belongs to a task (format 2): one of its messages,
    or (``message`` ``None``) its description ``meta`` (JSON: task id, name, depth,
    path), written once before its first message."""

    owner: int
    message: Message | None
    meta: str = ""


@dataclass(frozen=True, slots=True)
class AgentRecord:
    """A record of a session's log (format 3) holding the agent spec and fingerprint of
    the saves after it, until the next one: ``text`` is ``{"agent":…,"fingerprint":…}``."""

    text: str


#: What a log holds: the lead's messages, its tasks' records, and agent records.
LogRecord = Message | TaskRecord | AgentRecord


def owner_of(task_id: str) -> int:
    """The owner number of a task's records: ``K`` of ``task_K``. Raises ``ValueError``
    for an id of another form (the engine names every task so)."""
    prefix, _, number = task_id.partition("_")
    if prefix != "task" or not number.isdigit() or int(number) < 1:
        raise ValueError(f"a task id is task_<K> with K >= 1, got {task_id!r}")
    return int(number)


# Built once: ``json.dumps`` with options builds a new encoder on every call.
_JSON = json.JSONEncoder(separators=(",", ":"))
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
# And below it, ``JSONEncoder.encode`` builds a new C encoder on every call (half the cost
# of a header's JSON): this one is built once, with ``_COMPACT``'s options and without
# the circular-reference check (a header is a tree of fresh dicts and lists), so it keeps
# no state between calls and any thread may use it. The same text as ``_COMPACT.encode``.
_C_COMPACT = (
    c_make_encoder(None, _COMPACT.default, encode_basestring, None, ":", ",", False, False, True)
    if c_make_encoder is not None
    else None
)


def encode_json(value: Any) -> str:
    """Compact JSON, non-ASCII as it is: how the durable drivers store headers and approvals."""
    if _C_COMPACT is None or isinstance(value, str):
        return _COMPACT.encode(value)
    return "".join(_C_COMPACT(value, 0))


def encode_header(cp: Checkpoint, header: dict[str, Any] | None = None) -> str:
    """``cp.header_dict()`` as compact JSON.

    The agent spec (instructions, tool schemas, model settings: often most of the header)
    is the same object save after save of a run, so its JSON is encoded once and kept
    (:func:`_agent_json`) rather than encoded again on every save. ``header``:
    ``cp.header_dict(with_agent=False, with_tasks=False)`` when the caller has it already
    (it is changed here).
    """
    text = encode_json(_header_of(cp, header))
    return f'{{"format":{FORMAT_VERSION},{text[1:]}'


#: The first byte of a compact header (:func:`compact_header`): JSON, as text or UTF-8,
#: never starts with it.
COMPACT_HEADER = 0x00

#: Header dictionary 1: a header's keys and structure in the order a header has them
#: (the rare keys first, the usual ones last, nearest to the header's own bytes).
#: FROZEN since its release: headers compressed with it can only be read with these
#: exact bytes. A better dictionary is a new id in :data:`HEADER_DICTIONARIES`, never an
#: edit of this one.
_HEADER_DICTIONARY_1 = (
    b'"decisions":{"":{"approved":false,"note":"","expired":true}},"queued_input":[{"role"'
    b':"user","content":"","tool_calls":[{"id":"","name":"","arguments":"{}"}],"tool_call_id"'
    b':"","tool_name":"","is_error":true}],"history_limit":0,"last_drift":{"model_from":"",'
    b'"model_to":"","tools_added":[""],"tools_removed":[""],"tools_changed":[""],'
    b'"instructions_changed":false},"retention_s":0.0,"status":"awaiting-approval",'
    b'"approval_id":"","finish_reason":"max_steps","finish_reason":"aborted",'
    b'"business_state_json":"{}",{"format":4,"session_id":"","step_index":0,"usage":'
    b'{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0,"model_calls":0,"cost_usd"'
    b':0.0},"total_usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0,'
    b'"model_calls":0,"cost_usd":0.0},"status":"finished","finish_reason":"stop","status":'
    b'"in-progress","run_id":"","run_start":0,"updated_at":1700000000.0,"version":0,'
    b'"last_seq":0,"run_requests":[{"id":"","digest":"","run_id":"","first_seq":1}],'
    b'"subtasks":{"call_":{"name":"","task_id":"task_","depth":2,"path":["",""],'
    b'"step_index":0,"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0,'
    b'"model_calls":0},"fingerprint":null}},"subtasks":{"call_":{"name":"","task_id":"task_"'
    b',"depth":1,"path":[""],"step_index":0,"usage":{"prompt_tokens":0,"completion_tokens"'
    b':0,"total_tokens":0,"model_calls":0},"fingerprint":{"hash":"","model":"",'
    b'"tool_schema_hashes":{"":""},"instructions_hash":"e3b0c44298fc1c14"},"children":'
    b'{"call_"fingerprint":{"hash":"","model":"","tool_schema_hashes":{"":""},'
    b'"instructions_hash":"e3b0c44298fc1c14"}}},"delegated_usage":{"prompt_tokens":0,'
    b'"completion_tokens":0,"total_tokens":0,"model_calls":0},"task_count":0,'
    b'"message_count":0}'
)

#: Dictionary id -> the preset dictionary of the compact headers naming it. Ids are
#: never reused nor their bytes changed (see :data:`_HEADER_DICTIONARY_1`).
HEADER_DICTIONARIES: dict[int, bytes] = {1: _HEADER_DICTIONARY_1}
#: The dictionary :func:`compact_header` writes with.
HEADER_DICTIONARY = 1
# Raw deflate (no zlib header or checksum: the store's pages have their own). A 4 kB
# window (the dictionary and a usual header fit in it) and a small hash table (memLevel
# 4) make a compressor about 24 kB to set up instead of the defaults' 256 kB, several
# times cheaper, for the same bytes on headers of a few kB. Any window up to 32 kB reads
# back with the reader's (-15), so these may change without a new dictionary id.
_DEFLATE = (9, zlib.DEFLATED, -12, 4, zlib.Z_DEFAULT_STRATEGY)
_COMPACT_PREFIX = bytes((COMPACT_HEADER, HEADER_DICTIONARY))


#: A compressor already primed with the dictionary: each header's is a copy of it (a
#: copy is cheaper than setting up a compressor and loading the dictionary, which hashes
#: all its bytes, on the caller's side of every save; the bytes are the same). Never fed
#: itself, so any thread may copy it.
_PRIMED = zlib.compressobj(*_DEFLATE, HEADER_DICTIONARIES[HEADER_DICTIONARY])


def compact_header(text: str) -> bytes:
    """The compact form of a header's JSON ``text`` (as :func:`encode_header` writes it):
    :data:`COMPACT_HEADER`, the dictionary's id, then raw deflate with that dictionary.
    :func:`decode_header` reads it."""
    c = _PRIMED.copy()
    return b"".join((_COMPACT_PREFIX, c.compress(text.encode()), c.flush()))


def encode_compact_header(cp: Checkpoint, header: dict[str, Any] | None = None) -> bytes:
    """The header of ``cp`` in its compact form (:func:`compact_header`), as the drivers
    that store bytes keep it. ``header``: as :func:`encode_header` takes it."""
    return compact_header(encode_header(cp, header))


def header_json(data: str | bytes) -> str:
    """A stored header as its JSON text, whichever form it is stored in (what an operator
    is shown). Raises like :func:`decode_header`."""
    if isinstance(data, str):
        return data
    return _inflate(data).decode() if data[:1] == _COMPACT_BYTE else bytes(data).decode()


_COMPACT_BYTE = bytes((COMPACT_HEADER,))
_HEADER_DICTIONARIES_TEXT = ", ".join(map(str, sorted(HEADER_DICTIONARIES)))


def _inflate(data: bytes) -> bytes:
    """The JSON of a compact header (UTF-8). Raises ``StoreError`` for a dictionary this
    luoshod does not know (a newer one's), ``ValueError`` for bytes that are not a whole
    compact header."""
    if len(data) < 2:
        raise ValueError("not a checkpoint header: a compact header without its dictionary id")
    zdict = HEADER_DICTIONARIES.get(data[1])
    if zdict is None:
        raise newer_format(
            data[1],
            "a checkpoint header",
            unit="header dictionary",
            known=_HEADER_DICTIONARIES_TEXT,
        )
    d = zlib.decompressobj(-15, zdict)
    try:
        out = d.decompress(memoryview(data)[2:]) + d.flush()
    except zlib.error as e:
        raise ValueError(f"not a compact checkpoint header: {e}") from e
    if not d.eof or d.unused_data:
        raise ValueError("not a compact checkpoint header: truncated or followed by other bytes")
    return out


#: Header keys left out at these values (format 3); a read puts them back.
_DEFAULTS: dict[str, Any] = {
    "decisions": {},
    "queued_input": [],
    "history_limit": None,
    "approval_id": "",
    "finish_reason": "",
    "business_state_json": "null",
    "run_start": 0,
}


def _header_of(cp: Checkpoint, h: dict[str, Any] | None = None) -> dict[str, Any]:
    """The header dict of ``cp`` without its agent and fingerprint (an agent record of
    the log, :func:`agent_text`), without the tasks' transcripts, which its log holds,
    without keys at their default, and its usages without their zero counts; it says
    how many of the log's records are the lead's. ``h``: ``cp.header_dict(with_agent=False,
    with_tasks=False)`` when the caller has it already (changed here)."""
    if h is None:
        h = cp.header_dict(with_agent=False, with_tasks=False)
    del h["fingerprint"]
    for key, default in _DEFAULTS_ITEMS:
        if h[key] == default:
            del h[key]
    if h["total_usage"] == h["usage"]:
        del h["total_usage"]
    _lean_usages(h)
    h["message_count"] = len(cp.messages)
    return h


_DEFAULTS_ITEMS = tuple(_DEFAULTS.items())


def _lean_usages(d: dict[str, Any]) -> None:
    """Leave the zero counts out of the usages of ``d`` and of its tasks (``Usage``
    reads a missing count as 0)."""
    for key in ("usage", "total_usage", "delegated_usage"):
        if (usage := d.get(key)) is not None:
            d[key] = {k: v for k, v in usage.items() if v}
    if tasks := d.get("subtasks"):
        for task in tasks.values():
            _lean_usages(task)
    if tasks := d.get("children"):
        for task in tasks.values():
            _lean_usages(task)


#: The agent text of a checkpoint with neither agent nor fingerprint: what a log without
#: agent records means.
NO_AGENT = '{"agent":null,"fingerprint":null}'


def agent_text(cp: Checkpoint) -> str:
    """The text of ``cp``'s agent record: its agent spec and fingerprint as JSON (the
    spec's JSON cached, :func:`_agent_json`)."""
    fingerprint = encode_json(cp.fingerprint.to_dict()) if cp.fingerprint else "null"
    return f'{{"agent":{_agent_json(cp.agent)},"fingerprint":{fingerprint}}}'


def agent_spec_json(agent: AgentSpec | None) -> str:
    """The JSON of an agent spec (``null`` for none), cached by the spec's value."""
    return _agent_json(agent)


def with_agent(h: dict[str, Any], text: str) -> dict[str, Any]:
    """Header ``h`` of any format (:func:`decode_header`) made whole for
    :meth:`Checkpoint.from_header`: the agent and fingerprint taken from ``text`` (the
    last agent record of its prefix) unless it has its own (formats 0 to 2)."""
    if "agent" not in h:
        h.update(json.loads(text or NO_AGENT))
    return h


def decode_header(data: str | bytes) -> dict[str, Any]:
    """A header's dict (:meth:`Checkpoint.from_header` takes it), as written by
    :func:`encode_header` in this format or an older one, as JSON (text or bytes) or in
    the compact form (:func:`compact_header`). Raises ``StoreError`` for a header of a
    newer format or dictionary, ``ValueError`` for one that is neither JSON nor compact."""
    if not isinstance(data, str) and data[:1] == _COMPACT_BYTE:
        data = _inflate(data)
    h: dict[str, Any] = json.loads(data)
    found = h.pop("format", 0)
    if not (isinstance(found, int) and 0 <= found <= FORMAT_VERSION):
        raise newer_format(found, "a checkpoint header")
    for key, default in _DEFAULTS.items():  # format 3 leaves them out
        if key not in h:
            h[key] = type(default)() if isinstance(default, dict | list) else default
    if "total_usage" not in h:
        h["total_usage"] = h["usage"]
    return h


def decode_checkpoint(header: str | bytes, records: Sequence[LogRecord]) -> Checkpoint:
    """The checkpoint of a stored header over its log prefix ``records`` (see
    :func:`decode_header`, :func:`checkpoint_of`)."""
    return checkpoint_of(decode_header(header), records)


def checkpoint_of(h: dict[str, Any], records: Sequence[LogRecord]) -> Checkpoint:
    """The checkpoint of a decoded header over its log prefix ``records`` (the log of
    :mod:`.tasklog`): the lead's messages, its agent and fingerprint (the prefix's last
    agent record, or in a header older than format 3, the header's own), each unfinished
    task's transcript from its records (or, in a header older than format 2, from the
    header itself), and the finished tasks (those of the log that are not unfinished).
    Each task's ``stored`` is what the log holds of it, ``stored_agent`` what it holds of
    the agent."""
    lead = []
    metas: dict[int, dict[str, Any]] = {}
    owned: dict[int, list[Any]] = {}
    agents, text = 0, ""
    for r in records:
        if isinstance(r, AgentRecord):
            agents, text = agents + 1, r.text
        elif not isinstance(r, TaskRecord):
            lead.append(r)
        elif r.message is None:
            metas[r.owner] = json.loads(r.meta)
        else:
            owned.setdefault(r.owner, []).append(r.message)
    cp = Checkpoint.from_header(with_agent(h, text), lead)
    cp.stored_agent = (agents, text)
    if not metas:
        return cp
    live: set[int] = set()
    for task in cp.all_tasks():  # the unfinished ones: the header has no finished ones
        k = owner_of(task.task_id)
        live.add(k)
        if k in metas:  # else an older header's: its transcript is inline, not stored
            task.messages = owned.get(k, [])
            task.stored = len(task.messages)
    for k, meta in metas.items():
        if k in live:
            continue
        messages = owned.get(k, [])
        done = SubTask(
            meta["name"],
            meta["task_id"],
            meta["depth"],
            tuple(meta["path"]),
            messages,
            stored=len(messages),
        )
        cp.tasks[done.task_id] = done.end()
    return cp


def decode_summary(header: str | bytes, message_count: int) -> SessionSummary:
    """The session summary of a stored header over a log of ``message_count`` records
    (see :func:`decode_header`): a log that holds tasks' records too says in its header
    how many are the lead's."""
    h = decode_header(header)
    return SessionSummary(
        h["session_id"],
        Status(h["status"]),
        FinishReason(h["finish_reason"]),
        h["step_index"],
        h.get("message_count", message_count),
        h["approval_id"],
        h["updated_at"],
        drift_of(h),
        Usage.from_dict(h["total_usage"]),
        h["sleep"]["wake_at"] if "sleep" in h and h["status"] == "sleeping" else None,
    )


#: A history row as the SQL drivers read it: step, saved_at, status, log id, message
#: count, header.
HistoryRow = tuple[int, float, str, int, int, "str | bytes"]


def longest_prefixes(rows: Sequence[HistoryRow]) -> dict[int, int]:
    """Log → the most messages any of ``rows`` reads of it: entries share logs, so each is
    read once, that far."""
    longest: dict[int, int] = {}
    for *_, log_id, count, _header in rows:
        longest[log_id] = max(count, longest.get(log_id, 0))
    return longest


def decode_history(
    rows: Sequence[HistoryRow], logs: dict[int, list[LogRecord]]
) -> list[HistoryEntry]:
    """The entries of ``rows``, each over its prefix of ``logs`` (log id → messages)."""
    return [
        HistoryEntry(
            step, saved_at, Status(status), decode_checkpoint(header, logs[log_id][:count])
        )
        for step, saved_at, status, log_id, count, header in rows
    ]


def newer_format(found: object, what: str, *, unit: str = "", known: str = "") -> StoreError:
    """The error of bytes in a format this luoshod cannot read: a store format past
    :data:`FORMAT_VERSION`, or (``unit`` "header dictionary", ``known`` the ids it
    knows) a compact header's dictionary it does not know."""
    if unit:
        return StoreError(
            f"{what} in the store is compressed with {unit} {found}, and this luoshod knows "
            f"{unit} {known}: it was written by a newer luoshod; upgrade this one (and its "
            "drivers) to read it",
            found_header_dictionary=found,
            supported_header_dictionaries=known,
            written_by=NEWER_LUOSHOD,
        )
    return StoreError(
        f"{what} in the store is in store format {found}, and this luoshod reads store "
        f"formats up to {FORMAT_VERSION}: it was written by a newer luoshod; upgrade this "
        "one (and its drivers) to read it",
        found_format=found,
        supported_format=FORMAT_VERSION,
        written_by=NEWER_LUOSHOD,
    )


#: spec -> its JSON, oldest first. Keyed by the spec's value, not its identity: the runs
#: of one agent each decode their own equal spec from their request, and thousands of
#: them running at once made an identity-keyed cache of 1,024 miss on every save.
#: Bounded in entries and in JSON characters (a spec can carry long instructions and tool
#: schemas): past either bound the oldest entries go.
_AGENTS: dict[AgentSpec, str] = {}
_AGENTS_MAX = 1024
_AGENTS_MAX_CHARS = 4 << 20
_agents_chars = 0
_AGENTS_LOCK = threading.Lock()  # the drivers' database threads encode headers too


def _agent_json(agent: AgentSpec | None) -> str:
    global _agents_chars
    if agent is None:
        return "null"
    try:
        hit = _AGENTS.get(agent)
    except TypeError:  # a spec that cannot be hashed is encoded every time
        return _COMPACT.encode(agent.to_dict())
    if hit is not None:
        return hit
    text = _COMPACT.encode(agent.to_dict())
    with _AGENTS_LOCK:
        while _AGENTS and (
            len(_AGENTS) >= _AGENTS_MAX or _agents_chars + len(text) > _AGENTS_MAX_CHARS
        ):
            dropped = _AGENTS.pop(next(iter(_AGENTS)))  # the oldest
            _agents_chars -= len(dropped)
        if len(text) <= _AGENTS_MAX_CHARS and agent not in _AGENTS:
            _AGENTS[agent] = text
            _agents_chars += len(text)
    return text


#: The limits of a record's fields, as format 2's fixed header had them: a longer tool
#: call id or tool name is refused (the request checks keep them far under).
_MAX_SHORT = 0xFFFF
_MAX_LONG = 0xFFFFFFFF
# Varints of 0 to 127, the usual lengths and owners, built once.
_SMALL = [bytes((n,)) for n in range(0x80)]


def varint(n: int) -> bytes:
    """``n`` (>= 0) as a little-endian base-128 varint, as records and event blocks write it."""
    if n < 0x80:
        return _SMALL[n]
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def read_varint(stream: bytes, offset: int) -> tuple[int, int]:
    """The varint at ``offset`` and the offset after it. Raises ``IndexError`` when the
    stream ends inside it."""
    byte = stream[offset]
    if byte < 0x80:
        return byte, offset + 1
    n, shift = 0, 0
    while True:
        byte = stream[offset]
        offset += 1
        n |= (byte & 0x7F) << shift
        if byte < 0x80:
            return n, offset
        shift += 7


def _check(n: int, limit: int, what: str) -> int:
    if n > limit:
        raise ValueError(f"a message's {what} of {n} bytes is over the store's {limit}")
    return n


def encode_message(m: Message, owner: int = 0) -> bytes:
    """One record: a message of the lead (``owner`` 0) or of the task ``task_<owner>``.

    Format 3: its mark (format and role), ``is_error``, then varints (owner, the byte
    lengths of content, tool call id and tool name, the number of tool calls), those
    fields, and each tool call as three length-prefixed strings (id, name, arguments)."""
    content = m.content.encode()
    call_id = m.tool_call_id.encode()
    name = m.tool_name.encode()
    _check(len(content), _MAX_LONG, "content")
    _check(len(call_id), _MAX_SHORT, "tool call id")
    _check(len(name), _MAX_SHORT, "tool name")
    meta = bool(m.model) or m.usage is not None
    flags = (
        m.is_error
        | (_TURN_META if meta else 0)
        | (_REASONING if m.reasoning else 0)
        | (_PINNED if m.pinned else 0)
    )
    if not (meta or m.tool_calls or m.reasoning) and owner | len(call_id) | len(name) < 0x80:
        # Most records (a user's input, a tool's result, a turn saved without its model):
        # the same bytes as below, with the one-byte varints spelled out.
        return b"".join(
            (
                bytes((_MARK | _ROLE_CODES[m.role], flags, owner)),
                varint(len(content)),
                bytes((len(call_id), len(name), 0)),
                content,
                call_id,
                name,
            )
        )
    parts = [
        bytes((_MARK | _ROLE_CODES[m.role], flags)),
        varint(owner),
        varint(len(content)),
        varint(len(call_id)),
        varint(len(name)),
        varint(len(m.tool_calls)),
        content,
        call_id,
        name,
    ]
    for c in m.tool_calls:
        for text in (c.id, c.name, c.arguments_json):
            b = text.encode()
            parts += (varint(len(b)), b)
    if meta:
        model = m.model.encode()
        parts += (varint(len(model)), model)
        u = m.usage
        if u is None:
            parts.append(varint(0))
        else:
            counts = (
                u.prompt_tokens,
                u.completion_tokens,
                u.total_tokens,
                u.model_calls,
                u.cached_input_tokens,
                u.cache_write_tokens,
                u.reasoning_tokens,
            )
            parts.append(varint(len(counts)))
            parts += [varint(max(0, n)) for n in counts]
            parts.append(_COST.pack(u.cost_usd))
    if m.reasoning:
        parts.append(varint(len(m.reasoning)))
        for block in m.reasoning:
            for text in (block.provider, block.raw_json, block.text):
                b = text.encode()
                parts += (varint(len(b)), b)
    return b"".join(parts)


def _decode_reasoning(stream: bytes, offset: int) -> tuple[tuple[ReasoningBlock, ...], int]:
    """A format 6 turn's reasoning blocks at ``offset``, and the offset after them."""
    count, offset = read_varint(stream, offset)
    blocks = []
    for _ in range(count):
        texts = []
        for _ in range(3):
            n, offset = read_varint(stream, offset)
            if offset + n > len(stream):
                raise IndexError("a reasoning block past the end")
            texts.append(stream[offset : offset + n].decode())
            offset += n
        blocks.append(ReasoningBlock(*texts))
    return tuple(blocks), offset


def _decode_turn_meta(stream: bytes, offset: int) -> tuple[str, Usage | None, int]:
    """A format 5 turn's model and usage at ``offset``, and the offset after them."""
    n, offset = read_varint(stream, offset)
    if offset + n > len(stream):
        raise IndexError("a model past the end")
    model = stream[offset : offset + n].decode()
    offset += n
    k, offset = read_varint(stream, offset)
    if not k:
        return model, None, offset
    counts = []
    for _ in range(k):
        c, offset = read_varint(stream, offset)
        counts.append(c)
    counts += [0] * (7 - len(counts))
    (cost,) = _COST.unpack_from(stream, offset)
    usage = Usage(counts[0], counts[1], counts[2], counts[3], cost, counts[4], counts[5], counts[6])
    return model, usage, offset + _COST.size


def _record(kind: int, owner: int, body: bytes) -> bytes:
    return b"".join((bytes((_MARK | kind, 0)), varint(owner), varint(len(body)), b"\0\0\0", body))


def encode_agent(text: str) -> bytes:
    """The agent record of ``text`` (:func:`agent_text`)."""
    return _record(_AGENT, 0, text.encode())


def is_agent(body: bytes) -> bool:
    """Whether an encoded record is an agent record."""
    return body[0] & 0x0F == _AGENT and body[0] >> 4 >= 3  # format 3 on


def encode_task_meta(owner: int, meta: str) -> bytes:
    """The description record of the task ``task_<owner>`` (``meta``: its JSON)."""
    return _record(_META, owner, meta.encode())


def encode_messages(messages: Sequence[Message]) -> bytes:
    """The stream of ``messages``, one after the other."""
    return b"".join(encode_message(m) for m in messages)


def decode_messages(stream: bytes) -> list[LogRecord]:
    """The records of a stream (or of one encoded message), of any format up to
    :data:`FORMAT_VERSION`, each read in its own: the lead's messages as they are, the
    tasks' records as :class:`TaskRecord` (none in a log without sub-agents), agent
    records as :class:`AgentRecord`. Raises ``StoreError`` for a message of a newer
    format, ``ValueError`` for bytes that are not a whole number of messages."""
    messages: list[LogRecord] = []
    offset, end = 0, len(stream)
    view = memoryview(stream)
    try:
        while offset < end:
            mark = stream[offset]
            if mark > _MARK | 0x0F:
                raise newer_format(mark >> 4, "a message")
            if mark >> 4 < 3:
                offset = _decode_v2(stream, view, offset, messages)
                continue
            role, is_error = mark & 0x0F, stream[offset + 1]
            owner, offset = read_varint(stream, offset + 2)
            n_content, offset = read_varint(stream, offset)
            n_id, offset = read_varint(stream, offset)
            n_name, offset = read_varint(stream, offset)
            n_calls, offset = read_varint(stream, offset)
            fields = []
            for n in (n_content, n_id, n_name):
                if offset + n > end:
                    raise IndexError("a field past the end")
                fields.append(str(view[offset : offset + n], "utf-8"))
                offset += n
            if role == _META and owner:
                messages.append(TaskRecord(owner, None, fields[0]))
                continue
            if role == _AGENT:
                messages.append(AgentRecord(fields[0]))
                continue
            calls = []
            for _ in range(n_calls):
                texts = []
                for _ in range(3):
                    n, offset = read_varint(stream, offset)
                    if offset + n > end:
                        raise IndexError("a tool call past the end")
                    texts.append(str(view[offset : offset + n], "utf-8"))
                    offset += n
                calls.append(ToolCall(*texts))
            if mark >> 4 >= 5:
                model, usage = "", None
                if is_error & _TURN_META:
                    model, usage, offset = _decode_turn_meta(stream, offset)
                reasoning: tuple[ReasoningBlock, ...] = ()
                if is_error & _REASONING and mark >> 4 >= 6:
                    reasoning, offset = _decode_reasoning(stream, offset)
                m = Message(
                    _ROLES[role],
                    fields[0],
                    tuple(calls),
                    fields[1],
                    fields[2],
                    bool(is_error & 1),
                    model,
                    usage,
                    reasoning,
                    bool(is_error & _PINNED and mark >> 4 >= 6),
                )
            else:
                m = Message(
                    _ROLES[role], fields[0], tuple(calls), fields[1], fields[2], bool(is_error)
                )
            messages.append(TaskRecord(owner, m) if owner else m)
    except (struct.error, IndexError, UnicodeDecodeError) as e:
        raise ValueError(f"not an encoded message stream: {e}") from e
    if offset != end:
        raise ValueError("not an encoded message stream: truncated")
    return messages


def _decode_v2(stream: bytes, view: memoryview, offset: int, messages: list[LogRecord]) -> int:
    """Read one record of formats 0 to 2 (a fixed header) at ``offset`` into
    ``messages``; return the offset after it."""
    mark, is_error, n_content, n_id, n_name, n_calls = _HEADER.unpack_from(stream, offset)
    role = mark & 0x0F
    offset += _HEADER.size
    owner = 0
    if mark >> 4 >= 2:
        (owner,) = _OWNER.unpack_from(stream, offset)
        offset += _OWNER.size
    fields = []
    for n in (n_content, n_id, n_name):
        if offset + n > len(stream):
            raise IndexError("a field past the end")
        fields.append(str(view[offset : offset + n], "utf-8"))
        offset += n
    if role == _META and owner:
        messages.append(TaskRecord(owner, None, fields[0]))
        return offset
    calls = json.loads(stream[offset : offset + n_calls]) if n_calls else ()
    offset += n_calls
    m = Message(
        _ROLES[role],
        fields[0],
        tuple(ToolCall.from_dict(c) for c in calls),
        fields[1],
        fields[2],
        bool(is_error),
    )
    messages.append(TaskRecord(owner, m) if owner else m)
    return offset
