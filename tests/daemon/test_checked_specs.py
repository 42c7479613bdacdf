"""A lead agent spec checked once (luoshod/server/validation.py): the runs that send the
same spec share one checked ``AgentSpec``; a different spec is checked on its own, and a
bad one is refused every time it comes."""

from __future__ import annotations

import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.errors import InvalidArgument
from luoshod.server import convert
from luoshod.server.validation import check_agent


def _spec(**extra: object) -> pb.AgentSpec:
    return pb.AgentSpec(
        model="scripted:x",
        tools=[pb.ToolSpec(name="work", input_schema_json='{"type":"object"}')],
        **extra,  # type: ignore[arg-type]  # the fields of a spec
    )


def test_the_same_spec_is_checked_once_and_shared() -> None:
    first = check_agent(_spec(instructions="a"))
    again = check_agent(pb.AgentSpec.FromString(_spec(instructions="a").SerializeToString()))
    assert again is first
    assert again == convert.agent_from_pb(_spec(instructions="a"))
    other = check_agent(_spec(instructions="b"))
    assert other is not first and other.instructions == "b"


def test_a_bad_spec_is_refused_every_time() -> None:
    bad = pb.AgentSpec(model="scripted:x", tools=[pb.ToolSpec(name="bad name")])
    for _ in range(2):
        with pytest.raises(InvalidArgument) as refused:
            check_agent(bad)
        assert refused.value.reason == "INVALID_TOOL_NAME"
