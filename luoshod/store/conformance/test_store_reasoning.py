"""R84: the reasoning blocks kept on an assistant turn (``Message.reasoning``) read back
from every driver as they were saved, byte for byte — a signature, an encrypted item, text
of every Unicode plane — through ``load`` and ``history``, and saved on from there."""

from __future__ import annotations

import json

from luoshod.domain import Checkpoint, Message, ReasoningBlock, Role, ToolCall, Usage
from luoshod.store import Capability, Store

from .backend import Backend

THINKING = 'weigh "a" \\ b\n naïve 中文 𝄞 \x00 ' * 50
BLOCKS = (
    ReasoningBlock(
        "anthropic",
        json.dumps({"type": "thinking", "thinking": THINKING, "signature": "Ep4B" + "x" * 4000}),
        THINKING,
    ),
    ReasoningBlock("anthropic", '{"type":"redacted_thinking","data":"EmwKAhgBEgy3"}'),
    ReasoningBlock(
        "openai_responses",
        '{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"gAAAA=="}',
    ),
)


async def test_r84_reasoning_blocks_read_back_as_saved(backend: Backend, driver: Store) -> None:
    turn = Message(
        Role.ASSISTANT,
        "",
        (ToolCall("toolu_0_0", "add", '{"a": 1}'),),
        model="llm:m",
        usage=Usage(10, 5, 15, 1, reasoning_tokens=3),
        reasoning=BLOCKS,
    )
    plain = Message(Role.ASSISTANT, "no model, no usage", reasoning=BLOCKS[1:2])
    cp = Checkpoint("reasoned", [Message(Role.USER, "go"), turn])
    cp.version = 1
    await driver.save(cp, stored_messages=0)
    cp.version = 2
    cp.messages += [Message(Role.TOOL, "1", (), "toolu_0_0", "add"), plain]
    await driver.save(cp, stored_messages=2)
    loaded = await driver.load("reasoned")
    assert loaded is not None
    assert [m.reasoning for m in loaded.messages] == [(), BLOCKS, (), BLOCKS[1:2]]
    assert loaded.messages[1].usage == turn.usage and loaded.messages[1].model == "llm:m"
    if Capability.HISTORY in backend.capabilities:  # each save's entry, its prefix
        entries = await driver.history("reasoned")
        assert [[m.reasoning for m in e.checkpoint.messages] for e in entries] == [
            [(), BLOCKS, (), BLOCKS[1:2]],
            [(), BLOCKS],
        ]
    # Loaded and saved on, as a restarted daemon does: the blocks stay.
    loaded.version += 1
    loaded.messages.append(Message(Role.USER, "more"))
    await driver.save(loaded, stored_messages=len(loaded.messages) - 1)
    again = await driver.load("reasoned")
    assert again is not None and again.messages[1].reasoning == BLOCKS
