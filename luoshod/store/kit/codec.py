"""The binary form of a message that the embedded drivers store (LMDB and SQLite), and
the JSON of a checkpoint's header that every durable driver stores with each save.

A message is a fixed header (role, is_error, and the byte lengths of its content, tool
call id, tool name and tool calls) followed by those fields: the texts as UTF-8, as they
are, and the tool calls as JSON. Messages concatenate into a stream that
:func:`decode_messages` splits again. JSON-escaping a long tool result would cost more
than the rest of a save; copying its UTF-8 costs next to nothing.
"""

from __future__ import annotations

import json
import struct
import threading
from collections.abc import Sequence
from typing import Any

from ...domain import AgentSpec, Checkpoint, Message, Role, ToolCall

_HEADER = struct.Struct(">BBIHHI")
_ROLES = (Role.SYSTEM, Role.USER, Role.ASSISTANT, Role.TOOL)
_ROLE_CODES = {role: code for code, role in enumerate(_ROLES)}
# Built once: ``json.dumps`` with options builds a new encoder on every call.
_JSON = json.JSONEncoder(separators=(",", ":"))
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def encode_json(value: Any) -> str:
    """Compact JSON, non-ASCII as it is: how the durable drivers store headers and approvals."""
    return _COMPACT.encode(value)


def encode_header(cp: Checkpoint) -> str:
    """``cp.header_dict()`` as compact JSON.

    The agent spec (instructions, tool schemas, model settings: often most of the header)
    is the same object save after save of a run, so its JSON is encoded once and kept
    (:func:`_agent_json`) rather than encoded again on every save.
    """
    text = _COMPACT.encode(cp.header_dict(with_agent=False))
    return f'{text[:-1]},"agent":{_agent_json(cp.agent)}}}'


#: id(spec) -> (spec, its JSON), oldest first; the spec is held, so its id is not reused
#: meanwhile. Bounded in entries and in JSON characters (a spec can carry long
#: instructions and tool schemas): past either bound the oldest entries go.
_AGENTS: dict[int, tuple[AgentSpec, str]] = {}
_AGENTS_MAX = 1024
_AGENTS_MAX_CHARS = 4 << 20
_agents_chars = 0
_AGENTS_LOCK = threading.Lock()  # the drivers' database threads encode headers too


def _agent_json(agent: AgentSpec | None) -> str:
    global _agents_chars
    if agent is None:
        return "null"
    hit = _AGENTS.get(id(agent))
    if hit is not None and hit[0] is agent:
        return hit[1]
    text = _COMPACT.encode(agent.to_dict())
    with _AGENTS_LOCK:
        while _AGENTS and (
            len(_AGENTS) >= _AGENTS_MAX or _agents_chars + len(text) > _AGENTS_MAX_CHARS
        ):
            _, dropped = _AGENTS.pop(next(iter(_AGENTS)))  # the oldest
            _agents_chars -= len(dropped)
        if len(text) <= _AGENTS_MAX_CHARS and id(agent) not in _AGENTS:
            _AGENTS[id(agent)] = (agent, text)
            _agents_chars += len(text)
    return text


def encode_message(m: Message) -> bytes:
    content = m.content.encode()
    call_id = m.tool_call_id.encode()
    name = m.tool_name.encode()
    calls = (
        _JSON.encode([c.to_dict() for c in m.tool_calls]).encode()
        if m.tool_calls
        else b""
    )
    head = _HEADER.pack(
        _ROLE_CODES[m.role], m.is_error, len(content), len(call_id), len(name), len(calls)
    )
    return b"".join((head, content, call_id, name, calls))


def encode_messages(messages: Sequence[Message]) -> bytes:
    """The stream of ``messages``, one after the other."""
    return b"".join(encode_message(m) for m in messages)


def decode_messages(stream: bytes) -> list[Message]:
    """The messages of a stream (or of one encoded message). Raises ``ValueError`` for
    bytes that are not a whole number of messages."""
    messages = []
    offset, end = 0, len(stream)
    view = memoryview(stream)
    try:
        while offset < end:
            role, is_error, n_content, n_id, n_name, n_calls = _HEADER.unpack_from(stream, offset)
            offset += _HEADER.size
            fields = []
            for n in (n_content, n_id, n_name):
                fields.append(str(view[offset : offset + n], "utf-8"))
                offset += n
            calls = json.loads(stream[offset : offset + n_calls]) if n_calls else ()
            offset += n_calls
            messages.append(
                Message(
                    _ROLES[role],
                    fields[0],
                    tuple(ToolCall.from_dict(c) for c in calls),
                    fields[1],
                    fields[2],
                    bool(is_error),
                )
            )
    except (struct.error, IndexError, UnicodeDecodeError) as e:
        raise ValueError(f"not an encoded message stream: {e}") from e
    if offset != end:
        raise ValueError("not an encoded message stream: truncated")
    return messages
