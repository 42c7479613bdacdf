"""R91 and the store format: what a save links and stores is fixed by the chain's version
and the codec's format, byte for byte. The same checkpoints give the same links, headers
(as JSON and compact) and records as when these digests were taken; a faster encoding
must keep them."""

from __future__ import annotations

import hashlib

import pytest

from luoshod.domain import (
    AgentSpec,
    Checkpoint,
    Message,
    ReasoningBlock,
    Role,
    SubTask,
    ToolCall,
    Usage,
)
from luoshod.store.kit import chain
from luoshod.store.kit.prepared import prepare

#: Digests of (the first save, the second save), taken with chain version 1 and store
#: format 6 (dictionary 1): a change here is a new chain version or store format.
GOLDEN = {
    False: (
        "676d95a09ccc279674162581878f15377fe9d81e6523161fe091f6dd0581f2f6",
        "f020296749776a436612568b5a95a622bbac51bff973d0413c8ac90c0c02f766",
    ),
    True: (
        "da500d5b48d93daac9608debc58759fe5606d451c015a87c5e34f04d97499524",
        "b55e7b8d0ffe6c789bc87906b0d02cea0fe1287294c5497be30fcf4ae3d82c09",
    ),
}

TEXT = "".join(chr(97 + (i * 7) % 26) if i % 11 else " " for i in range(4096))


def _messages() -> list[Message]:
    """Records of every shape: short ids (the usual record) and a long one, tool calls, a
    turn's model and usage, reasoning, an error, a pin, non-ASCII text."""
    return [
        Message(Role.SYSTEM, "be brief"),
        Message(Role.USER, TEXT),
        Message(
            Role.ASSISTANT,
            "héllo ✓ 漢字",
            (ToolCall("call_1", "search", '{"q": "ü"}'),),
            model="openai:gpt-4o-mini",
            usage=Usage(120, 7, 127, 1, 0.5, 90, 0, 3),
        ),
        Message(Role.TOOL, TEXT[:3000], tool_call_id="call_1", tool_name="search"),
        Message(Role.TOOL, "failed", tool_call_id="c" * 200, tool_name="t", is_error=True),
        Message(Role.USER, "keep this", pinned=True),
        Message(
            Role.ASSISTANT,
            "thought about it",
            model="anthropic:claude",
            reasoning=(ReasoningBlock("anthropic", '{"signature":"x"}', "thinking ✓"),),
        ),
        Message(Role.ASSISTANT, TEXT[:200]),
    ]


def _checkpoint(version: int) -> Checkpoint:
    task = SubTask(
        "researcher",
        "task_1",
        1,
        ("call_9",),
        [Message(Role.USER, "find it"), Message(Role.ASSISTANT, TEXT[:500])],
    )
    return Checkpoint(
        "golden",
        _messages(),
        step_index=3,
        usage=Usage(10, 2, 12, 1, 0.25),
        total_usage=Usage(30, 6, 36, 3, 0.75),
        agent=AgentSpec("scripted:demo", "You help."),
        run_id="run-1",
        updated_at=1764921600.5,
        version=version,
        subtasks={"call_9": task},
        task_count=1,
    )


def _save(cp: Checkpoint, stored: int, compact: bool) -> str:
    """A digest of what a save of ``cp`` links and writes, computed as the store kit's
    save does (``QueuedWrites.save``)."""
    header = cp.header_dict(with_agent=False, with_tasks=False)
    header.pop("chain", None)
    cp.chain = chain.link_save(cp, stored, header)
    header["chain"] = cp.chain
    p = prepare(cp, stored, 50, compact_header=compact, header=header)
    cp.stored_agent = (p.agents, p.agent_text)
    for task in cp.all_tasks():
        task.stored = len(task.messages)
    h = hashlib.sha256(cp.chain.encode())
    h.update(p.header if isinstance(p.header, bytes) else p.header.encode())
    for body in p.new_bodies:
        h.update(len(body).to_bytes(4, "big") + body)
    return h.hexdigest()


def _digests(compact: bool) -> tuple[str, str]:
    """A session's first save (a new log: every record), then a save of two more messages
    of the lead and one more of its task, linked to the first."""
    cp = _checkpoint(1)
    first = _save(cp, 0, compact)
    cp.version, cp.step_index = 2, 4
    cp.messages = [*cp.messages, Message(Role.USER, TEXT[:1000]), Message(Role.ASSISTANT, "ok")]
    cp.subtasks["call_9"].messages.append(
        Message(Role.TOOL, "found", tool_call_id="x", tool_name="web")
    )
    return first, _save(cp, len(_messages()), compact)


@pytest.mark.parametrize("compact", [False, True], ids=["json-header", "compact-header"])
def test_r91_a_saves_link_header_and_records_keep_their_bytes(compact: bool) -> None:
    assert _digests(compact) == GOLDEN[compact]
