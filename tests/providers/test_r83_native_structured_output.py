"""R83 through the real providers over HTTP (each wire format's fake server): the request
asks for the output schema natively (OpenAI ``response_format`` json_schema, Anthropic a
forced ``final_answer`` tool), and the daemon still validates the answer, with one repair
turn the next request carries."""

from __future__ import annotations

import json
from typing import Any

import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.engine.output import REPAIR_PREFIX
from tests.support.harness import Harness
from tests.support.model_fakes import FakeServer, Turn, turn
from tests.support.providers import add, llm_agent

pytestmark = pytest.mark.asyncio

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["city", "population"],
}


def answer(kind: str, value: dict[str, Any]) -> Turn:
    """The model's structured answer as each wire gives it."""
    if kind == "anthropic":
        return turn("", ("final_answer", value))
    return turn(json.dumps(value))


def asked_natively(kind: str, body: dict[str, Any]) -> None:
    if kind == "openai":
        assert body["response_format"] == {
            "type": "json_schema",
            "json_schema": {"name": "output", "schema": SCHEMA, "strict": False},
        }
    elif kind == "openai_responses":
        assert body["text"] == {
            "format": {"type": "json_schema", "name": "output", "schema": SCHEMA, "strict": False}
        }
    else:
        assert body["tool_choice"] == {"type": "tool", "name": "final_answer"}
        assert [t["name"] for t in body["tools"]] == ["final_answer"]
        assert body["tools"][0]["input_schema"] == SCHEMA


async def test_r83_native_structured_output_validated_with_a_repair_turn(
    fake: FakeServer, llm: Harness
) -> None:
    fake.script = [
        answer(fake.kind, {"city": "Paris"}),
        answer(fake.kind, {"city": "Paris", "population": 2100000}),
    ]
    spec = llm_agent({}, output_schema_json=json.dumps(SCHEMA))
    log = await llm.run("native", "where?", spec)
    assert log.error is None, log.error
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    assert log.done.output_json == '{"city":"Paris","population":2100000}'
    assert len(fake.requests) == 2
    for seen in fake.requests:
        asked_natively(fake.kind, seen.body)
    last_user = fake.requests[1].body.get("messages", fake.requests[1].body.get("input"))[-1]
    content = last_user["content"]
    text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
    assert last_user["role"] == "user" and text.startswith(REPAIR_PREFIX)
    assert "'population' is a required property" in text


async def test_r83_a_setting_given_explicitly_is_left_as_given(
    fake: FakeServer, llm: Harness
) -> None:
    setting = {
        "openai": {"response_format": {"type": "json_object"}},
        "openai_responses": {"text": {"format": {"type": "json_object"}}},
    }.get(fake.kind, {"tool_choice": {"type": "auto"}})
    fake.script = [answer(fake.kind, {"city": "Oslo", "population": 1})]
    spec = llm_agent({}, settings=setting, output_schema_json=json.dumps(SCHEMA))
    log = await llm.run("explicit", "where?", spec)
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    (key, value), body = next(iter(setting.items())), fake.requests[0].body
    assert body[key] == value


async def test_r83_an_agent_with_tools_keeps_them_usable_before_its_answer(
    fake: FakeServer, llm: Harness
) -> None:
    fake.script = [
        turn("", ("add", {"a": 1, "b": 2})),
        answer(fake.kind, {"city": "Three", "population": 3}),
    ]
    spec = llm_agent(output_schema_json=json.dumps(SCHEMA))
    log = await llm.run("tools", "add then answer", spec, {"add": add})
    assert log.error is None, log.error
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    assert json.loads(log.done.output_json) == {"city": "Three", "population": 3}
    for seen in fake.requests:
        body = seen.body
        if fake.kind == "openai":
            assert body["response_format"]["json_schema"]["schema"] == SCHEMA
            assert [t["function"]["name"] for t in body["tools"]] == ["add"]
        elif fake.kind == "openai_responses":
            assert body["text"]["format"]["schema"] == SCHEMA
            assert [t["name"] for t in body["tools"]] == ["add"]
        else:  # any tool, the answer being one of them
            assert body["tool_choice"] == {"type": "any"}
            assert [t["name"] for t in body["tools"]] == ["add", "final_answer"]
