"""Store format 3 (luoshod/store/kit/codec.py, tasklog.py): the agent spec and fingerprint
are a record of the session's log, written by a save only when they changed, so headers
(the latest and every history entry) no longer repeat them; a store written in format 2
(the agent inline in each header) still loads and resumes, its next save appending to
the old log. Driver-independent: the bytes a durable driver is handed (``prepare``, the
plan), and what it reads back (``decode_checkpoint``)."""

from __future__ import annotations

import asyncio
import json
import struct

from luoshod.domain import AgentSpec, Checkpoint, Fingerprint, Message, Role, ToolCall
from luoshod.store.kit import codec
from luoshod.store.kit.groupcommit import Queued
from luoshod.store.kit.importing import log_steps
from luoshod.store.kit.planning import Head, Stored, plan_batch
from luoshod.store.kit.prepared import PreparedSave, prepare

LONG = "be thorough " * 200


def lead(agent: AgentSpec | None = None) -> Checkpoint:
    return Checkpoint(
        "s",
        [Message(Role.USER, "hi")],
        version=1,
        agent=agent or AgentSpec("m", LONG),
        fingerprint=Fingerprint("h", "m", {}, "i"),
    )


def commit(p: PreparedSave, head: Head | None) -> None:
    """Plan ``p`` against ``head`` as a driver does, and note what the log then holds of
    the agent, as ``QueuedWrites.save`` does once committed."""
    stored = Stored(heads={p.session_id: head} if head else {})
    loop = asyncio.new_event_loop()
    try:
        plan_batch([Queued(p, loop.create_future())], stored)
    finally:
        loop.close()
    p.checkpoint.stored_agent = (p.outcome[-1], p.agent_text)


def log_of(*saves: PreparedSave) -> list[codec.LogRecord]:
    return codec.decode_messages(b"".join(b for p in saves for b in p.new_bodies))


def test_the_agent_is_written_once_and_headers_leave_it_out() -> None:
    cp = lead()
    first = prepare(cp, 0, 50)
    commit(first, None)
    assert isinstance(log_of(first)[0], codec.AgentRecord)
    cp.messages.append(Message(Role.ASSISTANT, "hello"))
    cp.version = 2
    second = prepare(cp, 1, 50)
    commit(second, Head(1, len(first.new_bodies)))
    # The second save appends its message alone; neither header holds the spec.
    assert log_of(second) == [Message(Role.ASSISTANT, "hello")]
    for p in (first, second):
        h = json.loads(p.header)
        assert h["format"] == codec.FORMAT_VERSION and "agent" not in h and "fingerprint" not in h
        assert LONG not in p.header and len(p.header) < 500
    loaded = codec.decode_checkpoint(second.header, log_of(first, second))
    assert loaded == cp and loaded.agent == cp.agent and loaded.fingerprint == cp.fingerprint
    assert loaded.stored_agent == (1, first.agent_text)
    # A save of the loaded checkpoint appends to the same log, with no agent record.
    loaded.version = 3
    third = prepare(loaded, 2, 50)
    assert third.stored_log == 3 and third.new_bodies == []


def test_a_changed_agent_is_a_new_record_and_each_moment_reads_its_own() -> None:
    cp = lead()
    first = prepare(cp, 0, 50)
    commit(first, None)
    before = cp.agent
    cp.agent, cp.fingerprint, cp.version = (
        AgentSpec("m2", "short"),
        Fingerprint("h2", "m2", {}, "i2"),
        2,
    )
    cp.messages.append(Message(Role.USER, "again"))
    second = prepare(cp, 1, 50)
    commit(second, Head(1, len(first.new_bodies)))
    assert [type(r) for r in log_of(second)] == [codec.AgentRecord, Message]
    records = log_of(first, second)
    at_first = codec.decode_checkpoint(first.header, records[: len(first.new_bodies)])
    assert at_first.agent == before and at_first.fingerprint == Fingerprint("h", "m", {}, "i")
    latest = codec.decode_checkpoint(second.header, records)
    assert latest == cp and latest.stored_agent == (2, second.agent_text)
    assert codec.decode_summary(second.header, len(records)).message_count == 2


def test_a_save_whose_log_the_store_does_not_match_writes_a_new_log_with_its_agent() -> None:
    cp = lead()
    cp.stored_agent = (1, codec.agent_text(cp))  # the caller's word, not the store's
    p = prepare(cp, 1, 50)
    assert p.new_bodies == []
    commit(p, Head(0, 7))  # the stored log is another: a new log, agent included
    assert cp.stored_agent[0] == 1


def format_2(cp: Checkpoint) -> tuple[str, list[bytes]]:
    """``cp`` as the previous release (store format 2) wrote it: the agent and
    fingerprint inline in the header, every record marked format 2."""
    h = cp.header_dict(with_tasks=False)
    header = json.dumps({"format": 2, **h})
    return header, [_format_2_message(m) for m in cp.messages]


def _format_2_message(m: Message) -> bytes:
    """A lead's message in format 2's layout: a fixed header, the owner, the tool calls
    as JSON."""
    fields = [m.content.encode(), m.tool_call_id.encode(), m.tool_name.encode()]
    calls = json.dumps([c.to_dict() for c in m.tool_calls]).encode() if m.tool_calls else b""
    role = 0x20 | list(Role).index(m.role)
    head = struct.pack(">BBIHHI", role, m.is_error, *map(len, fields), len(calls))
    return head + struct.pack(">I", 0) + b"".join(fields) + calls


def test_a_store_written_in_format_2_loads_and_resumes_appending_to_its_log() -> None:
    cp = lead()
    cp.messages.append(Message(Role.ASSISTANT, "", (ToolCall("call_0_0", "t", '{"a": "ü"}'),)))
    cp.messages.append(Message(Role.TOOL, "err", (), "call_0_0", "t", True))
    header, old = format_2(cp)
    loaded = codec.decode_checkpoint(header, codec.decode_messages(b"".join(old)))
    assert loaded == cp and loaded.agent == cp.agent and loaded.stored_agent == (0, "")
    loaded.messages.append(Message(Role.ASSISTANT, "resumed"))
    loaded.version = 2
    p = prepare(loaded, 3, 50)
    assert p.stored_log == len(old)  # an append to the old log, not a new one
    commit(p, Head(1, len(old)))
    assert [type(r) for r in log_of(p)] == [codec.AgentRecord, Message]
    records = codec.decode_messages(b"".join([*old, *p.new_bodies]))
    assert codec.decode_checkpoint(p.header, records) == loaded
    # The format-2 header still reads its own prefix, agent and all (a history entry).
    assert codec.decode_checkpoint(header, records[: len(old)]) == cp


def test_an_import_writes_the_agent_once_per_log_and_again_when_it_changes() -> None:
    first = lead()
    second = lead(first.agent)
    second.messages.append(Message(Role.ASSISTANT, "x"))
    third = lead(AgentSpec("other"))
    third.messages = list(second.messages)
    steps = log_steps([first, second, third])
    assert [(s.new_log, s.start, len(s.bodies), s.count) for s in steps] == [
        (True, 0, 2, 2),
        (False, 2, 1, 3),
        (False, 3, 1, 4),
    ]
