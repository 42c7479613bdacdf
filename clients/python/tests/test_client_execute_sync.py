"""The blocking Client against the null server."""

from __future__ import annotations

import json
import threading
from typing import Any

from client_scripts import calls, scripted, text

from luosho.client import Client, RunResult, ToolContext
from luosho.v1 import agent_pb2


def tool_results(result: RunResult) -> list[agent_pb2.ToolResult]:
    return [e.tool_result for e in result.events if e.type == "tool.result"]


def test_tools_get_their_arguments_and_results_are_submitted(target: str) -> None:
    seen: list[tuple[dict[str, Any], str]] = []

    def add(args: dict[str, Any], ctx: ToolContext) -> dict[str, int]:
        seen.append((args, ctx.tool_call_id))
        return {"sum": args["a"] + args["b"]}

    agent = scripted(
        calls(("add", {"a": 1, "b": 2})),
        calls(("add", {"a": 3, "b": 4})),
        text("7"),
        tools=("add",),
    )
    with Client(target) as client:
        run = client.execute("sync-args", "add", agent=agent, tools={"add": add})
        types = [event.type for event in run]
        result = run.result()

    assert seen == [({"a": 1, "b": 2}, "call_0_0"), ({"a": 3, "b": 4}, "call_1_0")]
    assert [(r.result_json, r.is_error) for r in tool_results(result)] == [
        ('{"sum":3}', False),
        ('{"sum":7}', False),
    ]
    assert types[0] == "run.start" and types[-1] == "run.done"
    assert (result.finish_reason, result.status, result.final_text) == ("stop", "finished", "7")


def test_async_tool_runs_in_the_blocking_client(target: str) -> None:
    async def shout(args: dict[str, Any]) -> str:
        return args["word"].upper()

    agent = scripted(calls(("shout", {"word": "hey"})), text("done"), tools=("shout",))
    with Client(target) as client:
        result = client.execute("sync-async", "go", agent=agent, tools={"shout": shout}).result()

    assert tool_results(result)[0].result_json == '"HEY"'


def test_calls_handed_out_together_run_concurrently(target: str) -> None:
    barrier = threading.Barrier(3, timeout=10)  # broken unless all three run at once

    def meet(args: dict[str, Any]) -> int:
        barrier.wait()
        return args["n"]

    agent = scripted(
        calls(("meet", {"n": 0}), ("meet", {"n": 1}), ("meet", {"n": 2})),
        text("met"),
        tools=("meet",),
        tool_concurrency=3,
    )
    with Client(target, max_tool_workers=4) as client:
        result = client.execute("sync-conc", "go", agent=agent, tools={"meet": meet}).result()

    assert [(r.result_json, r.is_error) for r in tool_results(result)] == [
        ("0", False),
        ("1", False),
        ("2", False),
    ]


def test_unknown_tool_and_exception_get_error_results(target: str) -> None:
    def explode(args: dict[str, Any]) -> None:
        raise RuntimeError("boom")

    agent = scripted(calls(("explode", {}), ("missing", {})), text("oops"), tools=("explode",))
    with Client(target) as client:
        result = client.execute("sync-err", "go", agent=agent, tools={"explode": explode}).result()

    boom, missing = tool_results(result)
    assert (boom.result_json, boom.is_error) == ('{"error":"RuntimeError: boom"}', True)
    assert missing.is_error
    assert json.loads(missing.result_json)["error"].startswith("UnknownToolError: ")


def test_resume_of_a_session_with_nothing_to_run(target: str) -> None:
    with Client(target) as client:
        result = client.resume("sync-done").result()

    assert (result.ran, result.status) == (False, "finished")


def test_unary_calls(target: str) -> None:
    with Client(target) as client:
        assert client.cancel("sync-unary") is False
        assert client.delete_session("sync-unary", keep_history=True) is False
        assert list(client.list_sessions(status="finished")) == []
