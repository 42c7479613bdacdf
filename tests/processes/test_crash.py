"""Crash of the daemon (kill -9 between a checkpointed model turn and its tool results)
and crash of the client process, with real processes on a real SQLite file: R20–R24."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support import SUPPORT
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.harness import Harness, agent, assert_valid_transcript, calls

pytestmark = pytest.mark.asyncio

SCRIPT = [calls(("add", {"a": k}), ("add", {"a": 100 + k})) for k in range(4)] + [{"text": "total"}]
SPEC = agent(SCRIPT)


def check_finished(cp: pb.Checkpoint, calls_log: Harness, sid: str) -> None:
    assert cp.status == pb.CHECKPOINT_STATUS_FINISHED
    assert_valid_transcript(cp)  # R20, R23
    results = [m.tool_call_id for m in cp.messages if m.role == pb.ROLE_TOOL]
    assert results == [f"call_{k}_{j}" for k in range(4) for j in range(2)]
    turns = sum(1 for m in cp.messages if m.role == pb.ROLE_ASSISTANT)
    assert calls_log.model_calls(sid) == turns == 5  # R22: no turn generated twice


async def test_daemon_kill9_between_model_turn_and_tool_results(tmp_path: Path) -> None:
    log_file = tmp_path / "calls.jsonl"
    # The same daemon restarted (a stable --lease-owner): it takes back at once the lease
    # its killed incarnation left (test_leases.py has another daemon wait out the TTL).
    args = (
        "--store",
        db_url(tmp_path),
        "--scripted-call-log",
        str(log_file),
        "--lease-owner",
        "d1",
    )
    first = DaemonProcess(*args).start()
    executed: Counter[str] = Counter()
    killed_at = ""
    try:
        h = Harness(first.address, call_log=log_file)

        async def tool_then_kill(e: pb.Event) -> None:
            nonlocal killed_at
            if e.type != "tool.call":
                return
            cid = e.tool_call.call.id
            executed[cid] += 1
            if cid == "call_2_0":  # step 3's turn is checkpointed (R1), its tools not run
                killed_at = cid
                first.kill9()
                return
            await h.submit(
                "crash", cid, json.dumps(json.loads(e.tool_call.call.arguments_json)["a"])
            )

        log = await h.run("crash", "go", SPEC, on_event=tool_then_kill)
        assert killed_at and log.error is not None
        assert log.error.code() == grpc.StatusCode.UNAVAILABLE
        await h.close()
    finally:
        first.stop()

    second = DaemonProcess(*args).start()
    try:
        h = Harness(second.address, call_log=log_file)
        cp = await h.get("crash")
        assert cp.status == pb.CHECKPOINT_STATUS_IN_PROGRESS
        assert cp.messages[-1].role == pb.ROLE_ASSISTANT  # the turn was saved, no result yet
        assert [c.id for c in cp.messages[-1].tool_calls] == ["call_2_0", "call_2_1"]

        def add(args):
            return args["a"]

        handed: list[str] = []
        log = await h.run(
            "crash",
            None,
            resume=True,
            tools={"add": add},
            on_event=lambda e: (
                handed.append(e.tool_call.call.id) if e.type == "tool.call" else None
            ),
        )
        assert log.done.finish_reason == pb.FINISH_REASON_STOP
        for cid in handed:
            executed[cid] += 1
        # R21: recorded results never re-run; R24: the call lost in the crash ran again,
        # with the same id.
        assert handed == ["call_2_0", "call_2_1", "call_3_0", "call_3_1"]
        assert executed["call_2_0"] == 2 and all(
            n == 1 for cid, n in executed.items() if cid != "call_2_0"
        )
        check_finished(await h.get("crash"), h, "crash")
        await h.close()
    finally:
        second.stop()


async def test_client_process_kill9_mid_run_then_resume_from_a_fresh_client(tmp_path: Path) -> None:
    log_file = tmp_path / "calls.jsonl"
    daemon = DaemonProcess(
        "--store", db_url(tmp_path), "--scripted-call-log", str(log_file)
    ).start()
    client = None
    try:
        client = subprocess.Popen(
            [
                sys.executable,
                str(SUPPORT / "crash_client.py"),
                daemon.address,
                "cc",
                SPEC.SerializeToString().hex(),
                "4",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        lines = []
        while not (line := client.stdout.readline()).startswith("IN_TOOL"):
            assert line, "client exited early"
            lines.append(line.split()[1])
        in_flight = line.split()[1]
        client.kill()
        client.wait(10)
        assert lines == ["call_0_0", "call_0_1", "call_1_0"] and in_flight == "call_1_1"

        h = Harness(daemon.address, call_log=log_file)

        # The daemon treats the vanished client as a crash and stops the run. A Watch
        # without follow ends when the session's run does (at once if it already has):
        # the session is free from then on, and the run resumes from its checkpoint.
        async def until_the_run_ended() -> None:
            async for _ in h.stub.Watch(pb.WatchRequest(session_id="cc")):
                pass

        await asyncio.wait_for(until_the_run_ended(), 30)
        handed: list[str] = []
        log = await h.run(
            "cc",
            [],
            tools={"add": lambda a: a["a"]},
            on_event=lambda e: (
                handed.append(e.tool_call.call.id) if e.type == "tool.call" else None
            ),
        )
        assert log.error is None, log.reason
        assert log.done and log.done.finish_reason == pb.FINISH_REASON_STOP
        assert handed[0] == "call_1_1"  # only the unanswered call, same id (R24)
        assert "call_1_0" not in handed  # R21
        check_finished(await h.get("cc"), h, "cc")
        await h.close()
    finally:
        if client and client.poll() is None:
            client.kill()
        daemon.stop()


async def test_r54_daemon_kill9_right_after_accepted_never_asks_that_call_again(
    tmp_path: Path,
) -> None:
    """R54: ``ACCEPTED`` means durable. The daemon is killed the moment each of these calls'
    ``SubmitToolResult`` answers ``ACCEPTED`` — mid-turn, and the last call of a turn, whose
    save is the one before the next model call — then restarted; the resumed run never
    hands that call out again, and its result is the one submitted."""
    log_file = tmp_path / "calls.jsonl"
    args = (
        "--store",
        db_url(tmp_path),
        "--scripted-call-log",
        str(log_file),
        "--lease-owner",
        "d1",
    )
    executed: Counter[str] = Counter()
    accepted: list[str] = []
    for target in ("call_0_0", "call_0_1", "call_1_1", "call_2_0"):
        daemon = DaemonProcess(*args).start()
        try:
            h = Harness(daemon.address, call_log=log_file)
            handed: list[str] = []

            async def answer_then_kill(e: pb.Event) -> None:
                if e.type != "tool.call":
                    return
                cid = e.tool_call.call.id
                handed.append(cid)
                executed[cid] += 1
                outcome = await h.submit(
                    "ack", cid, json.dumps(json.loads(e.tool_call.call.arguments_json)["a"])
                )
                assert outcome == pb.SUBMIT_OUTCOME_ACCEPTED
                if cid == target:
                    accepted.append(cid)
                    daemon.kill9()

            log = await h.run("ack", "go" if not accepted else [], SPEC, on_event=answer_then_kill)
            assert log.error is not None and log.error.code() == grpc.StatusCode.UNAVAILABLE
            assert handed[-1] == target
            assert not set(handed[:-1]) & set(accepted), (
                f"asked again for {handed} after ACCEPTED {accepted}"
            )
            await h.close()
        finally:
            daemon.stop()
    daemon = DaemonProcess(*args).start()
    try:
        h = Harness(daemon.address, call_log=log_file)
        cp = await h.get("ack")
        stored = {
            m.tool_call_id: json.loads(m.content) for m in cp.messages if m.role == pb.ROLE_TOOL
        }
        assert set(accepted) <= set(stored)
        handed = []
        log = await h.run(
            "ack",
            [],
            tools={"add": lambda a: a["a"]},
            on_event=lambda e: (
                handed.append(e.tool_call.call.id) if e.type == "tool.call" else None
            ),
        )
        assert log.done.finish_reason == pb.FINISH_REASON_STOP
        assert not set(handed) & set(accepted)
        for cid in handed:
            executed[cid] += 1
        assert all(executed[cid] == 1 for cid in accepted)
        cp = await h.get("ack")
        assert cp.status == pb.CHECKPOINT_STATUS_FINISHED
        assert_valid_transcript(cp)  # R20, R23
        results = [m.tool_call_id for m in cp.messages if m.role == pb.ROLE_TOOL]
        assert results == [f"call_{k}_{j}" for k in range(4) for j in range(2)]
        # (A model turn generated just before a kill and not saved yet is generated again:
        # R22 protects checkpointed turns, so the model-call count is not checked here.)
        await h.close()
    finally:
        daemon.stop()
