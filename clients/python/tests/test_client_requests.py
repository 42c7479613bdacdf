"""What the client sends: agents, input shapes, business state (no server needed)."""

from __future__ import annotations

import pytest

from luosho.client import UNSET, Agent, Tool, message_from_dict, message_to_dict
from luosho.client._requests import execute_request, normalize_metadata, resume_request
from luosho.v1 import agent_pb2


def test_agent_to_proto() -> None:
    agent = Agent(
        "openai:gpt-4o-mini",
        instructions="Be brief.",
        tools=[
            Tool("search", "Search the web", {"type": "object", "required": ["q"]}, True),
            agent_pb2.ToolSpec(name="raw"),
        ],
        max_steps=5,
        tool_concurrency=2,
        on_agent_drift="error",
        model_settings={"temperature": 0.2},
        tool_timeout_ms=1500,
    )
    spec = agent.to_proto()

    assert spec.model == "openai:gpt-4o-mini" and spec.instructions == "Be brief."
    assert spec.tools[0] == agent_pb2.ToolSpec(
        name="search",
        description="Search the web",
        input_schema_json='{"type":"object","required":["q"]}',
        needs_approval=True,
    )
    assert spec.tools[1].name == "raw"
    assert (spec.max_steps, spec.tool_concurrency, spec.tool_timeout_ms) == (5, 2, 1500)
    assert spec.on_agent_drift == agent_pb2.AGENT_DRIFT_POLICY_ERROR
    assert spec.model_settings_json == '{"temperature":0.2}'


def test_agent_defaults_leave_optional_fields_unset() -> None:
    spec = Agent("scripted:x").to_proto()

    for name in ("max_steps", "tool_concurrency", "tool_timeout_ms"):
        assert not spec.HasField(name)
    assert spec.on_agent_drift == agent_pb2.AGENT_DRIFT_POLICY_WARN
    assert spec.model_settings_json == "" and list(spec.tools) == []
    assert Tool("t").to_proto().input_schema_json == ""


def test_unknown_drift_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="on_agent_drift"):
        Agent("scripted:x", on_agent_drift="loud")  # type: ignore[arg-type]


def test_raw_agent_spec_is_sent_as_is() -> None:
    spec = agent_pb2.AgentSpec(model="scripted:raw", max_steps=0)
    assert execute_request("s", None, agent=spec, business_state=UNSET, request_id="").agent == spec
    assert resume_request("s", agent=None, request_id="r").HasField("agent") is False


@pytest.mark.parametrize(
    ("state", "has", "json"),
    [
        (UNSET, False, ""),
        (None, True, "null"),
        ({"cart": [1, 2]}, True, '{"cart":[1,2]}'),
        ("x", True, '"x"'),
    ],
    ids=["omitted", "none-is-null", "object", "string"],
)
def test_business_state(state: object, has: bool, json: str) -> None:
    request = execute_request("s", "hi", agent=None, business_state=state, request_id="r1")
    assert request.HasField("business_state_json") is has
    assert request.business_state_json == json
    assert request.request_id == "r1"


def test_input_shapes() -> None:
    user = agent_pb2.Message(role=agent_pb2.ROLE_USER, content="hi")
    raw = agent_pb2.Message(role=agent_pb2.ROLE_SYSTEM, content="sys")

    def sent(input: object) -> list[agent_pb2.Message]:
        return list(
            execute_request("s", input, agent=None, business_state=UNSET, request_id="").input
        )

    assert sent("hi") == [user]
    assert sent({"role": "user", "content": "hi"}) == [user]
    assert sent(raw) == [raw]
    assert (
        sent([raw, "hi", {"role": "assistant", "content": "yo"}])[2].role
        == agent_pb2.ROLE_ASSISTANT
    )
    assert sent(None) == []
    with pytest.raises(ValueError, match="role"):
        sent({"role": "robot", "content": "x"})
    with pytest.raises(TypeError):
        sent([42])


def test_message_dicts_round_trip() -> None:
    assistant = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c1", "name": "add", "arguments_json": '{"a":1}'}],
    }
    tool = {
        "role": "tool",
        "content": "3",
        "tool_call_id": "c1",
        "tool_name": "add",
        "is_error": True,
    }
    for message in (assistant, tool):
        assert message_to_dict(message_from_dict(message)) == message
    shorthand = message_from_dict(
        {"role": "assistant", "tool_calls": [{"id": "c", "name": "n", "arguments": {"b": 2}}]}
    )
    assert shorthand.tool_calls[0].arguments_json == '{"b":2}'


def test_metadata_pairs() -> None:
    assert normalize_metadata({"Authorization": "Bearer t"}) == (("authorization", "Bearer t"),)
    assert normalize_metadata([("x-a", "1")]) == (("x-a", "1"),)
    assert normalize_metadata(None) is None
