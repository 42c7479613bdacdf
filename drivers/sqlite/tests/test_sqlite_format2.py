"""A SQLite file written by the previous release (store format 2: the agent spec and
fingerprint inline in every header, records with a fixed header and JSON tool calls, the
file marked format 2) opens with this one, loads, keeps its history, and resumes: the next
save appends to the old message log (an agent record and the new messages, format 3)
instead of starting a new one, and the old history entry still reads its moment."""

from __future__ import annotations

import json
import sqlite3
import struct
from pathlib import Path

from luoshod.domain import (
    AgentSpec,
    Checkpoint,
    Fingerprint,
    Message,
    Role,
    Status,
    SubTask,
    ToolCall,
    Usage,
)
from luoshod.store.kit import codec
from luoshod_sqlite import SqliteStore
from luoshod_sqlite.migrations import APPLICATION_ID

_ROLES = [Role.SYSTEM, Role.USER, Role.ASSISTANT, Role.TOOL]


def v2(m: Message, owner: int = 0) -> bytes:
    """A record as format 2 wrote it."""
    fields = [m.content.encode(), m.tool_call_id.encode(), m.tool_name.encode()]
    calls = json.dumps([c.to_dict() for c in m.tool_calls]).encode() if m.tool_calls else b""
    head = struct.pack(
        ">BBIHHI", 0x20 | _ROLES.index(m.role), m.is_error, *map(len, fields), len(calls)
    )
    return head + struct.pack(">I", owner) + b"".join(fields) + calls


def v2_meta(owner: int, task: SubTask) -> bytes:
    meta = json.dumps(
        {"task_id": task.task_id, "name": task.name, "depth": task.depth, "path": list(task.path)}
    )
    body = meta.encode()
    return struct.pack(">BBIHHI", 0x24, 0, len(body), 0, 0, 0) + struct.pack(">I", owner) + body


def paused() -> Checkpoint:
    call = ToolCall("call_0_0", "task", '{"agent":"w","prompt":"go"}')
    worker = SubTask(
        "w",
        "task_1",
        1,
        ("w",),
        [
            Message(Role.USER, "go"),
            Message(Role.ASSISTANT, "", (ToolCall("call_0_0", "t", '{"q": "ü"}'),)),
        ],
        step_index=1,
        usage=Usage(1, 2, 3, 1),
        fingerprint=Fingerprint("fw", "m-w", {"t": "h"}, "iw"),
    )
    return Checkpoint(
        "old",
        [Message(Role.USER, "hi " * 100), Message(Role.ASSISTANT, "", (call,))],
        step_index=1,
        version=4,
        updated_at=1000.0,
        run_id="r1",
        agent=AgentSpec("m", "be brief " * 100),
        fingerprint=Fingerprint("f", "m", {}, "i"),
        subtasks={"call_0_0": worker},
        task_count=1,
    )


def write_format_2(path: Path, cp: Checkpoint) -> int:
    """Write ``cp`` (and one history entry of it) as the previous release did; return
    the number of records of its log."""
    records = [v2(m) for m in cp.messages]
    worker = cp.subtasks["call_0_0"]
    records += [v2_meta(1, worker), *(v2(m, 1) for m in worker.messages)]
    header = json.dumps(
        {"format": 2, **cp.header_dict(with_tasks=False), "message_count": len(cp.messages)}
    )
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN")
        conn.execute("INSERT INTO logs (log_id, session_id) VALUES (1, ?)", (cp.session_id,))
        conn.executemany(
            "INSERT INTO messages (log_id, idx, body) VALUES (1, ?, ?)", list(enumerate(records))
        )
        conn.execute(
            "INSERT INTO sessions (session_id, log_id, version, status, message_count, "
            "updated_at, header)"
            " VALUES (?, 1, ?, ?, ?, ?, ?)",
            (cp.session_id, cp.version, cp.status.value, len(records), cp.updated_at, header),
        )
        conn.execute(
            "INSERT INTO history (session_id, step, status, saved_at, log_id, message_count, "
            "header)"
            " VALUES (?, ?, ?, ?, 1, ?, ?)",
            (cp.session_id, cp.step_index, cp.status.value, cp.updated_at, len(records), header),
        )
        conn.execute("COMMIT")
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID | 2}")
    finally:
        conn.close()
    return len(records)


async def test_a_format_2_file_loads_and_resumes_on_its_old_log(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    store = SqliteStore(path)
    await store.open()  # the schema, as the previous release made it (same migrations)
    await store.close()
    cp = paused()
    old_count = write_format_2(path, cp)

    store = SqliteStore(path)
    await store.open()
    try:
        loaded = await store.load("old")
        assert loaded == cp and loaded.agent == cp.agent
        assert [e.checkpoint for e in await store.history("old")] == [cp]
        # Resume: the sub-agent records its result; then the lead's next turn.
        worker = loaded.subtasks["call_0_0"]
        worker.messages.append(Message(Role.TOOL, "42", tool_call_id="call_0_0", tool_name="t"))
        loaded.version, loaded.updated_at = 5, 1001.0
        await store.save(loaded, stored_messages=len(loaded.messages))
        worker.stored = len(worker.messages)
        again = await store.load("old")
        assert again == loaded and again.agent == cp.agent
        entries = await store.history("old")
        assert [e.checkpoint for e in entries] == [loaded, cp]
        assert entries[0].status is Status.IN_PROGRESS
    finally:
        await store.close()
    with sqlite3.connect(path) as conn:
        # One log: the old records kept, the agent record and the new message appended.
        assert conn.execute("SELECT count(*) FROM logs").fetchone() == (1,)
        assert conn.execute("SELECT count(*) FROM messages").fetchone() == (old_count + 2,)
        assert conn.execute("PRAGMA application_id").fetchone() == (
            APPLICATION_ID | codec.FORMAT_VERSION,
        )
        stored = conn.execute("SELECT header FROM sessions").fetchone()[0]
        assert isinstance(stored, bytes) and stored[0] == codec.COMPACT_HEADER  # compact now
        header = json.loads(codec.header_json(stored))
        assert header["format"] == codec.FORMAT_VERSION and "agent" not in header
        # The old entry's row kept its JSON text beside the new compact one, and both read.
        rows = conn.execute("SELECT header FROM history ORDER BY id").fetchall()
        assert [type(h) for (h,) in rows] == [str, bytes]
    conn.close()
