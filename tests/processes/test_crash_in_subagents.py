"""kill -9 of the daemon at each persistence boundary inside a depth-2 sub-agent (R59),
resumed on a fresh daemon process over the same SQLite file, LMDB directory or
PostgreSQL database (the throw-away server of the root conftest.py): no
sub-agent model turn generated twice, no recorded result run again, every call exactly
one result at every level."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.daemon_process import DaemonProcess
from tests.support.harness import Harness, agent, assert_valid_transcript, calls

pytestmark = pytest.mark.asyncio

HELPER = "call_0_0/call_0_0"  # the helper's calls: HELPER/<its call id>


def spec() -> pb.AgentSpec:
    helper = agent(
        [
            calls(("lookup", {"q": "a"}), ("lookup", {"q": "b"})),
            calls(("delete", {"id": 1})),
            {"text": "helped"},
        ],
        ("lookup",),
        instructions="You help.",
    )
    helper.tools.append(pb.ToolSpec(name="delete", input_schema_json="{}", needs_approval=True))
    researcher = agent(
        [calls(("task", {"agent": "helper", "prompt": "dig"})), {"text": "researched"}],
        (),
        instructions="You research.",
    )
    researcher.subagents.append(pb.SubAgent(name="helper", description="digs", agent=helper))
    lead = agent(
        [calls(("task", {"agent": "researcher", "prompt": "go"})), {"text": "lead done"}],
        ("add",),
        max_subagent_depth=2,
    )
    lead.subagents.append(
        pb.SubAgent(name="researcher", description="researches", agent=researcher)
    )
    return lead


STORES = {
    "sqlite": lambda tmp: f"sqlite:///{tmp}/luoshod.db",
    "lmdb": lambda tmp: f"lmdb://{tmp}/lmdb",
    "postgres": None,
}  # a new database of the throw-away server (``postgres_url``)
#: Model calls of the whole tree, each made once: lead 2, researcher 2, helper 3.
TURNS = 7


@pytest.mark.parametrize("store", sorted(STORES))
@pytest.mark.parametrize(
    "boundary", ["after-model-turn", "after-first-result", "after-second-result", "while-paused"]
)
async def test_r59_kill9_inside_a_depth_2_subagent_resumes_on_a_fresh_daemon(
    tmp_path: Path, store: str, boundary: str, request: pytest.FixtureRequest
) -> None:
    log_file = tmp_path / "calls.jsonl"
    make_url = STORES[store]
    url = make_url(tmp_path) if make_url else request.getfixturevalue("postgres_url")
    args = ("--store", url, "--scripted-call-log", str(log_file), "--lease-owner", "d1")
    run_ids: Counter[str] = Counter()  # client tool runs, by qualified id

    def tool_run(c: pb.ToolCall) -> str:
        run_ids[c.id] += 1
        return json.dumps({"ok": c.id})

    first = DaemonProcess(*args).start()
    try:
        h = Harness(first.address, call_log=log_file)

        async def on_event(e: pb.Event) -> None:
            if e.type != "tool.call":
                return
            c = e.tool_call.call
            assert c.id.startswith(HELPER + "/")
            if boundary == "after-model-turn":
                first.kill9()  # the helper's turn is saved (R1), none of its calls ran
                return
            body = tool_run(c)
            outcome = await h.submit("s", c.id, body)
            assert outcome == pb.SUBMIT_OUTCOME_ACCEPTED  # durable (R54)
            if (boundary == "after-first-result" and c.id.endswith("call_0_0")) or (
                boundary == "after-second-result" and c.id.endswith("call_0_1")
            ):
                first.kill9()

        log = await h.run("s", "go", spec(), on_event=on_event)
        if boundary == "while-paused":
            assert log.done.finish_reason == pb.FINISH_REASON_AWAITING_APPROVAL
            ap = log.of("approval.requested")[0].approval_requested.approval
            assert list(ap.subagent_path) == ["researcher", "helper"]
            first.kill9()
        else:
            assert log.error is not None and log.error.code() == grpc.StatusCode.UNAVAILABLE
        await h.close()
    finally:
        first.stop()

    second = DaemonProcess(*args).start()
    try:
        h = Harness(second.address, call_log=log_file)
        for _ in range(4):  # resume, resolve the helper's approval, resume … until finished
            cp = await h.get("s")
            if cp.status == pb.CHECKPOINT_STATUS_FINISHED:
                break
            if cp.status == pb.CHECKPOINT_STATUS_AWAITING_APPROVAL:
                stream = h.stub.Resolve(
                    pb.ResolveRequest(approval_id=cp.approval_id, approved=True)
                )
            else:
                stream = h.stub.Resume(pb.ResumeRequest(session_id="s"))
            async for resp in stream:
                e = resp.event
                if e.type == "tool.call":
                    await h.submit("s", e.tool_call.call.id, tool_run(e.tool_call.call))
        cp = await h.get("s")
        assert cp.status == pb.CHECKPOINT_STATUS_FINISHED
        assert_valid_transcript(cp)
        assert h.model_calls("s") == TURNS  # R22 at every level: no turn generated twice
        qualified = [f"{HELPER}/call_0_0", f"{HELPER}/call_0_1", f"{HELPER}/call_1_0"]
        # Every call exactly one result, at every level (the task calls' results included),
        # in the session's event log, which holds what a killed daemon saved but never sent.
        results = Counter()
        async for resp in h.stub.Watch(pb.WatchRequest(session_id="s", after_seq=0)):
            if resp.event.type == "tool.result":
                results[resp.event.tool_result.tool_call_id] += 1
        assert results == Counter({q: 1 for q in [*qualified, "call_0_0/call_0_0", "call_0_0"]}), (
            results
        )
        # A recorded result is never run again; a call handed out but not answered when the
        # daemon died is handed out again (R24), and this client runs it then.
        assert run_ids == Counter({q: 1 for q in qualified}), run_ids
        body = json.loads(next(m.content for m in cp.messages if m.role == pb.ROLE_TOOL))
        assert body.startswith("researched\n\n[sub-agent 'researcher': 2 step(s)")
        await h.close()
    finally:
        second.stop()
