"""Transcript ⇄ wire mapping of each provider, checked with the fakes' own validators, and
the validators themselves shown to refuse what a real server refuses."""

from __future__ import annotations

import json

from luoshod.domain import Message, Role, ToolCall
from luoshod.providers import anthropic_messages, openai_chat
from luoshod.providers.remote import unique_call_ids
from tests.support.model_fakes import check_anthropic, check_openai

A, B = ToolCall("id_a", "add", '{"a": 1}'), ToolCall("id_b", "add", '{"a": 2')  # B's JSON is broken
TRANSCRIPT = [
    Message(Role.SYSTEM, "Be brief."),
    Message(Role.USER, "add things"),
    Message(Role.ASSISTANT, "Calling two tools.", (A, B)),
    Message(Role.TOOL, "1", (), "id_a", "add"),
    Message(Role.TOOL, '{"error": "arguments are not valid JSON"}', (), "id_b", "add", True),
    Message(Role.USER, "and then stop"),  # input queued after the results (R12)
]


def test_anthropic_tool_results_and_input_share_one_user_turn() -> None:
    system, messages = anthropic_messages.to_wire(TRANSCRIPT)
    assert system == "Be brief."
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [
        {"type": "text", "text": "Calling two tools."},
        {"type": "tool_use", "id": "id_a", "name": "add", "input": {"a": 1}},
        {"type": "tool_use", "id": "id_b", "name": "add", "input": {"_unparsed": '{"a": 2'}},
    ]
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "id_a", "content": "1"},
        {
            "type": "tool_result",
            "tool_use_id": "id_b",
            "content": '{"error": "arguments are not valid JSON"}',
            "is_error": True,
        },
        {"type": "text", "text": "and then stop"},
    ]
    assert (
        check_anthropic({"model": "m", "max_tokens": 10, "system": system, "messages": messages})
        == []
    )


def test_anthropic_merges_consecutive_turns_and_drops_empty_text() -> None:
    # A run aborted during a model call, then new input: two user turns in a row.
    _, messages = anthropic_messages.to_wire(
        [Message(Role.USER, "first"), Message(Role.USER, ""), Message(Role.USER, "second")]
    )
    assert messages == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}],
        }
    ]


def test_openai_mapping() -> None:
    messages = openai_chat.to_wire(
        TRANSCRIPT + [Message(Role.ASSISTANT, "", (ToolCall("id_c", "add", ""),))]
    )
    assert messages[0] == {"role": "system", "content": "Be brief."}
    call_turn = messages[2]
    assert call_turn["content"] == "Calling two tools."
    assert call_turn["tool_calls"][0] == {
        "id": "id_a",
        "type": "function",
        "function": {"name": "add", "arguments": '{"a": 1}'},
    }
    # Broken arguments are sent back as valid JSON (strict servers refuse the transcript otherwise).
    assert json.loads(call_turn["tool_calls"][1]["function"]["arguments"]) == {
        "_unparsed": '{"a": 2'
    }
    assert messages[4] == {
        "role": "tool",
        "tool_call_id": "id_b",
        "content": '[tool error] {"error": "arguments are not valid JSON"}',
    }
    assert messages[6]["content"] is None  # a turn of tool calls only
    assert check_openai({"model": "m", "messages": messages[:6]}) == []


def test_the_fakes_refuse_invalid_transcripts() -> None:
    ok = openai_chat.to_wire(TRANSCRIPT)
    moved = [ok[0], ok[1], ok[2], ok[3], ok[5], ok[4]]  # a result after the next user message
    assert any("before the results" in p for p in check_openai({"model": "m", "messages": moved}))
    orphan = [ok[0], ok[1], ok[3]]
    assert any("does not answer" in p for p in check_openai({"model": "m", "messages": orphan}))
    assert any(
        "ends before the results" in p for p in check_openai({"model": "m", "messages": ok[:4]})
    )

    _, wire = anthropic_messages.to_wire(TRANSCRIPT)
    body = {"model": "m", "max_tokens": 5}
    missing = [
        wire[0],
        wire[1],
        {"role": "user", "content": [wire[2]["content"][0], wire[2]["content"][2]]},
    ]
    assert any("do not answer" in p for p in check_anthropic({**body, "messages": missing}))
    late = [
        wire[0],
        wire[1],
        {"role": "user", "content": [wire[2]["content"][2], *wire[2]["content"][:2]]},
    ]
    assert any("must come first" in p for p in check_anthropic({**body, "messages": late}))
    assert any("expected a user turn" in p for p in check_anthropic({**body, "messages": wire[1:]}))
    assert any("max_tokens" in p for p in check_anthropic({"model": "m", "messages": wire}))


def test_missing_or_reused_call_ids_are_replaced_by_stable_ones() -> None:
    history = [Message(Role.USER, "hi"), Message(Role.ASSISTANT, "", (ToolCall("call_0", "add"),))]
    calls = unique_call_ids(
        [ToolCall("", "add"), ToolCall("call_0", "add"), ToolCall("fresh", "add")], history
    )
    assert [c.id for c in calls] == ["call_1_0", "call_1_1", "fresh"]
    assert unique_call_ids([ToolCall("x", "a"), ToolCall("x", "a")], [])[1].id == "call_0_1"
