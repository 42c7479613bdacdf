"""Limits (docs/reference/rules.md R78, R79) set through the Python client against a real
daemon: the run a limit stops comes back with its typed finish reason and the
``budget.exceeded`` payload, and raising the limit and resuming goes on."""

from __future__ import annotations

import pytest

from luosho.client import Agent, AsyncClient, Budget, Limits, Tool
from luoshod.server.app import Daemon

SCRIPT = [
    {"tool_calls": [{"name": "look", "arguments": {"q": "a"}}]},
    {"tool_calls": [{"name": "look", "arguments": {"q": "b"}}]},
    {"text": "done"},
]


def agent(model_calls: int) -> Agent:
    return Agent(
        "scripted:limited",
        tools=[Tool("look")],
        model_settings={"script": SCRIPT},
        limits=Limits(run=Budget(model_calls=model_calls)),
    )


@pytest.mark.asyncio
async def test_r79_a_run_a_limit_stops_comes_back_typed_and_goes_on_once_raised(
    daemon: Daemon,
) -> None:
    looked: list[str] = []
    tools = {"look": lambda a: looked.append(a["q"]) or "seen"}
    async with AsyncClient(daemon.addresses[0]) as client:
        stopped = await client.execute("lim-1", "go", agent=agent(1), tools=tools)
        assert stopped.finish_reason == "budget_exceeded"
        tripped = stopped.budget_exceeded
        assert tripped is not None
        assert (tripped.scope, tripped.limit, tripped.value, tripped.used) == (
            "run",
            "model_calls",
            1,
            1,
        )
        assert looked == ["a"]  # the first turn's call ran; no second model call was made
        done = await client.resume("lim-1", agent=agent(5), tools=tools)
    assert done.finish_reason == "stop" and done.final_text == "done"
    assert looked == ["a", "b"]
    assert done.budget_exceeded is None


def test_limits_go_into_the_agent_spec_only_as_given() -> None:
    spec = Agent("scripted:x", limits=Limits(session=Budget(cost_usd=0.5))).to_proto()
    assert spec.limits.session.HasField("cost_usd") and spec.limits.session.cost_usd == 0.5
    assert not spec.limits.session.HasField("model_calls") and not spec.limits.HasField("run")
    assert not Agent("scripted:x").to_proto().HasField("limits")
