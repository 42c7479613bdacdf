"""Daemon tools (MCP, docs/reference/rules.md R70–R73) inside sub-agents (R55–R64), through the gRPC
API on memory, an SQLite file and LMDB, against the real MCP server of
tests/support/mcp_server.py (the official SDK, over stdio, started by the daemon).

A sub-agent's MCP tools work as the lead's: listed when the run starts and joined to the
sub-agent's own tools (so in its own fingerprint), its calls run by the daemon
(``executor`` daemon, tagged with the sub-agent) under the qualified call id, which is the
idempotency key the server sees (R58, R71); annotations gate them, pausing the whole run
with the sub-agent's path (R60–R62, R72); timeouts and retries per the sub-agent's spec,
each ``tool.retry`` tagged (R73)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.server.app import Config
from tests.support.harness import Harness, RunLog, agent, assert_valid_transcript, error_info
from tests.support.mcp_servers import HttpServer, attempts, http_config, stdio_config


def _call(name: str, args: dict, id_: str) -> dict:
    return {"name": name, "arguments": args, "id": id_}


def turn(*tool_calls: dict) -> dict:
    return {"text": "", "tool_calls": list(tool_calls)}


def delegate(id_: str, prompt: str = "do it") -> dict:
    return turn(_call("task", {"agent": "worker", "prompt": prompt, "description": "d"}, id_))


def worker(script: list[dict], *uses: pb.McpServerUse, tools: tuple[str, ...] = ()) -> pb.SubAgent:
    spec = agent(script, list(tools), instructions="You work with files.")
    spec.mcp_servers.extend(uses or [pb.McpServerUse(name="files")])
    return pb.SubAgent(name="worker", description="works on files", agent=spec)


def lead(script: list[dict], *subs: pb.SubAgent, **kw: object) -> pb.AgentSpec:
    spec = agent(script, ["note"], instructions="You lead.", **kw)
    spec.subagents.extend(subs)
    return spec


@pytest.fixture
def attempts_file(tmp_path: Path) -> Path:
    return tmp_path / "attempts.jsonl"


@pytest.fixture
def config(config: Config, attempts_file: Path) -> Config:
    """The root conftest's daemon (memory, sqlite-file, lmdb) with the MCP server ``files``."""
    return dataclasses.replace(config, mcp_servers={"files": stdio_config("files", attempts_file)})


async def resolve(h: Harness, approval_id: str, approved: bool, note: str = "") -> RunLog:
    """Resolve, answering nothing: every tool.call must be the daemon's to run."""
    log = RunLog()
    try:
        async for resp in h.stub.Resolve(
            pb.ResolveRequest(approval_id=approval_id, approved=approved, note=note)
        ):
            log.events.append(resp.event)
            if resp.event.type == "tool.call":
                assert resp.event.tool_call.executor == pb.TOOL_EXECUTOR_DAEMON
    except grpc.aio.AioRpcError as err:
        log.error = err
    return log


def result_of(cp: pb.Checkpoint, call_id: str) -> pb.Message:
    return next(m for m in cp.messages if m.role == pb.ROLE_TOOL and m.tool_call_id == call_id)


async def test_r71_a_subagents_mcp_tool_runs_in_the_daemon_under_its_qualified_id(
    h: Harness, attempts_file: Path
) -> None:
    sub = worker([turn(_call("files__add", {"a": 2, "b": 3}, "c-add")), {"text": "it is 5"}])
    spec = lead([delegate("c-task"), {"text": "the worker says 5"}], sub)
    log = await h.run(
        "sm-add", "add", spec
    )  # the app answers nothing: no tool of its own is called
    assert log.error is None, log.error
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    (tc,) = log.of("tool.call")
    assert tc.tool_call.call.id == "c-task/c-add"  # R58
    assert tc.tool_call.executor == pb.TOOL_EXECUTOR_DAEMON  # clients never run it
    assert (list(tc.subagent.path), tc.subagent.task_id, tc.subagent.depth) == (
        ["worker"],
        "task_1",
        1,
    )
    (tr,) = [e for e in log.of("tool.result") if e.HasField("subagent")]
    assert (tr.tool_result.tool_call_id, json.loads(tr.tool_result.result_json)) == (
        "c-task/c-add",
        {"result": "5"},
    )
    # R71: the qualified id is the idempotency key the server saw, once.
    assert [(a["key"], a["tool"]) for a in attempts(attempts_file)] == [("c-task/c-add", "add")]
    cp = await h.get("sm-add")
    assert json.loads(result_of(cp, "c-task").content).startswith(
        "it is 5\n\n[sub-agent 'worker': 2 step(s)"
    )
    # R70: the lead's own tools and fingerprint do not get the sub-agent's daemon tools.
    assert not any(k.startswith("files__") for k in cp.fingerprint.tool_schema_hashes)
    (task,) = cp.tasks
    (sub_result,) = [m for m in task.messages if m.role == pb.ROLE_TOOL]
    assert (sub_result.tool_call_id, sub_result.tool_name) == ("c-add", "files__add")
    # GetSession gives the spec as sent: the daemon tools come from mcp_servers, not tools.
    assert [u.name for u in cp.agent.subagents[0].agent.mcp_servers] == ["files"]
    assert list(cp.agent.subagents[0].agent.tools) == []
    assert_valid_transcript(cp)


async def test_r72_r60_an_annotated_tool_in_a_subagent_pauses_the_whole_run_and_runs_once_approved(
    h: Harness, attempts_file: Path
) -> None:
    sub = worker(
        [
            turn(
                _call("files__delete_record", {"record": "r1"}, "c-del"),
                _call("files__add", {"a": 1, "b": 1}, "c-a"),
            ),
            {"text": "deleted"},
        ]
    )
    spec = lead([delegate("c-task"), {"text": "lead done"}], sub)
    log = await h.run("sm-gate", "clean up", spec)
    assert log.error is None, log.error
    assert log.done.finish_reason == pb.FINISH_REASON_AWAITING_APPROVAL
    (req,) = log.of("approval.requested")
    assert not req.HasField("subagent")  # one top-level approval.requested
    ap = req.approval_requested.approval
    assert list(ap.subagent_path) == ["worker"]
    assert (ap.tool_call.id, ap.tool_call.name) == ("c-task/c-del", "files__delete_record")
    assert [c.id for c in ap.remaining] == ["c-task/c-a"]
    assert attempts(attempts_file) == []  # paused before anything ran
    cp = await h.get("sm-gate")
    assert cp.status == pb.CHECKPOINT_STATUS_AWAITING_APPROVAL
    # R64: the paused sub-agent's own fingerprint covers its daemon tools.
    (state,) = cp.subagents
    assert {"files__delete_record", "files__add"} <= set(state.fingerprint.tool_schema_hashes)
    listed = (await h.stub.ListApprovals(pb.ListApprovalsRequest(session_id="sm-gate"))).approvals
    assert [list(a.subagent_path) for a in listed] == [["worker"]]

    done = await resolve(h, ap.approval_id, True)
    assert done.error is None, done.error
    assert done.done.finish_reason == pb.FINISH_REASON_STOP
    executors = {e.tool_call.call.id: e.tool_call.executor for e in done.of("tool.call")}
    assert executors == {
        "c-task/c-del": pb.TOOL_EXECUTOR_DAEMON,
        "c-task/c-a": pb.TOOL_EXECUTOR_DAEMON,
    }
    # R61: the approved call runs exactly once, then the rest of the sub-agent's turn.
    assert [a["key"] for a in attempts(attempts_file)] == ["c-task/c-del", "c-task/c-a"]
    cp = await h.get("sm-gate")
    assert cp.status == pb.CHECKPOINT_STATUS_FINISHED
    assert [m.tool_call_id for m in cp.messages if m.role == pb.ROLE_TOOL] == [
        "c-task"
    ]  # no placeholder
    (task,) = cp.tasks
    got = {m.tool_call_id: json.loads(m.content) for m in task.messages if m.role == pb.ROLE_TOOL}
    assert got == {"c-del": {"result": "deleted r1"}, "c-a": {"result": "2"}}
    assert_valid_transcript(cp)


async def test_r61_a_rejected_mcp_call_in_a_subagent_never_reaches_the_server(
    h: Harness, attempts_file: Path
) -> None:
    sub = worker(
        [turn(_call("files__delete_record", {"record": "r2"}, "c-del")), {"text": "kept it"}]
    )
    spec = lead([delegate("c-task"), {"text": "lead done"}], sub)
    log = await h.run("sm-reject", "clean up", spec)
    ap = log.of("approval.requested")[0].approval_requested.approval
    done = await resolve(h, ap.approval_id, False, note="keep r2")
    assert done.done.finish_reason == pb.FINISH_REASON_STOP, done.error
    assert attempts(attempts_file) == []
    cp = await h.get("sm-reject")
    (task,) = cp.tasks
    rejected = next(m for m in task.messages if m.role == pb.ROLE_TOOL)
    assert rejected.is_error and "keep r2" in rejected.content
    assert_valid_transcript(cp)


async def test_r73_retries_of_a_subagents_mcp_call_are_tagged_and_keep_one_key(
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
    sub = worker([turn(_call("files__flaky", {}, "c-f")), {"text": "ok"}], use)
    spec = lead([delegate("c-task"), {"text": "lead done"}], sub)
    log = await h.run("sm-flaky", "go", spec)
    assert log.done.finish_reason == pb.FINISH_REASON_STOP, log.error
    retries = log.of("tool.retry")
    assert [
        (e.tool_retry.attempt, e.tool_retry.delay_ms, e.tool_retry.tool_call_id) for e in retries
    ] == [
        (1, 10, "c-task/c-f"),
        (2, 20, "c-task/c-f"),
    ]
    assert all(list(e.subagent.path) == ["worker"] for e in retries)
    assert [a["key"] for a in attempts(attempts_file)] == ["c-task/c-f"] * 3
    (task,) = (await h.get("sm-flaky")).tasks
    r = next(m for m in task.messages if m.role == pb.ROLE_TOOL)
    assert not r.is_error and "answered on attempt 3" in r.content


async def test_r73_a_subagents_own_timeout_applies_to_its_mcp_call(
    h: Harness, attempts_file: Path
) -> None:
    sub = worker(
        [turn(_call("files__hang", {}, "c-h")), {"text": "gave up"}],
        pb.McpServerUse(name="files", timeout_ms=300),
    )
    spec = lead([delegate("c-task"), {"text": "lead done"}], sub)
    log = await h.run("sm-hang", "go", spec)
    assert log.done.finish_reason == pb.FINISH_REASON_STOP, log.error
    (tc,) = log.of("tool.call")
    assert (tc.tool_call.timeout_ms, list(tc.subagent.path)) == (300, ["worker"])
    (task,) = (await h.get("sm-hang")).tasks
    body = json.loads(next(m for m in task.messages if m.role == pb.ROLE_TOOL).content)
    assert body["failure"] == "timeout"


async def test_mixed_client_and_daemon_tools_in_one_subagent_turn(
    h: Harness, attempts_file: Path
) -> None:
    sub = worker(
        [
            turn(_call("look", {}, "c-1"), _call("files__add", {"a": 3, "b": 4}, "c-2")),
            {"text": "7, looked"},
        ],
        tools=("look",),
    )
    spec = lead([delegate("c-task"), {"text": "lead done"}], sub)
    asked: list[str] = []
    log = await h.run("sm-mixed", "go", spec, {"look": lambda a: asked.append("look") or "seen"})
    assert log.done.finish_reason == pb.FINISH_REASON_STOP, log.error
    executors = {e.tool_call.call.id: e.tool_call.executor for e in log.of("tool.call")}
    assert executors == {
        "c-task/c-1": pb.TOOL_EXECUTOR_CLIENT,
        "c-task/c-2": pb.TOOL_EXECUTOR_DAEMON,
    }
    assert asked == ["look"]
    assert [a["key"] for a in attempts(attempts_file)] == ["c-task/c-2"]


async def test_an_unknown_mcp_server_in_a_subagent_is_invalid_argument_and_stores_nothing(
    h: Harness,
) -> None:
    sub = worker([{"text": "hi"}], pb.McpServerUse(name="nope"))
    log = await h.run("sm-unknown", "hi", lead([delegate("c-task"), {"text": "ok"}], sub))
    code, reason, meta = error_info(log.error)
    assert (code, reason) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "UNKNOWN_MCP_SERVER",
    )  # as for the lead
    assert (meta["server"], meta["known"]) == ("nope", "files")
    assert meta["field"] == "agent.subagents[0].agent.mcp_servers"
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await h.get("sm-unknown")
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    assert h.model_calls("sm-unknown") == 0
    # A badly shaped use is refused where it is, as for the lead.
    bad = worker([{"text": "hi"}], pb.McpServerUse(name="files"), pb.McpServerUse(name="files"))
    log = await h.run("sm-twice", "hi", lead([{"text": "ok"}], bad))
    code, reason, meta = error_info(log.error)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_MCP_SERVERS")
    assert meta["field"] == "agent.subagents[0].agent.mcp_servers[1].name"


@pytest.mark.parametrize("policy", ["warn", "error"])
async def test_r64_a_server_that_changed_while_a_subagent_was_paused_is_that_levels_drift(
    tmp_path: Path, attempts_file: Path, policy: str
) -> None:
    from luoshod.server.app import Daemon

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
    sub = worker(
        [turn(_call("web__delete_record", {"record": "x"}, "c-dr")), {"text": "done"}],
        pb.McpServerUse(name="web"),
    )
    spec = lead([delegate("c-task"), {"text": "lead done"}], sub, on_agent_drift=drift)
    try:
        log = await h.run("sm-drift", "delete", spec)
        assert log.done.finish_reason == pb.FINISH_REASON_AWAITING_APPROVAL, log.error
        approval_id = log.done.approval_id
        server.stop()
        server = HttpServer(
            attempts_file, variant="2", port=server.port
        ).start()  # its list changed
        call = h.stub.Resolve(pb.ResolveRequest(approval_id=approval_id, approved=True, agent=spec))
        if policy == "warn":
            events = [r.event async for r in call]
            (dr,) = [e for e in events if e.type == "agent.drift"]
            assert list(dr.subagent.path) == ["worker"]  # the sub-agent's level, not the lead's
            assert list(dr.agent_drift.tools_changed) == ["web__lookup"]
            assert list(dr.agent_drift.tools_added) == ["web__extra"]
            assert events[-1].run_done.finish_reason == pb.FINISH_REASON_STOP
            assert [a["key"] for a in attempts(attempts_file)] == ["c-task/c-dr"]
        else:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                [r async for r in call]
            code, reason, meta = error_info(err.value)
            assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "AGENT_DRIFT")
            assert attempts(attempts_file) == []  # nothing ran; the approval is still there
            assert (await h.get("sm-drift")).approval_id == approval_id
    finally:
        await h.close()
        await d.stop()
        server.stop()


async def test_r71_submitting_a_result_for_a_subagents_daemon_call_is_refused(
    h: Harness, attempts_file: Path
) -> None:
    # The call hangs until its timeout: the refusal must come while it runs (a result
    # sent after the timeout is answered DUPLICATE, not refused), within milliseconds.
    sub = worker(
        [turn(_call("files__hang", {}, "c-own")), {"text": "ok"}],
        pb.McpServerUse(name="files", timeout_ms=1000),
    )
    spec = lead([delegate("c-task"), {"text": "lead done"}], sub)
    run = asyncio.create_task(h.run("sm-own", "go", spec))
    deadline = asyncio.get_running_loop().time() + 20
    while not attempts(attempts_file, "c-task/c-own"):  # the daemon is running it
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.02)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await h.submit("sm-own", "c-task/c-own", '"from the app"')
    code, reason, meta = error_info(err.value)
    assert (code, reason, meta["executor"]) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "TOOL_CALL_NOT_PENDING",
        "daemon",
    )
    log = await run
    assert log.done.finish_reason == pb.FINISH_REASON_STOP, log.error
    (task,) = (await h.get("sm-own")).tasks
    body = json.loads(next(m for m in task.messages if m.role == pb.ROLE_TOOL).content)
    assert body["failure"] == "timeout"  # the daemon's outcome, not the app's answer


async def test_r62_a_subagent_paused_again_by_its_next_mcp_call_runs_each_once(
    h: Harness, attempts_file: Path
) -> None:
    sub = worker(
        [
            turn(_call("files__delete_record", {"record": "r1"}, "c-d1")),
            turn(_call("files__delete_record", {"record": "r2"}, "c-d2")),
            {"text": "both deleted"},
        ]
    )
    spec = lead([delegate("c-task"), {"text": "lead done"}], sub)
    log = await h.run("sm-again", "go", spec)
    first = log.done.approval_id
    assert log.of("approval.requested")[0].approval_requested.approval.tool_call.id == "c-task/c-d1"
    again = await resolve(h, first, True)
    assert again.done.finish_reason == pb.FINISH_REASON_AWAITING_APPROVAL, again.error
    (req,) = again.of("approval.requested")
    second = req.approval_requested.approval
    assert second.approval_id != first and second.tool_call.id == "c-task/c-d2"
    assert list(second.subagent_path) == ["worker"]
    assert (await h.get("sm-again")).approval_id == second.approval_id
    assert [a["key"] for a in attempts(attempts_file)] == ["c-task/c-d1"]
    done = await resolve(h, second.approval_id, True)
    assert done.done.finish_reason == pb.FINISH_REASON_STOP, done.error
    assert [a["key"] for a in attempts(attempts_file)] == [
        "c-task/c-d1",
        "c-task/c-d2",
    ]  # each once
    assert_valid_transcript(await h.get("sm-again"))


async def test_r66_cancel_while_a_subagents_mcp_call_runs_gives_it_the_cancelled_result(
    h: Harness, attempts_file: Path
) -> None:
    sub = worker(
        [
            turn(_call("files__hang", {}, "c-h"), _call("files__add", {"a": 1, "b": 1}, "c-a")),
            {"text": "never"},
        ]
    )
    spec = lead([delegate("c-task"), {"text": "after"}], sub)

    async def cancel_once_running(e: pb.Event) -> None:
        if e.type == "tool.call" and e.tool_call.call.id == "c-task/c-h":
            deadline = asyncio.get_running_loop().time() + 20
            while not attempts(attempts_file, "c-task/c-h"):  # the daemon is running it
                assert asyncio.get_running_loop().time() < deadline
                await asyncio.sleep(0.02)
            assert (await h.stub.Cancel(pb.CancelRequest(session_id="sm-cancel"))).cancelled

    log = await h.run("sm-cancel", "go", spec, on_event=cancel_once_running)
    assert log.error is None, log.error
    assert (log.done.finish_reason, log.done.status) == (
        pb.FINISH_REASON_ABORTED,
        pb.CHECKPOINT_STATUS_IN_PROGRESS,
    )
    results = {e.tool_result.tool_call_id: e.tool_result for e in log.of("tool.result")}
    assert sorted(results) == ["c-task", "c-task/c-a", "c-task/c-h"]  # every call, one result each
    for r in results.values():
        assert r.is_error and json.loads(r.result_json)["cancelled"] is True
    assert [a["key"] for a in attempts(attempts_file)] == ["c-task/c-h"]  # c-a never went out
    cp = await h.get("sm-cancel")
    assert_valid_transcript(cp)
    (task,) = cp.tasks
    assert [m.tool_call_id for m in task.messages if m.role == pb.ROLE_TOOL] == ["c-h", "c-a"]


async def test_r63_two_tasks_of_one_turn_paused_by_mcp_calls_pause_one_after_the_other(
    h: Harness, attempts_file: Path
) -> None:
    sub = worker(
        [turn(_call("files__delete_record", {"record": "r"}, "c-del")), {"text": "deleted"}]
    )
    spec = lead(
        [
            turn(
                _call("task", {"agent": "worker", "prompt": "one"}, "t-1"),
                _call("task", {"agent": "worker", "prompt": "two"}, "t-2"),
            ),
            {"text": "both done"},
        ],
        sub,
    )
    log = await h.run("sm-siblings", "go", spec)
    first = log.of("approval.requested")[0].approval_requested.approval
    assert first.tool_call.id == "t-1/c-del"  # the first in call order
    again = await resolve(h, first.approval_id, True)
    assert again.done.finish_reason == pb.FINISH_REASON_AWAITING_APPROVAL, again.error
    second = again.of("approval.requested")[0].approval_requested.approval
    assert second.tool_call.id == "t-2/c-del" and list(second.subagent_path) == ["worker"]
    done = await resolve(h, second.approval_id, True)
    assert done.done.finish_reason == pb.FINISH_REASON_STOP, done.error
    assert [a["key"] for a in attempts(attempts_file)] == ["t-1/c-del", "t-2/c-del"]  # each once
    cp = await h.get("sm-siblings")
    assert [m.tool_call_id for m in cp.messages if m.role == pb.ROLE_TOOL] == ["t-1", "t-2"]
    assert_valid_transcript(cp)


async def test_the_people_cli_approves_a_subagents_mcp_call_and_the_daemon_runs_it(
    h: Harness, attempts_file: Path
) -> None:
    """``luoshod approvals list`` shows the path; ``approvals approve`` follows the run past
    the sub-agent's daemon tool.call (only an app's stops it) to its end."""
    import os
    import sys

    sub = worker(
        [turn(_call("files__delete_record", {"record": "r9"}, "c-d9")), {"text": "deleted r9"}]
    )
    log = await h.run("sm-cli", "go", lead([delegate("c-task"), {"text": "lead done"}], sub))
    approval_id = log.done.approval_id

    async def cli(*args: str) -> str:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "luoshod",
            *args,
            "--address",
            h.daemon.addresses[0],
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ},
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err.decode()
        return out.decode()

    listed = await cli("approvals", "list")
    assert approval_id in listed and "worker" in listed, listed
    out = await cli("approvals", "approve", approval_id)
    assert "is finished" in out, out
    assert [a["key"] for a in attempts(attempts_file)] == ["c-task/c-d9"]
    assert (await h.get("sm-cli")).status == pb.CHECKPOINT_STATUS_FINISHED


async def test_the_python_client_never_hands_a_subagents_daemon_call_to_its_handlers(
    h: Harness, attempts_file: Path
) -> None:
    from luosho.client import AsyncClient

    sub = worker([turn(_call("files__add", {"a": 4, "b": 5}, "c-add")), {"text": "9"}])
    spec = lead([delegate("c-task"), {"text": "the worker says 9"}], sub)
    ran: list[dict] = []
    async with AsyncClient(h.daemon.addresses[0]) as client:
        # A handler of the same name: the client must still leave the call to the daemon.
        run = client.execute(
            "sm-client",
            "go",
            agent=spec,
            tools={"files__add": lambda args: ran.append(args) or "0"},
        )
        seen = [event async for event in run]
    assert run.result is not None and run.result.finish_reason == "stop"
    assert ran == []
    (call,) = [e for e in seen if e.type == "tool.call"]
    assert (
        call.tool_call.executor == pb.TOOL_EXECUTOR_DAEMON
        and call.tool_call.call.id == "c-task/c-add"
    )
    assert [a["key"] for a in attempts(attempts_file)] == ["c-task/c-add"]
