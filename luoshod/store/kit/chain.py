"""R91: the hash chain over a session's saves.

Each save's header carries ``chain``, the hex SHA-256 of:

- the previous save's ``chain`` (``""`` for a session's first save, or for the first
  save after saves that recorded none; a fork's first save: the ``chain`` of the history
  entry it was forked from, which its header keeps as ``chain_from``);
- this save's header without ``chain`` (``Checkpoint.header_dict`` without the agent
  spec and the tasks' transcripts, as compact JSON), then its agent spec's JSON;
- the records this save adds to the session's log: the lead's new messages, then, task
  by task in task number order, each task's new messages, preceded by its description
  when they are its first.

A message's bytes are its owner, role, ``is_error`` (bit 1 set when the message records
its model or usage: an assistant turn's, then hashed after its tool calls as the model
and the usage's JSON; bit 2 set when it is pinned, R85), its texts and its tool calls.

So a save hashes only what it writes: O(new messages), like the save itself, never the
whole transcript. The encoding is this module's own (:data:`VERSION`), not the store's
format: a chain reads the same in every driver, and survives ``luoshod store copy``.
A save that starts a new log (``stored_messages`` 0: a rollback, a rewritten transcript,
a new session) adds all its records.

The writer is the store kit (:func:`link_save`, called by every save of the drivers
built on it and of the memory store); :mod:`luoshod.store.verify` recomputes each kept
save's link from its history entry and the entry before it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

from ...domain import AgentSpec, Checkpoint, Message, Role, SubTask
from . import codec
from .codec import owner_of

#: The version of what is hashed; a different encoding would be a new version.
VERSION = 1
_START = b"luoshod chain 1\n"
_ROLES = {Role.SYSTEM: 0, Role.USER: 1, Role.ASSISTANT: 2, Role.TOOL: 3}


def _text(out: list[bytes], text: str) -> None:
    b = text.encode()
    out += (codec.varint(len(b)), b)


def _message(out: list[bytes], m: Message, owner: int) -> None:
    meta = bool(m.model) or m.usage is not None
    flags = m.is_error | (2 if meta else 0) | (4 if m.pinned else 0)  # unpinned: as before
    # Spelled out (this runs for every new message of every save): what ``_text`` does
    # for the three texts.
    varint = codec.varint
    content, call_id, name = m.content.encode(), m.tool_call_id.encode(), m.tool_name.encode()
    if not (meta or m.tool_calls) and owner | len(call_id) | len(name) < 0x80:
        # The usual message: the same bytes as below, the one-byte varints spelled out.
        out += (
            bytes((owner, _ROLES[m.role], flags)),
            varint(len(content)),
            content,
            bytes((len(call_id),)),
            call_id,
            bytes((len(name),)),
            name,
            b"\0",
        )
        return
    out += (
        varint(owner),
        bytes((_ROLES[m.role], flags)),
        varint(len(content)),
        content,
        varint(len(call_id)),
        call_id,
        varint(len(name)),
        name,
        varint(len(m.tool_calls)),
    )
    for c in m.tool_calls:
        _text(out, c.id)
        _text(out, c.name)
        _text(out, c.arguments_json)
    if meta:  # an assistant turn's model and usage; a message without them hashes as before
        _text(out, m.model)
        _text(out, codec.encode_json(m.usage.to_dict() if m.usage is not None else None))


def _task_meta(out: list[bytes], task: SubTask, owner: int) -> None:
    out += (codec.varint(owner), b"\xff")  # not a role: the task's description
    meta = {"task_id": task.task_id, "name": task.name, "depth": task.depth}
    _text(out, codec.encode_json({**meta, "path": list(task.path)}))


def records(
    messages: Sequence[Message], tasks: Iterable[tuple[SubTask, int]], lead_base: int
) -> bytes:
    """The canonical bytes of the records a save adds: ``messages[lead_base:]``, then
    each task's messages past its base (``tasks``: (task, base) pairs), its description
    first when its base is 0, tasks in task number order."""
    out: list[bytes] = []
    for m in messages[lead_base:]:
        _message(out, m, 0)
    owned = [(owner_of(t.task_id), t, base) for t, base in tasks if len(t.messages) > base]
    for owner, task, base in sorted(owned, key=lambda x: x[0]):
        if not base:
            _task_meta(out, task, owner)
        for m in task.messages[base:]:
            _message(out, m, owner)
    return b"".join(out)


#: The last agent spec hashed and its JSON: a run's saves share one spec object, whose
#: JSON is then neither encoded nor looked up again (one entry, replaced whole: safe
#: from any thread).
_last_agent: tuple[AgentSpec | None, str] = (None, "null")


def _agent(agent: AgentSpec | None) -> str:
    global _last_agent
    last = _last_agent
    if agent is last[0]:
        return last[1]
    text = codec.agent_spec_json(agent)
    _last_agent = (agent, text)
    return text


def header_bytes(cp: Checkpoint, header: dict[str, Any] | None = None) -> bytes:
    """What a save's link hashes of its header: the header without ``chain`` and without
    what the records hold (with its fingerprint), then its agent spec. ``header``: that
    dict (``cp.header_dict(with_agent=False, with_tasks=False)`` without ``chain``) when
    the caller has it already."""
    if header is None:
        header = cp.header_dict(with_agent=False, with_tasks=False)
        header.pop("chain", None)
    return "\n".join((codec.encode_json(header), _agent(cp.agent))).encode()


def link(prev: str, header: bytes, added: bytes) -> str:
    """A save's ``chain``: the hex SHA-256 of the previous link, its header bytes
    (:func:`header_bytes`) and the records it adds (:func:`records`)."""
    h = hashlib.sha256(b"".join((_START, prev.encode(), b"\n", header, b"\n")))
    h.update(added)
    return h.hexdigest()


def link_save(cp: Checkpoint, stored_messages: int, header: dict[str, Any] | None = None) -> str:
    """The ``chain`` of a save of ``cp`` told that the store holds ``stored_messages`` of
    its messages (and each task's ``stored``): linked to ``cp.chain``, the link of the
    save ``cp`` was loaded from or last saved as (a fork's first save: ``chain_from``).
    The caller sets ``cp.chain`` to it for the save (and back when the save fails).
    ``header``: as :func:`header_bytes` takes it."""
    prev = cp.chain_from if cp.version == 1 and cp.chain_from else cp.chain
    if cp.version == 1 and not cp.chain_from:
        prev = ""  # a new session starts a chain
    tasks = [(t, t.stored if stored_messages else 0) for t in cp.all_tasks()]
    return link(prev, header_bytes(cp, header), records(cp.messages, tasks, stored_messages))
