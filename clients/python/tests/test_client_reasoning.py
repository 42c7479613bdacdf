"""R84 in the Python client against a real daemon: ``Agent(reasoning=Reasoning(...))``
reaches the daemon, the run's reasoning.delta text comes back as ``RunResult.reasoning``
(never in ``final_text``), and the turn keeps its reasoning block in the checkpoint."""

from __future__ import annotations

import json

import pytest

from luosho.client import Agent, AsyncClient, Reasoning, Tool
from luoshod.server.app import Daemon


@pytest.mark.asyncio
async def test_r84_reasoning_set_streamed_and_kept(daemon: Daemon) -> None:
    agent = Agent(
        "scripted:thinker",
        tools=[Tool("add")],
        reasoning=Reasoning(effort="high", budget_tokens=4096),
        model_settings={
            "script": [
                {
                    "reasoning": ["I need add."],
                    "tool_calls": [{"name": "add", "arguments": {"a": 1}}],
                },
                {"text": "2"},
            ]
        },
    )
    async with AsyncClient(daemon.addresses[0]) as client:
        tools = {"add": lambda a: a["a"] + 1}
        result = await client.execute("r84-client", "one plus one", agent=agent, tools=tools)
        assert result.finish_reason == "stop" and result.final_text == "2"
        assert result.reasoning == "I need add."
        cp = await client.get_session("r84-client")
    turn = next(m for m in cp.messages if m.tool_calls)
    assert [json.loads(b.raw_json) for b in turn.reasoning] == [
        {"type": "thinking", "thinking": "I need add."}
    ]
    assert cp.agent.reasoning.effort == "high" and cp.agent.reasoning.budget_tokens == 4096
