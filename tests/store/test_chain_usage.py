"""The hash chain (R91) covers a turn's model and usage (R78) on the turns that carry them,
and hashes a message without them as it did before they existed."""

from __future__ import annotations

from dataclasses import replace

from luoshod.domain import Message, Role, ToolCall, Usage
from luoshod.store.kit import chain, codec


def test_r78_the_chain_hashes_a_turns_model_and_usage() -> None:
    turn = Message(
        Role.ASSISTANT,
        "adding",
        (ToolCall("c1", "add", '{"a": 1}'),),
        model="scripted:demo",
        usage=Usage(120, 7, 127, 1, 0.5, 90, 0, 3),
    )
    base = chain.records([turn], (), 0)
    assert (
        chain.records([replace(turn, usage=Usage(120, 7, 127, 1, 0.25, 90, 0, 3))], (), 0) != base
    )
    assert chain.records([replace(turn, model="scripted:other")], (), 0) != base
    # Without them, the bytes of the chain's first version: owner, role, is_error, texts,
    # tool calls.
    bare = replace(turn, model="", usage=None)
    texts = [b"adding", b"", b""]
    want = b"\x00\x02\x00" + b"".join(codec.varint(len(t)) + t for t in texts) + b"\x01"
    want += b"".join(codec.varint(len(t)) + t for t in (b"c1", b"add", b'{"a": 1}'))
    assert chain.records([bare], (), 0) == want
    assert base.startswith(b"\x00\x02\x02")  # bit 1 of is_error: model and usage follow
