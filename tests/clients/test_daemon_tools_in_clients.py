"""Every client shows who runs a call (``executor`` on ``tool.call``) and never asks the
app's handlers to run a daemon tool (R71). Python here, both clients, against a real
daemon and the real stdio MCP server of tests/mcp_servers/; Go, TypeScript and Java in
their own test suites."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from luosho.client import (
    Agent,
    AsyncClient,
    Client,
    McpRetry,
    McpServer,
    McpToolOverride,
    Tool,
    is_daemon_call,
)
from luosho.v1 import agent_pb2 as pb
from luoshod.server.app import Config, Daemon
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.mcp_servers import attempts, stdio_config, stdio_toml

SCRIPT = [
    {
        "text": "",
        "tool_calls": [
            {"name": "note", "arguments": {}, "id": "c-note"},
            {"name": "files__add", "arguments": {"a": 20, "b": 22}, "id": "c-add"},
            {"name": "files__flaky", "arguments": {}, "id": "c-flaky"},
        ],
    },
    {"text": "42"},
]


def _agent() -> Agent:
    return Agent(
        model="scripted:mcp",
        tools=[Tool("note")],
        mcp_servers=[
            McpServer(
                "files", tools={"flaky": McpToolOverride(retry=McpRetry(3, 0, ["tool_error"]))}
            )
        ],
        model_settings={"script": SCRIPT},
        tool_concurrency=3,
    )


def _check(events: list[pb.Event], asked: list[str], attempts_file: Path) -> None:
    calls = {e.tool_call.call.id: is_daemon_call(e) for e in events if e.type == "tool.call"}
    assert calls == {"c-note": False, "c-add": True, "c-flaky": True}
    assert asked == ["note"]  # the daemon tools were never handed to the app's handlers
    results = {e.tool_result.tool_call_id: e.tool_result for e in events if e.type == "tool.result"}
    assert json.loads(results["c-add"].result_json) == {"result": "42"}
    assert "attempt 3" in results["c-flaky"].result_json
    assert [e.tool_retry.attempt for e in events if e.type == "tool.retry"] == [1, 2]
    assert sorted({a["key"] for a in attempts(attempts_file)}) == ["c-add", "c-flaky"]


def _handlers(asked: list[str]) -> dict[str, Any]:
    def handler(name: str) -> Any:
        def run(args: dict[str, Any]) -> str:
            asked.append(name)
            return "from the app"

        return run

    return {n: handler(n) for n in ("note", "files__add", "files__flaky")}


async def test_r71_async_python_client_leaves_daemon_tools_to_the_daemon(tmp_path: Path) -> None:
    attempts_file = tmp_path / "attempts.jsonl"
    d = Daemon(
        Config(
            listen=["127.0.0.1:0"],
            store="memory://",
            mcp_servers={"files": stdio_config("files", attempts_file)},
        )
    )
    await d.start()
    asked: list[str] = []
    try:
        async with AsyncClient(d.addresses[0]) as client:
            run = client.execute("py-async", "go", agent=_agent(), tools=_handlers(asked))
            events = [e async for e in run]
            result = run.result
        assert (result.finish_reason, result.final_text) == ("stop", "42")
        _check(events, asked, attempts_file)
    finally:
        await d.stop()


def test_r71_blocking_python_client_leaves_daemon_tools_to_the_daemon(tmp_path: Path) -> None:
    attempts_file = tmp_path / "attempts.jsonl"
    config = stdio_toml(tmp_path, attempts_file)
    daemon = DaemonProcess("--store", db_url(tmp_path), "--config", str(config)).start()
    asked: list[str] = []
    try:
        with Client(daemon.address) as client:
            run = client.execute("py-sync", "go", agent=_agent(), tools=_handlers(asked))
            events = list(run)
            result = run.result()
        assert (result.finish_reason, result.final_text) == ("stop", "42")
        _check(events, asked, attempts_file)
    finally:
        daemon.terminate()
        daemon.stop()
