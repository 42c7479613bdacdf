"""kill -9 of the daemon in flight of a sub-agent's daemon-tool call (docs/reference/rules.md R71 at
every level, R59): resumed on a fresh ``luoshod serve`` process over the same SQLite file
or LMDB directory, the call runs again with the same idempotency key — the sub-agent's
qualified call id — so the MCP server sees exactly two attempts with it, and the
sub-agent's transcript holds one result; no model turn of the tree is generated twice.
The MCP server is tests/support/mcp_server.py over stdio, started by the daemon."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.daemon_process import DaemonProcess
from tests.support.harness import Harness, agent, assert_valid_transcript, until
from tests.support.mcp_servers import attempts, children, reap, stdio_toml

STORES = {
    "sqlite": lambda tmp: f"sqlite:///{tmp}/luoshod.db",
    "lmdb": lambda tmp: f"lmdb://{tmp}/lmdb",
}
KEY = "c-task/c-hang"  # the sub-agent's call, qualified by the lead's task call (R58)


def _spec() -> pb.AgentSpec:
    sub = agent(
        [
            {
                "text": "",
                "tool_calls": [{"name": "files__hang_once", "arguments": {}, "id": "c-hang"}],
            },
            {"text": "worked"},
        ],
        [],
        instructions="You work.",
    )
    sub.mcp_servers.add(name="files")
    lead = agent(
        [
            {
                "text": "",
                "tool_calls": [
                    {
                        "name": "task",
                        "arguments": {"agent": "worker", "prompt": "go"},
                        "id": "c-task",
                    }
                ],
            },
            {"text": "lead done"},
        ],
        ["note"],
        instructions="You lead.",
    )
    lead.subagents.add(name="worker", description="works", agent=sub)
    return lead


@pytest.mark.parametrize("store", sorted(STORES))
async def test_r71_kill9_during_a_subagents_mcp_call_runs_it_again_with_the_same_key(
    tmp_path: Path, store: str
) -> None:
    attempts_file = tmp_path / "attempts.jsonl"
    calls_log = tmp_path / "calls.jsonl"
    args = (
        "--store",
        STORES[store](tmp_path),
        "--config",
        str(stdio_toml(tmp_path, attempts_file)),
        "--lease-owner",
        "mcp-sub-crash",
        "--scripted-call-log",
        str(calls_log),
    )
    first = DaemonProcess(*args).start()
    spawned: list[int] = []
    try:
        h = Harness(first.address)
        run = asyncio.create_task(h.run("s-sub-k", "go", _spec()))
        await until(lambda: len(attempts(attempts_file, KEY)) == 1)  # in flight, hanging
        spawned = children(first.proc.pid)
        first.kill9()
        log = await run
        assert log.error is not None and log.done is None
        await h.close()
    finally:
        first.stop()
        reap(spawned)

    second = DaemonProcess(*args).start()
    try:
        h = Harness(second.address, call_log=calls_log)
        log = await h.run("s-sub-k", resume=True)  # the saved agent (its daemon tools included)
        assert log.done is not None and log.done.finish_reason == pb.FINISH_REASON_STOP, log.error
        (tc,) = log.of("tool.call")
        assert (tc.tool_call.call.id, tc.tool_call.executor) == (KEY, pb.TOOL_EXECUTOR_DAEMON)
        assert list(tc.subagent.path) == ["worker"]
        assert [a["key"] for a in attempts(attempts_file)] == [KEY, KEY]  # one key, two attempts
        cp = await h.get("s-sub-k")
        (task,) = cp.tasks
        mine = [m for m in task.messages if m.role == pb.ROLE_TOOL]
        assert [m.tool_call_id for m in mine] == ["c-hang"] and "answered on attempt 2" in mine[
            0
        ].content
        assert [m.tool_call_id for m in cp.messages if m.role == pb.ROLE_TOOL] == ["c-task"]
        # Lead 2 turns, worker 2 turns, each generated once: the worker's turn that made
        # the call was saved before the call went out (R1) and was not asked for again.
        assert h.model_calls("s-sub-k") == 4
        assert_valid_transcript(cp)
        await h.close()
    finally:
        spawned = children(second.proc.pid)
        second.stop()
        reap(spawned)
