"""AsyncClient against the null server: tools run, results submitted, events streamed."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from client_scripts import calls, scripted, text

from luosho.client import AsyncClient, RunResult, ToolContext
from luosho.v1 import agent_pb2


def tool_results(result: RunResult) -> list[agent_pb2.ToolResult]:
    return [e.tool_result for e in result.events if e.type == "tool.result"]


async def test_tools_get_their_arguments_and_results_are_submitted(target: str) -> None:
    seen: list[dict[str, Any]] = []

    async def add(args: dict[str, Any]) -> dict[str, int]:
        seen.append(args)
        return {"sum": args["a"] + args["b"]}

    agent = scripted(
        calls(("add", {"a": 1, "b": 2})),
        calls(("add", {"a": 3, "b": 4})),
        text("7"),
        tools=("add",),
    )
    async with AsyncClient(target) as client:
        result = await client.execute("s-args", "add", agent=agent, tools={"add": add})

    assert seen == [{"a": 1, "b": 2}, {"a": 3, "b": 4}]
    # The null server echoes what SubmitToolResult carried into tool.result.
    assert [(r.tool_call_id, r.result_json, r.is_error) for r in tool_results(result)] == [
        ("call_0_0", '{"sum":3}', False),
        ("call_1_0", '{"sum":7}', False),
    ]
    assert (result.finish_reason, result.status, result.final_text) == ("stop", "finished", "7")
    assert result.ran and result.step_index == 3 and result.session_id == "s-args"
    assert result.usage.model_calls == 3


async def test_events_stream_in_order_and_end_with_run_done(target: str) -> None:
    agent = scripted(calls(("echo", {})), text("ok"), tools=("echo",))
    async with AsyncClient(target) as client:
        run = client.execute("s-order", "hi", agent=agent, tools={"echo": lambda args: args})
        types = [event.type async for event in run]
        result = await run  # after iteration: the same result, no second RPC

    assert types == [
        "run.start",
        "step.start",
        "model.turn",
        "tool.call",
        "tool.result",
        "step.done",
        "step.start",
        "model.turn",
        "step.done",
        "run.done",
    ]
    assert [e.seq for e in result.events] == list(range(1, 11))
    assert result.events[-1].type == "run.done"
    assert run.result is result


async def test_sync_tool_with_context_runs_off_the_event_loop(target: str) -> None:
    contexts: list[ToolContext] = []
    threads: list[int] = []

    def lookup(args: dict[str, Any], ctx: ToolContext) -> str:
        contexts.append(ctx)
        threads.append(threading.get_ident())
        return f"found {args['q']}"

    agent = scripted(calls(("lookup", {"q": "x"})), text("done"), tools=("lookup",))
    async with AsyncClient(target) as client:
        result = await client.execute("s-ctx", "go", agent=agent, tools={"lookup": lookup})

    assert tool_results(result)[0].result_json == '"found x"'
    (ctx,) = contexts
    assert (ctx.session_id, ctx.tool_call_id, ctx.tool_name, ctx.step) == (
        "s-ctx",
        "call_0_0",
        "lookup",
        1,
    )
    assert ctx.timeout_ms > 0
    assert threads != [threading.get_ident()]


async def test_calls_handed_out_together_run_concurrently(target: str) -> None:
    barrier = asyncio.Barrier(3)  # passes only if all three calls are running at once

    async def meet(args: dict[str, Any]) -> int:
        async with asyncio.timeout(10):
            await barrier.wait()
        return args["n"]

    agent = scripted(
        calls(("meet", {"n": 0}), ("meet", {"n": 1}), ("meet", {"n": 2})),
        text("met"),
        tools=("meet",),
        tool_concurrency=3,
    )
    async with AsyncClient(target) as client:
        result = await client.execute("s-conc", "go", agent=agent, tools={"meet": meet})

    assert [(r.result_json, r.is_error) for r in tool_results(result)] == [
        ("0", False),
        ("1", False),
        ("2", False),
    ]


async def test_unknown_tool_gets_an_error_result(target: str) -> None:
    agent = scripted(calls(("missing", {})), text("sorry"))
    async with AsyncClient(target) as client:
        result = await client.execute("s-unknown", "go", agent=agent, tools={})

    (res,) = tool_results(result)
    assert res.is_error
    assert json.loads(res.result_json)["error"].startswith("UnknownToolError: ")
    assert result.finish_reason == "stop"


async def test_exception_in_tool_becomes_an_error_result(target: str) -> None:
    def explode(args: dict[str, Any]) -> None:
        raise ValueError(f"bad city {args['city']}")

    agent = scripted(calls(("explode", {"city": "Atlantis"})), text("oops"), tools=("explode",))
    async with AsyncClient(target) as client:
        result = await client.execute("s-exc", "go", agent=agent, tools={"explode": explode})

    (res,) = tool_results(result)
    assert (res.result_json, res.is_error) == ('{"error":"ValueError: bad city Atlantis"}', True)


async def test_unencodable_return_value_becomes_an_error_result(target: str) -> None:
    agent = scripted(calls(("odd", {})), text("hm"), tools=("odd",))
    async with AsyncClient(target) as client:
        result = await client.execute("s-enc", "go", agent=agent, tools={"odd": lambda a: {1, 2}})

    (res,) = tool_results(result)
    assert res.is_error and json.loads(res.result_json)["error"].startswith("TypeError: ")


async def test_resume_of_a_session_with_nothing_to_run(target: str) -> None:
    async with AsyncClient(target) as client:
        run = client.resume("s-done")
        assert [e async for e in run] == []
        result = await run

    assert (result.ran, result.status, result.finish_reason, result.events) == (
        False,
        "finished",
        "",
        [],
    )
