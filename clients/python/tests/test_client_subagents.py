"""The Python client with sub-agents (R55, R58, R60) against the real daemon: declaring
sub-agents with ``SubAgent``, one ``tools=`` mapping answering the lead's and the
sub-agents' calls (a handler sees which sub-agent asks), ``subagent_of`` on events and
``subagent_path`` on approvals."""

from __future__ import annotations

import json

import pytest

from luosho.client import (
    Agent,
    AsyncClient,
    Client,
    SubAgent,
    SubagentInfo,
    Tool,
    ToolContext,
    subagent_of,
)
from luoshod.server.app import Daemon

HELPER = Agent(
    "scripted:helper",
    instructions="You look things up.",
    tools=[Tool("lookup"), Tool("delete", needs_approval=True)],
    model_settings={
        "script": [
            {"tool_calls": [{"name": "lookup", "arguments": {"q": "moon"}}]},
            {"tool_calls": [{"name": "delete", "arguments": {"id": 3}}]},
            {"text": "the moon"},
        ]
    },
)
LEAD = Agent(
    "scripted:lead",
    instructions="You lead.",
    tools=[Tool("lookup")],
    model_settings={
        "script": [
            {
                "tool_calls": [
                    {"name": "lookup", "arguments": {"q": "self"}},
                    {
                        "name": "task",
                        "arguments": {"agent": "helper", "prompt": "what pulls tides?"},
                    },
                ]
            },
            {"text": "tides: the moon"},
        ]
    },
    subagents=[SubAgent("helper", "looks things up", HELPER)],
)


@pytest.mark.asyncio
async def test_client_declares_subagents_and_its_handlers_see_who_asks(daemon: Daemon) -> None:
    asked: list[tuple[str, SubagentInfo | None]] = []

    def lookup(args: dict, ctx: ToolContext) -> dict:
        asked.append((ctx.tool_call_id, ctx.subagent))
        return {"found": args["q"]}

    tools = {"lookup": lookup, "delete": lambda args: {"deleted": args["id"]}}
    async with AsyncClient(daemon.addresses[0]) as client:
        run = client.execute("py-sub", "why tides?", agent=LEAD, tools=tools)
        events = [e async for e in run]
        first = await run
        assert first.finish_reason == "awaiting_approval"
        assert asked == [
            ("call_0_0", None),
            ("call_0_1/call_0_0", SubagentInfo("helper", 1, ("helper",), "task_1")),
        ]
        tagged = [subagent_of(e) for e in events]
        assert {t.name for t in tagged if t} == {"helper"}
        assert (
            subagent_of(events[0]) is None and subagent_of(events[-1]) is None
        )  # run.start, run.done
        (approval,) = [a async for a in client.approvals("py-sub")]
        assert list(approval.subagent_path) == ["helper"]
        assert approval.tool_call.id == "call_0_1/call_1_0"  # the helper's second turn
        result = await client.resolve(approval.approval_id, True, tools=tools)
        assert result.finish_reason == "stop" and result.final_text == "tides: the moon"
        cp = await client.get_session("py-sub")
        assert cp.delegated_usage.model_calls == 3
        task_result = json.loads(
            next(m.content for m in cp.messages if m.tool_call_id == "call_0_1")
        )
        assert task_result.startswith("the moon\n\n[sub-agent 'helper': 3 step(s)")


@pytest.mark.asyncio
async def test_blocking_client_sees_the_subagent_too(daemon: Daemon) -> None:
    import asyncio

    asked: list[SubagentInfo | None] = []

    def lookup(args: dict, ctx: ToolContext) -> dict:
        asked.append(ctx.subagent)
        return {"found": args["q"]}

    def blocking() -> str:
        with Client(daemon.addresses[0]) as client:
            tools = {"lookup": lookup, "delete": lambda a: {"deleted": True}}
            first = client.execute("py-sub-sync", "go", agent=LEAD, tools=tools).result()
            assert first.finish_reason == "awaiting_approval"
            (approval,) = list(client.approvals("py-sub-sync"))
            return (
                client.resolve(approval.approval_id, False, note="keep it", tools=tools)
                .result()
                .final_text
            )

    assert await asyncio.to_thread(blocking) == "tides: the moon"
    assert asked == [None, SubagentInfo("helper", 1, ("helper",), "task_1")]
