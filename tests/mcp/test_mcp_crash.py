"""kill -9 of the daemon around a daemon tool's call (docs/reference/rules.md R71, R24, R21,
R77): a call in flight runs again on resume with the same idempotency key (the server sees
exactly two attempts with it, the transcript one result, its tool.call attempt 2); a call
whose result was saved is never run again. The daemon is a real ``luoshod serve`` process
on a SQLite file; the MCP server is tests/support/mcp_server.py over stdio, started by the
daemon from its TOML file."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.harness import Harness, agent, assert_valid_transcript
from tests.support.mcp_servers import attempts, children, reap, stdio_toml, wait_for


def _spec(script: list[dict], tools: tuple[str, ...] = ()) -> pb.AgentSpec:
    spec = agent(script, list(tools))
    spec.mcp_servers.add(name="files")
    return spec


@pytest.fixture
def attempts_file(tmp_path: Path) -> Path:
    return tmp_path / "attempts.jsonl"


def _daemon(tmp_path: Path, attempts_file: Path) -> DaemonProcess:
    # A stable lease owner: the restarted daemon takes back what its killed incarnation held.
    return DaemonProcess(
        "--store",
        db_url(tmp_path),
        "--config",
        str(stdio_toml(tmp_path, attempts_file)),
        "--lease-owner",
        "mcp-crash",
    ).start()


async def test_r71_kill9_during_a_daemon_call_runs_it_again_with_the_same_key(
    tmp_path: Path, attempts_file: Path
) -> None:
    script = [
        {"text": "", "tool_calls": [{"name": "files__hang_once", "arguments": {}, "id": "c-k1"}]},
        {"text": "ok"},
    ]
    first = _daemon(tmp_path, attempts_file)
    spawned: list[int] = []
    try:
        h = Harness(first.address)
        run = asyncio.create_task(h.run("s-k1", "go", _spec(script)))
        await wait_for(lambda: len(attempts(attempts_file, "c-k1")) == 1)  # in flight, hanging
        spawned = children(first.proc.pid)
        first.kill9()
        log = await run
        assert log.error is not None and log.done is None
        await h.close()
    finally:
        first.stop()
        reap(spawned)

    second = _daemon(tmp_path, attempts_file)
    try:
        h = Harness(second.address)
        log = await h.run("s-k1", resume=True)  # the saved agent: no spec sent
        assert log.done is not None and log.done.finish_reason == pb.FINISH_REASON_STOP, log.error
        (tc,) = [e.tool_call for e in log.of("tool.call")]
        assert (tc.call.id, tc.executor) == ("c-k1", pb.TOOL_EXECUTOR_DAEMON)
        assert tc.attempt == 2  # R77: its second hand-out, counted like an app's call
        assert len(attempts(attempts_file, "c-k1")) == 2  # exactly two attempts with that key
        cp = await h.get("s-k1")
        assert [(r.call.id, r.attempts) for r in cp.tool_calls] == [("c-k1", 2)]
        mine = [m for m in cp.messages if m.role == pb.ROLE_TOOL and m.tool_call_id == "c-k1"]
        assert len(mine) == 1 and "answered on attempt 2" in mine[0].content
        assert_valid_transcript(cp)
        await h.close()
    finally:
        spawned = children(second.proc.pid)
        second.stop()
        reap(spawned)


async def test_r71_kill9_after_the_result_was_saved_never_runs_it_again(
    tmp_path: Path, attempts_file: Path
) -> None:
    script = [
        {
            "text": "",
            "tool_calls": [{"name": "files__add", "arguments": {"a": 1, "b": 2}, "id": "c-k2"}],
        },
        {"text": "", "tool_calls": [{"name": "wait", "arguments": {}, "id": "c-w"}]},
        {"text": "ok"},
    ]
    spec = _spec(script, ("wait",))
    first = _daemon(tmp_path, attempts_file)
    spawned: list[int] = []
    try:
        h = Harness(first.address)
        asked = asyncio.Event()
        run = asyncio.create_task(
            h.run(
                "s-k2",
                "go",
                spec,
                on_event=lambda e: asked.set() if e.tool_call.call.id == "c-w" else None,
            )
        )
        await asyncio.wait_for(asked.wait(), 30)  # the app's tool waits: c-k2's result is saved
        spawned = children(first.proc.pid)
        first.kill9()
        await run
        await h.close()
    finally:
        first.stop()
        reap(spawned)

    second = _daemon(tmp_path, attempts_file)
    try:
        h = Harness(second.address)
        log = await h.run("s-k2", resume=True, tools={"wait": lambda args: "waited"})
        assert log.done is not None and log.done.finish_reason == pb.FINISH_REASON_STOP, log.error
        assert [e.tool_call.call.id for e in log.of("tool.call")] == ["c-w"]
        assert len(attempts(attempts_file, "c-k2")) == 1  # no second attempt
        cp = await h.get("s-k2")
        assert [m.tool_call_id for m in cp.messages if m.role == pb.ROLE_TOOL] == ["c-k2", "c-w"]
        assert_valid_transcript(cp)
        await h.close()
    finally:
        spawned = children(second.proc.pid)
        second.stop()
        reap(spawned)
