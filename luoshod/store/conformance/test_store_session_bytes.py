"""The bytes a session with many sub-agent tasks holds (issue 15's storage target), for
every driver whose files are in the test's directory: every message is written once, at
every level, and neither the agent spec nor the finished tasks are repeated by the
checkpoint headers (the latest and each history entry), so the session's bytes (the
store's files with it, minus the same store empty) stay within a small multiple of its
raw transcript. Bytes, not time: the figure is the same on every run."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest

from luoshod.domain import (
    AgentSpec,
    Checkpoint,
    Fingerprint,
    Message,
    Role,
    SubAgent,
    SubTask,
    ToolCall,
    ToolSpec,
    Usage,
)
from luoshod.store import Capability, Store

from .backend import Backend

TASKS = 20
STEPS = 10  # tool steps of each task, then its final text
TEXT = 150  # bytes of each result and each final text
INSTRUCTIONS = 4000  # bytes of the lead's instructions: a header repeating it costs 4 kB
#: The bound on the session's bytes, in raw transcripts. Measured (store format 3, 4 kB
#: pages): SQLite 1.57x, LMDB 3.01x (its B-trees' free pages); in format 2 (the agent
#: spec in every header, a fixed 18-byte header and JSON tool calls in every record) they
#: were 5.85x and 8.98x; a save that rewrites a transcript is far over it too.
BOUND = 4.0


def _raw(m: Message) -> int:
    """A message's raw bytes: its JSON, as the bench counts it."""
    if m.role is Role.TOOL:
        return len(json.dumps({"tool_call_id": m.tool_call_id, "content": m.content}))
    calls = [c.to_dict() for c in m.tool_calls]
    return len(json.dumps({"content": m.content, "tool_calls": calls}))


def _instructions() -> str:
    """INSTRUCTIONS bytes of text that does not compress (a store may compress what it
    holds, as PostgreSQL does), the same on every run."""
    chunks: list[str] = []
    digest = b"lead"
    while sum(map(len, chunks)) < INSTRUCTIONS:
        digest = hashlib.sha256(digest).digest()
        chunks.append(base64.b64encode(digest).decode())
    return "".join(chunks)[:INSTRUCTIONS]


def _agent() -> AgentSpec:
    worker = AgentSpec(
        "m-worker", "you work", (ToolSpec("work", input_schema_json='{"type":"object"}'),)
    )
    return AgentSpec(
        "m-lead", _instructions(), subagents=(SubAgent("worker", "does the work", worker),)
    )


async def write_many_tasks(store: Store) -> tuple[Checkpoint, int]:
    """Save, as a run does, a session (``many-tasks``) of TASKS tasks of STEPS steps each
    into ``store``: its latest checkpoint and the bytes of its raw transcript."""
    fingerprint = Fingerprint("f-lead", "m-lead", {}, "i-lead")
    cp = Checkpoint(
        "many-tasks",
        [Message(Role.USER, "go")],
        agent=_agent(),
        fingerprint=fingerprint,
        run_id="r1",
    )
    stored = 0
    raw = 0

    async def save() -> None:
        nonlocal stored
        cp.version += 1
        cp.updated_at = 1000.0 + cp.version
        written = len(cp.messages)
        tasks = [(t, len(t.messages)) for t in cp.all_tasks()]
        await store.save(cp, stored_messages=stored)
        stored = written
        for t, n in tasks:  # as the run does after each save (R59)
            t.stored = n

    def add(messages: list[Message], m: Message) -> None:
        nonlocal raw
        messages.append(m)
        raw += _raw(m) if m.role is not Role.USER else len(json.dumps({"content": m.content}))

    await save()
    for k in range(1, TASKS + 1):
        arguments = json.dumps({"agent": "worker", "prompt": f"job {k}"})
        call = ToolCall(f"call_{k}_0", "task", arguments)
        add(cp.messages, Message(Role.ASSISTANT, "", (call,)))
        cp.step_index += 1
        task = SubTask(
            "worker",
            f"task_{k}",
            1,
            ("worker",),
            fingerprint=Fingerprint("f-w", "m-worker", {"work": "h"}, "i-w"),
        )
        cp.subtasks[call.id], cp.task_count = task, k
        add(task.messages, Message(Role.USER, f"job {k}"))
        await save()
        for i in range(STEPS):
            work = ToolCall(f"call_{i}_0", "work", json.dumps({"i": i}))
            add(task.messages, Message(Role.ASSISTANT, "", (work,)))
            task.step_index += 1
            task.usage = Usage(10 * i, 5 * i, 15 * i, i)
            await save()
            result = f"{i}".ljust(TEXT, "r")
            add(task.messages, Message(Role.TOOL, result, tool_call_id=work.id, tool_name="work"))
            await save()
        add(task.messages, Message(Role.ASSISTANT, "done ".ljust(TEXT, "d")))
        del cp.subtasks[call.id]
        cp.tasks[task.task_id] = task.end()
        answer = "done ".ljust(TEXT, "d")
        add(cp.messages, Message(Role.TOOL, answer, tool_call_id=call.id, tool_name="task"))
        await save()
    return cp, raw


async def test_a_session_of_many_tasks_holds_a_small_multiple_of_its_transcript(
    backend: Backend,
) -> None:
    backend.require(Capability.DURABLE)
    if not backend.on_disk_here:
        pytest.skip(
            f"{backend.name} keeps its data outside the test's directory (the driver's own "
            "tests bound what its rows hold)"
        )
    store = await backend.open()
    await store.close()
    empty = backend.disk_bytes()
    store = await backend.open()
    try:
        cp, raw = await write_many_tasks(store)
        loaded = await store.load("many-tasks")
        assert loaded == cp
        assert len(loaded.tasks) == TASKS and loaded.agent == cp.agent
        if Capability.HISTORY in backend.capabilities:
            entries = await store.history("many-tasks")
            assert entries[0].checkpoint == cp and entries[-1].checkpoint.agent == cp.agent
    finally:
        await store.close()
    session = backend.disk_bytes() - empty
    assert session <= BOUND * raw, (session, raw, round(session / raw, 2))
