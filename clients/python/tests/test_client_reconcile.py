"""A tool call's attempt and its reconcile function (R77), against the real daemon on each
store: a client leaves while its ``pay`` call is handed out; a fresh client resumes with
``reconcile={"pay": fn}`` and answers the daemon's ``tool.reconcile`` (DONE: the tool is
not run again; NOT_STARTED and UNKNOWN: it runs with ``ctx.attempt`` 2 and
``ctx.reconciled`` saying why)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from luosho.client import (
    NOT_STARTED,
    UNKNOWN,
    Agent,
    AsyncClient,
    Client,
    Done,
    ReconcileCall,
    Tool,
    ToolContext,
)
from luoshod.server.app import Daemon

SCRIPT = [{"tool_calls": [{"name": "pay", "arguments": {"amount": 5}}]}, {"text": "paid"}]
AGENT = Agent("scripted:pay", tools=[Tool("pay")], model_settings={"script": SCRIPT})


async def leave_at_the_tool_call(address: str, sid: str, agent: Agent = AGENT, **kw: Any) -> None:
    """Execute until ``pay`` is handed out (its tool never answers), then leave."""
    started = asyncio.Event()

    async def pay(args: dict, ctx: ToolContext) -> str:
        assert (ctx.attempt, ctx.reconciled, ctx.may_have_run) == (1, "", False)
        started.set()
        await asyncio.Event().wait()  # cancelled when the run object closes
        return "never"

    async with AsyncClient(address) as client:
        async with client.execute(sid, "pay 5", agent=agent, tools={"pay": pay}, **kw) as run:
            async for event in run:
                if event.type == "tool.call":
                    await asyncio.wait_for(started.wait(), 10)
                    break
        cp = await client.get_session(sid)
        assert cp.attempts == {"call_0_0": 1}


@pytest.mark.asyncio
async def test_r77_done_from_the_reconcile_function_records_the_result(daemon: Daemon) -> None:
    address = daemon.addresses[0]
    await leave_at_the_tool_call(address, "done", reconcile={"pay": lambda call: UNKNOWN})
    asked: list[ReconcileCall] = []
    ran: list[int] = []

    async def check(call: ReconcileCall) -> Done:
        asked.append(call)
        return Done({"payment": call.tool_call_id})

    async with AsyncClient(address) as client:
        run = client.resume(
            "done", tools={"pay": lambda args: ran.append(1)}, reconcile={"pay": check}
        )
        types = [e.type async for e in run]
        result = await run
        assert result.finish_reason == "stop"
        [call] = asked
        assert (call.tool_call_id, call.tool_name, call.arguments, call.attempt) == (
            "call_0_0",
            "pay",
            {"amount": 5},
            1,
        )
        assert call.session_id == "done" and call.subagent is None
        assert ran == []  # DONE: the tool did not run again
        cp = await client.get_session("done")
        [paid] = [m for m in cp.messages if m.tool_call_id == "call_0_0"]
        assert json.loads(paid.content) == {"payment": "call_0_0"}
        assert [r.attempts for r in cp.tool_calls] == [1]
        assert cp.agent.tools[0].reconcile  # set by the client on the tool given a function
        assert "tool.reconcile" in types and "tool.call" not in types


@pytest.mark.asyncio
@pytest.mark.parametrize("answer", [NOT_STARTED, UNKNOWN], ids=lambda a: a.value)
async def test_r77_not_started_and_unknown_run_the_tool_with_attempt_2(
    daemon: Daemon, answer: Any
) -> None:
    address = daemon.addresses[0]
    await leave_at_the_tool_call(address, "again", reconcile={"pay": lambda call: answer})
    seen: list[tuple[int, str, bool]] = []

    def pay(args: dict, ctx: ToolContext) -> str:
        seen.append((ctx.attempt, ctx.reconciled, ctx.may_have_run))
        return "paid now"

    async with AsyncClient(address) as client:
        result = await client.resume(
            "again", tools={"pay": pay}, reconcile={"pay": lambda c: answer}
        )
        assert result.finish_reason == "stop"
        assert seen == [(2, answer.value, answer is UNKNOWN)]
        cp = await client.get_session("again")
        assert [r.attempts for r in cp.tool_calls] == [2]


@pytest.mark.asyncio
async def test_r77_the_blocking_client_answers_unknown_when_its_function_raises(
    daemon: Daemon,
) -> None:
    address = daemon.addresses[0]
    flagged = Agent(
        "scripted:pay", tools=[Tool("pay", reconcile=True)], model_settings={"script": SCRIPT}
    )
    await leave_at_the_tool_call(address, "sync", flagged)

    def broken(call: ReconcileCall) -> Done:
        raise RuntimeError("the provider is down")

    def resume() -> tuple[Any, list[tuple[int, str]]]:
        seen: list[tuple[int, str]] = []

        def pay(args: dict, ctx: ToolContext) -> str:
            seen.append((ctx.attempt, ctx.reconciled))
            return "checked by key"

        with Client(address) as client:
            run = client.resume("sync", tools={"pay": pay}, reconcile={"pay": broken})
            return run.result(), seen

    result, seen = await asyncio.to_thread(resume)
    assert result.finish_reason == "stop"
    assert seen == [(2, "UNKNOWN")]


@pytest.mark.asyncio
async def test_r77_a_tool_without_a_reconcile_function_is_answered_unknown_at_once(
    daemon: Daemon,
) -> None:
    address = daemon.addresses[0]
    flagged = Agent(
        "scripted:pay", tools=[Tool("pay", reconcile=True)], model_settings={"script": SCRIPT}
    )
    await leave_at_the_tool_call(address, "none", flagged)
    seen: list[str] = []
    began = time.monotonic()
    async with AsyncClient(address) as client:
        result = await client.resume(
            "none", tools={"pay": lambda args, ctx: seen.append(ctx.reconciled)}
        )
    assert result.finish_reason == "stop" and seen == ["UNKNOWN"]
    assert time.monotonic() - began < 10  # not the 30 s tool timeout
