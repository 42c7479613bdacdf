"""Daemon tools over MCP (docs/reference/rules.md R70–R73), against real MCP servers written with
the
official SDK (tests/support/mcp_server.py): over stdio, started by the daemon, and over
streamable HTTP on loopback, started by the test."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.server.app import Config, Daemon
from tests.support.harness import Harness, agent, assert_valid_transcript, error_info
from tests.support.mcp_servers import HttpServer, attempts, http_config, stdio_config


def _call(name: str, args: dict, id_: str) -> dict:
    return {"name": name, "arguments": args, "id": id_}


def turn(*tool_calls: dict) -> dict:
    return {"text": "", "tool_calls": list(tool_calls)}


def mcp_agent(
    script: list[dict], *uses: pb.McpServerUse, tools: tuple[str, ...] = (), **kw: object
) -> pb.AgentSpec:
    spec = agent(script, list(tools), **kw)
    spec.mcp_servers.extend(uses or [pb.McpServerUse(name="files")])
    return spec


@pytest.fixture
def attempts_file(tmp_path: Path) -> Path:
    return tmp_path / "attempts.jsonl"


@pytest.fixture
def config(tmp_path: Path, attempts_file: Path) -> Config:
    return Config(
        listen=["127.0.0.1:0"],
        store=f"sqlite:///{tmp_path}/luoshod.db",
        scripted_call_log=tmp_path / "calls.jsonl",
        tool_timeout_s=30,
        drain_timeout_s=5,
        mcp_servers={"files": stdio_config("files", attempts_file)},
    )


@pytest.fixture
async def h(config: Config) -> AsyncIterator[Harness]:
    d = Daemon(config)
    await d.start()
    harness = Harness(d.addresses[0], d, config.scripted_call_log)
    try:
        yield harness
    finally:
        await harness.close()
        await d.stop()


def finished(log: object) -> int:
    """The run's finish reason (-1 when it ended without run.done: see log.error)."""
    done = log.done  # type: ignore[attr-defined]
    return done.finish_reason if done is not None else -1


def results(cp: pb.Checkpoint) -> dict[str, pb.Message]:
    return {m.tool_call_id: m for m in cp.messages if m.role == pb.ROLE_TOOL}


async def test_r70_r71_stdio_tools_join_and_run_in_the_daemon(
    h: Harness, attempts_file: Path
) -> None:
    assert [(x.name, x.state) for x in h.daemon.mcp.states()] == [("files", "not started")]  # lazy
    spec = mcp_agent([turn(_call("files__add", {"a": 2, "b": 3}, "c-add")), {"text": "5"}])
    log = await h.run("s1", "add", spec)
    assert finished(log) == pb.FINISH_REASON_STOP, log.error
    (tc,) = log.of("tool.call")
    assert tc.tool_call.executor == pb.TOOL_EXECUTOR_DAEMON
    cp = await h.get("s1")
    assert json.loads(results(cp)["c-add"].content) == {"result": "5"}
    assert not results(cp)["c-add"].is_error
    # R71: the call id is the idempotency key the server saw
    assert [a["key"] for a in attempts(attempts_file)] == ["c-add"]
    # R70: the fingerprint covers the server's tools, by their joined names
    assert "files__add" in cp.fingerprint.tool_schema_hashes
    assert "files__hang" in cp.fingerprint.tool_schema_hashes
    assert_valid_transcript(cp)


async def test_r70_allow_list_limits_the_tools(h: Harness, attempts_file: Path) -> None:
    use = pb.McpServerUse(name="files", allow_tools=["add"])
    spec = mcp_agent([turn(_call("files__lookup", {"word": "x"}, "c-l")), {"text": "no"}], use)
    log = await h.run("s-allow", "look", spec)
    assert finished(log) == pb.FINISH_REASON_STOP
    cp = await h.get("s-allow")
    assert set(cp.fingerprint.tool_schema_hashes) == {"files__add"}
    r = results(cp)["c-l"]
    assert r.is_error and "unknown tool" in json.loads(r.content)["error"]  # R25
    assert attempts(attempts_file) == []


async def test_r25_arguments_checked_against_the_servers_schema(
    h: Harness, attempts_file: Path
) -> None:
    spec = mcp_agent([turn(_call("files__add", {"a": "two"}, "c-bad")), {"text": "no"}])
    log = await h.run("s-schema", "add", spec)
    assert finished(log) == pb.FINISH_REASON_STOP
    r = results(await h.get("s-schema"))["c-bad"]
    assert r.is_error and "input schema" in json.loads(r.content)["error"]
    assert log.of("tool.call") == []  # nobody was asked to run it
    assert attempts(attempts_file) == []


async def test_r70_unknown_server_is_invalid_argument_and_stores_nothing(h: Harness) -> None:
    spec = mcp_agent([{"text": "hi"}], pb.McpServerUse(name="nope"))
    log = await h.run("s-unknown", "hi", spec)
    assert log.error is not None
    code, reason, meta = error_info(log.error)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_MCP_SERVER")
    assert meta["server"] == "nope" and meta["known"] == "files"
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await h.get("s-unknown")
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    assert h.model_calls("s-unknown") == 0


async def test_mcp_servers_shape_is_checked(h: Harness) -> None:
    spec = mcp_agent([{"text": "hi"}], pb.McpServerUse(name="files"), pb.McpServerUse(name="files"))
    log = await h.run("s-twice", "hi", spec)
    code, reason, meta = error_info(log.error)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_MCP_SERVERS")
    assert meta["field"] == "agent.mcp_servers[1].name"


async def test_r72_destructive_tool_needs_approval(h: Harness, attempts_file: Path) -> None:
    spec = mcp_agent(
        [turn(_call("files__delete_record", {"record": "r1"}, "c-del")), {"text": "done"}]
    )
    log = await h.run("s-gate", "delete", spec)
    assert finished(log) == pb.FINISH_REASON_AWAITING_APPROVAL
    (ap,) = log.of("approval.requested")
    assert attempts(attempts_file) == []  # paused before it ran
    resolve = h.stub.Resolve(
        pb.ResolveRequest(approval_id=ap.approval_requested.approval.approval_id, approved=True)
    )
    events = [r.event async for r in resolve]
    assert events[-1].run_done.finish_reason == pb.FINISH_REASON_STOP
    assert [a["key"] for a in attempts(attempts_file)] == ["c-del"]  # R29: runs once
    assert json.loads(results(await h.get("s-gate"))["c-del"].content) == {"result": "deleted r1"}


async def test_r72_spec_gates_and_ungates(h: Harness, attempts_file: Path) -> None:
    use = pb.McpServerUse(
        name="files",
        tool_overrides=[
            pb.McpToolOverride(tool="delete_record", approval=pb.MCP_APPROVAL_UNGATE),
            pb.McpToolOverride(tool="add", approval=pb.MCP_APPROVAL_GATE),
        ],
    )
    spec = mcp_agent(
        [
            turn(
                _call("files__delete_record", {"record": "r2"}, "c-d2"),
                _call("files__add", {"a": 1, "b": 1}, "c-a2"),
            ),
            {"text": "done"},
        ],
        use,
    )
    log = await h.run("s-over", "go", spec)
    assert finished(log) == pb.FINISH_REASON_AWAITING_APPROVAL
    assert (
        log.of("approval.requested")[0].approval_requested.approval.tool_call.name == "files__add"
    )
    assert [a["key"] for a in attempts(attempts_file)] == ["c-d2"]  # ungated: ran at once


async def test_r73_timeout_gives_an_error_result_and_the_run_goes_on(
    h: Harness, attempts_file: Path
) -> None:
    use = pb.McpServerUse(name="files", timeout_ms=400)
    spec = mcp_agent([turn(_call("files__hang", {}, "c-hang")), {"text": "gave up"}], use)
    log = await h.run("s-hang", "hang", spec)
    assert finished(log) == pb.FINISH_REASON_STOP
    assert log.of("tool.call")[0].tool_call.timeout_ms == 400
    body = json.loads(results(await h.get("s-hang"))["c-hang"].content)
    assert body["failure"] == "timeout" and body["attempts"] == 1
    assert log.of("tool.retry") == []  # one attempt by default


async def test_r73_flaky_tool_is_retried_with_a_tool_retry_event_each_time(
    h: Harness, attempts_file: Path
) -> None:
    use = pb.McpServerUse(
        name="files",
        tool_overrides=[
            pb.McpToolOverride(
                tool="flaky",
                retry=pb.McpRetryPolicy(
                    attempts=3, backoff_ms=10, retry_on=[pb.MCP_RETRY_ON_TOOL_ERROR]
                ),
            )
        ],
    )
    spec = mcp_agent([turn(_call("files__flaky", {}, "c-flaky")), {"text": "ok"}], use)
    log = await h.run("s-flaky", "go", spec)
    assert finished(log) == pb.FINISH_REASON_STOP
    retries = [e.tool_retry for e in log.of("tool.retry")]
    assert [(r.attempt, r.delay_ms, r.tool_call_id) for r in retries] == [
        (1, 10, "c-flaky"),
        (2, 20, "c-flaky"),
    ]
    assert "flaky failure #1" in retries[0].error
    r = results(await h.get("s-flaky"))["c-flaky"]
    assert not r.is_error and "answered on attempt 3" in r.content
    assert [a["key"] for a in attempts(attempts_file)] == ["c-flaky"] * 3  # one key for all


async def test_r73_tool_error_without_retry_is_the_result(h: Harness, attempts_file: Path) -> None:
    spec = mcp_agent([turn(_call("files__flaky", {}, "c-f1")), {"text": "ok"}])
    log = await h.run("s-f1", "go", spec)
    assert finished(log) == pb.FINISH_REASON_STOP
    r = results(await h.get("s-f1"))["c-f1"]
    assert r.is_error and "flaky failure #1" in r.content
    assert len(attempts(attempts_file)) == 1


async def test_mixed_turn_runs_client_and_daemon_tools_concurrently_in_call_order(
    h: Harness, attempts_file: Path
) -> None:
    spec = mcp_agent(
        [
            turn(
                _call("note", {}, "c-1"),
                _call("files__slow", {"ms": 300}, "c-2"),
                _call("files__add", {"a": 1, "b": 2}, "c-3"),
                _call("note", {}, "c-4"),
            ),
            {"text": "all done"},
        ],
        tools=("note",),
        tool_concurrency=4,
    )
    asked: list[str] = []

    def note(args: dict) -> str:
        asked.append("note")
        return "noted"

    log = await h.run("s-mixed", "go", spec, {"note": note})
    assert finished(log) == pb.FINISH_REASON_STOP, log.error
    executors = {e.tool_call.call.id: e.tool_call.executor for e in log.of("tool.call")}
    assert executors == {
        "c-1": pb.TOOL_EXECUTOR_CLIENT,
        "c-2": pb.TOOL_EXECUTOR_DAEMON,
        "c-3": pb.TOOL_EXECUTOR_DAEMON,
        "c-4": pb.TOOL_EXECUTOR_CLIENT,
    }
    assert asked == ["note", "note"]
    cp = await h.get("s-mixed")
    assert [m.tool_call_id for m in cp.messages if m.role == pb.ROLE_TOOL] == [
        "c-1",
        "c-2",
        "c-3",
        "c-4",
    ]
    assert [e.tool_result.tool_call_id for e in log.of("tool.result")] == [
        "c-1",
        "c-2",
        "c-3",
        "c-4",
    ]
    assert_valid_transcript(cp)


async def test_r73_server_that_cannot_start_gives_error_results_not_a_failed_run(
    tmp_path: Path,
) -> None:
    cfg = Config(
        listen=["127.0.0.1:0"],
        store="memory://",
        tool_timeout_s=10,
        mcp_servers={"gone": http_config("gone", "http://127.0.0.1:9/mcp")},
    )
    d = Daemon(cfg)
    await d.start()
    h = Harness(d.addresses[0], d)
    try:
        spec = mcp_agent(
            [turn(_call("gone__add", {}, "c-g")), {"text": "sorry"}], pb.McpServerUse(name="gone")
        )
        log = await h.run("s-gone", "go", spec)
        assert finished(log) == pb.FINISH_REASON_STOP, log.error
        r = results(await h.get("s-gone"))["c-g"]
        assert r.is_error  # unknown: the server listed nothing (R25)
    finally:
        await h.close()
        await d.stop()


async def test_streamable_http_server_with_a_token(tmp_path: Path, attempts_file: Path) -> None:
    server = HttpServer(attempts_file, token="tok-123").start()
    cfg = Config(
        listen=["127.0.0.1:0"],
        store="memory://",
        tool_timeout_s=10,
        mcp_servers={
            "web": http_config("web", server.url, "tok-123"),
            "bad": http_config("bad", server.url, "wrong"),
        },
    )
    d = Daemon(cfg)
    await d.start()
    h = Harness(d.addresses[0], d)
    try:
        spec = mcp_agent(
            [turn(_call("web__lookup", {"word": "durable"}, "c-w")), {"text": "ok"}],
            pb.McpServerUse(name="web"),
        )
        log = await h.run("s-web", "go", spec)
        assert finished(log) == pb.FINISH_REASON_STOP, log.error
        assert log.of("tool.call")[0].tool_call.executor == pb.TOOL_EXECUTOR_DAEMON
        assert "durable: found" in results(await h.get("s-web"))["c-w"].content
        assert [a["key"] for a in attempts(attempts_file)] == ["c-w"]
        # a refused token: the run still finishes; the tool is unknown to it
        spec = mcp_agent(
            [turn(_call("bad__lookup", {"word": "x"}, "c-b")), {"text": "ok"}],
            pb.McpServerUse(name="bad"),
        )
        log = await h.run("s-bad", "go", spec)
        assert finished(log) == pb.FINISH_REASON_STOP, log.error
        assert results(await h.get("s-bad"))["c-b"].is_error
        states = {s.name: s for s in d.mcp.states()}
        assert states["web"].state == "running" and states["bad"].state == "down"
    finally:
        await h.close()
        await d.stop()
        server.stop()


def _stdio_children() -> list[int]:
    """Pids of this process's stdio MCP test servers (children of the in-process daemon)."""
    import os

    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if (
            ppid == os.getpid()
            and b"stdio" in cmd
            and any(c.endswith(b"support/mcp_server.py") for c in cmd)
        ):
            out.append(int(pid))
    return out


async def test_a_stdio_server_that_died_is_started_again(h: Harness, attempts_file: Path) -> None:
    import os
    import signal

    spec = mcp_agent([turn(_call("files__add", {"a": 1, "b": 1}, "c-r1")), {"text": "2"}])
    assert finished(await h.run("s-r1", "go", spec)) == pb.FINISH_REASON_STOP
    (pid,) = _stdio_children()
    os.kill(pid, signal.SIGKILL)
    spec = mcp_agent([turn(_call("files__add", {"a": 2, "b": 2}, "c-r2")), {"text": "4"}])
    log = await h.run("s-r2", "go", spec)
    assert finished(log) == pb.FINISH_REASON_STOP, log.error
    assert json.loads(results(await h.get("s-r2"))["c-r2"].content) == {"result": "4"}
    assert [p for p in _stdio_children() if p != pid]  # a new process
    state = {s.name: s for s in h.daemon.mcp.states()}["files"]
    assert state.starts == 2 and state.state == "running"


async def test_stop_ends_the_stdio_servers(config: Config) -> None:
    d = Daemon(config)
    await d.start()
    h = Harness(d.addresses[0], d)
    try:
        spec = mcp_agent([turn(_call("files__add", {"a": 1, "b": 1}, "c-s")), {"text": "2"}])
        assert finished(await h.run("s-stop", "go", spec)) == pb.FINISH_REASON_STOP
        assert len(_stdio_children()) == 1
    finally:
        await h.close()
        await d.stop()
    assert _stdio_children() == []


@pytest.mark.parametrize("policy", ["warn", "error"])
async def test_r70_a_server_whose_tools_changed_between_pause_and_resume_is_drift(
    tmp_path: Path, attempts_file: Path, policy: str
) -> None:
    server = HttpServer(attempts_file).start()
    cfg = Config(
        listen=["127.0.0.1:0"],
        store=f"sqlite:///{tmp_path}/d.db",
        tool_timeout_s=10,
        mcp_servers={"web": http_config("web", server.url)},
    )
    d = Daemon(cfg)
    await d.start()
    h = Harness(d.addresses[0], d)
    drift = pb.AGENT_DRIFT_POLICY_WARN if policy == "warn" else pb.AGENT_DRIFT_POLICY_ERROR
    spec = mcp_agent(
        [turn(_call("web__delete_record", {"record": "x"}, "c-dr")), {"text": "done"}],
        pb.McpServerUse(name="web"),
        on_agent_drift=drift,
    )
    try:
        log = await h.run("s-drift", "delete", spec)
        assert finished(log) == pb.FINISH_REASON_AWAITING_APPROVAL
        approval_id = log.of("approval.requested")[0].approval_requested.approval.approval_id
        server.stop()
        server = HttpServer(
            attempts_file, variant="2", port=server.port
        ).start()  # the list changed
        call = h.stub.Resolve(pb.ResolveRequest(approval_id=approval_id, approved=True, agent=spec))
        if policy == "warn":
            events = [r.event async for r in call]
            (dr,) = [e.agent_drift for e in events if e.type == "agent.drift"]
            assert list(dr.tools_changed) == ["web__lookup"] and list(dr.tools_added) == [
                "web__extra"
            ]
            assert events[-1].run_done.finish_reason == pb.FINISH_REASON_STOP
            assert [a["key"] for a in attempts(attempts_file)] == ["c-dr"]
        else:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                [r async for r in call]
            code, reason, meta = error_info(err.value)
            assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "AGENT_DRIFT")
            assert meta["tools_changed"] == "web__lookup" and meta["tools_added"] == "web__extra"
            assert attempts(attempts_file) == []  # nothing ran; the approval is still there
            assert (await h.get("s-drift")).approval_id == approval_id
    finally:
        await h.close()
        await d.stop()
        server.stop()


async def test_r71_submitting_a_result_for_a_daemon_call_is_refused(
    h: Harness, attempts_file: Path
) -> None:
    # The call hangs until its timeout: the refusal must come while it runs (a result
    # sent after the timeout is answered DUPLICATE, not refused), within milliseconds.
    use = pb.McpServerUse(name="files", timeout_ms=1000)
    spec = mcp_agent([turn(_call("files__hang", {}, "c-own")), {"text": "ok"}], use)
    run = asyncio.create_task(h.run("s-own", "go", spec))
    deadline = asyncio.get_running_loop().time() + 20
    while not attempts(attempts_file, "c-own"):  # the daemon is running it
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.02)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await h.submit("s-own", "c-own", '"from the app"')
    code, reason, meta = error_info(err.value)
    assert (code, reason, meta["executor"]) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "TOOL_CALL_NOT_PENDING",
        "daemon",
    )
    log = await run
    assert finished(log) == pb.FINISH_REASON_STOP
    body = json.loads(results(await h.get("s-own"))["c-own"].content)
    assert body["failure"] == "timeout"  # the daemon's outcome, not the app's answer


async def test_r72_the_people_cli_approves_and_the_daemon_runs_the_tool(
    h: Harness, attempts_file: Path
) -> None:
    """``luoshod approvals approve`` follows the run past a daemon tool's tool.call (only an
    app's tool.call stops it): the approved destructive call runs in the daemon, then the
    next one, and the run finishes."""
    import os
    import sys

    spec = mcp_agent(
        [
            turn(_call("files__delete_record", {"record": "r9"}, "c-d9")),
            turn(_call("files__add", {"a": 4, "b": 5}, "c-a9")),
            {"text": "done"},
        ]
    )
    log = await h.run("s-cli", "delete", spec)
    approval_id = log.of("approval.requested")[0].approval_requested.approval.approval_id
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "luoshod",
        "approvals",
        "approve",
        approval_id,
        "--address",
        h.daemon.addresses[0],
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ},
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    assert "is finished" in out.decode(), out.decode()
    assert [a["key"] for a in attempts(attempts_file)] == ["c-d9", "c-a9"]
    cp = await h.get("s-cli")
    assert cp.status == pb.CHECKPOINT_STATUS_FINISHED


async def test_r73_a_server_that_goes_down_mid_run_gives_error_results(
    tmp_path: Path, attempts_file: Path
) -> None:
    server = HttpServer(attempts_file).start()
    cfg = Config(
        listen=["127.0.0.1:0"],
        store="memory://",
        tool_timeout_s=10,
        mcp_servers={"web": http_config("web", server.url)},
    )
    d = Daemon(cfg)
    await d.start()
    h = Harness(d.addresses[0], d)
    spec = mcp_agent(
        [
            turn(_call("web__slow", {"ms": 5000}, "c-slow")),
            turn(_call("web__add", {"a": 1, "b": 1}, "c-after")),
            {"text": "the server is down"},
        ],
        pb.McpServerUse(name="web", retry=pb.McpRetryPolicy(attempts=2, backoff_ms=50)),
    )
    try:
        run = asyncio.create_task(h.run("s-down", "go", spec))
        deadline = asyncio.get_running_loop().time() + 20
        while not attempts(attempts_file, "c-slow"):  # the slow call is in flight
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.02)
        server.stop()  # the server dies under the call
        log = await asyncio.wait_for(run, 60)
        assert finished(log) == pb.FINISH_REASON_STOP, log.error  # never a failed or stuck run
        got = results(await h.get("s-down"))
        for call_id in ("c-slow", "c-after"):
            body = json.loads(got[call_id].content)
            assert got[call_id].is_error and body["failure"] in ("unavailable", "timeout"), body
            assert body["attempts"] == 2  # retried once (retry_on: timeout, unavailable)
        assert len(log.of("tool.retry")) == 2
        assert {s.name: s.state for s in d.mcp.states()}["web"] == "down"
    finally:
        await h.close()
        await d.stop()
        server.stop()
