"""R68, R69 with real daemon processes: three inputs queued when the daemon is killed -9 run
after its restart, in order, each exactly once (SQLite file); and two daemons sharing
PostgreSQL, where an input queued through one runs when the other's run ends, and an
INTERRUPT sent to one aborts the run the other holds."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.harness import (
    Harness,
    RunLog,
    agent,
    assert_valid_transcript,
    busy_with_a_tool,
    calls,
    execute_if_busy,
    queue_one,
    until,
    users,
)

pytestmark = pytest.mark.asyncio


async def settled(h: Harness, sid: str, timeout: float = 60) -> pb.GetSessionResponse:
    """GetSession once the queue is empty and the session finished (polled)."""
    deadline = time.monotonic() + timeout
    while True:
        got = await h.stub.GetSession(pb.GetSessionRequest(session_id=sid))
        if not got.queue and got.checkpoint.status == pb.CHECKPOINT_STATUS_FINISHED:
            return got
        assert time.monotonic() < deadline, got
        await asyncio.sleep(0.1)


async def test_r69_three_inputs_queued_at_a_kill_9_run_in_order_once_after_restart(
    tmp_path: Path,
) -> None:
    calls_log = tmp_path / "calls.jsonl"
    args = (
        "--store",
        db_url(tmp_path),
        "--scripted-call-log",
        str(calls_log),
        "--lease-owner",
        "the-daemon",
        "--queue-sweep-s",
        "0.2",
    )
    spec = agent([calls(("add", {"a": 1})), {"text": "r2"}, {"text": "r3"}, {"text": "r4"}])
    first = DaemonProcess(*args).start()
    try:
        h = Harness(first.address, call_log=calls_log)
        busy, call = await busy_with_a_tool(h, "k9", spec)  # its tool call is never answered
        waiting = [
            await queue_one(h, "k9", text, spec, pb.IF_BUSY_ENQUEUE, request_id=f"r-{text}")
            for text in ("two", "three", "four")
        ]
        shown = await h.stub.GetSession(pb.GetSessionRequest(session_id="k9"))
        assert [q.request_id for q in shown.queue] == ["r-two", "r-three", "r-four"]
        first.kill9()
        for t in (busy, *waiting):
            await t  # their streams end with the daemon
        await h.close()
    finally:
        first.stop()
    assert len(calls_log.read_text().splitlines()) == 1  # one model call before the kill
    second = DaemonProcess(*args).start()
    try:
        h = Harness(second.address, call_log=calls_log)
        # The caller of "two" retries (R75): it follows the run that applies it, whose
        # first act is the pending call of "one" (R10), answered here, then "two" (R12).
        two = await execute_if_busy(
            h, "k9", "two", spec, pb.IF_BUSY_ENQUEUE, request_id="r-two", tools={"add": lambda a: 1}
        )
        assert two.error is None, two.error
        assert two.done.final_text == "r2"
        assert [e.tool_call.call.id for e in two.of("tool.call")] == [call.id]
        got = await settled(h, "k9")
        cp = got.checkpoint
        assert users(cp) == ["one", "two", "three", "four"]  # in order, each once
        texts = [m.content for m in cp.messages if m.role == pb.ROLE_ASSISTANT and m.content]
        assert texts == ["r2", "r3", "r4"]
        assert h.model_calls("k9") == 4  # no model call twice
        assert_valid_transcript(cp)
        # Retrying a queued Execute after it ran replays its run: nothing runs twice (R74).
        again = await execute_if_busy(
            h, "k9", "three", spec, pb.IF_BUSY_ENQUEUE, request_id="r-three"
        )
        assert again.done.final_text == "r3" and all(e.replayed for e in again.events)
        assert users(await h.get("k9")) == ["one", "two", "three", "four"]
        await h.close()
    finally:
        second.stop()


async def test_r69_r74_a_queued_input_whose_run_was_killed_resumes_when_its_caller_retries(
    tmp_path: Path,
) -> None:
    calls_log = tmp_path / "calls.jsonl"
    args = (
        "--store",
        db_url(tmp_path),
        "--scripted-call-log",
        str(calls_log),
        "--lease-owner",
        "the-daemon",
        "--queue-sweep-s",
        "0.2",
    )
    spec = agent(
        [
            calls(("add", {"a": 1})),
            {"text": "one done"},
            calls(("add", {"a": 2})),
            {"text": "two done"},
        ]
    )
    first = DaemonProcess(*args).start()
    try:
        h = Harness(first.address, call_log=calls_log)
        busy, call = await busy_with_a_tool(h, "k9b", spec)
        queued = await queue_one(h, "k9b", "two", spec, pb.IF_BUSY_ENQUEUE, request_id="r-two")
        await h.submit("k9b", call.id, "1")
        assert (await busy).done.final_text == "one done"
        # The queued run starts and asks for its own tool; nobody answers; the daemon dies.
        while len(calls_log.read_text().splitlines()) < 3:
            await asyncio.sleep(0.05)
        shown = await h.stub.GetSession(pb.GetSessionRequest(session_id="k9b"))
        first.kill9()
        await queued
        await h.close()
    finally:
        first.stop()
    second = DaemonProcess(*args).start()
    try:
        h = Harness(second.address, call_log=calls_log)
        again = await execute_if_busy(
            h,
            "k9b",
            "two",
            spec,
            pb.IF_BUSY_ENQUEUE,
            request_id="r-two",
            tools={"add": lambda a: a["a"]},
        )
        assert again.error is None, again.error
        assert again.done.final_text == "two done"
        cp = await h.get("k9b")
        assert users(cp) == ["one", "two"]  # applied once
        assert_valid_transcript(cp)
        assert (await h.stub.GetSession(pb.GetSessionRequest(session_id="k9b"))).queue == []
        assert shown.checkpoint.status == pb.CHECKPOINT_STATUS_IN_PROGRESS
        await h.close()
    finally:
        second.stop()


@pytest.fixture
def two_daemons(postgres_url: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    args = ("--store", postgres_url, "--queue-sweep-s", "0.2")
    daemons = [DaemonProcess(*args).start() for _ in range(2)]
    try:
        yield daemons
    finally:
        for d in daemons:
            d.stop()


async def test_r68_r69_across_two_daemons_on_postgres(two_daemons: list[DaemonProcess]) -> None:
    a, b = (Harness(d.address) for d in two_daemons)
    spec = agent(
        [calls(("add", {"a": 1})), {"text": "one done"}, {"text": "reply 2"}, {"text": "reply 3"}]
    )
    first, call = await busy_with_a_tool(a, "pg", spec)
    # B is free, A holds the session's lease: B queues the input in the shared store.
    queued = await queue_one(b, "pg", "two", spec, pb.IF_BUSY_ENQUEUE, request_id="via-b")
    shown = await a.stub.GetSession(pb.GetSessionRequest(session_id="pg"))
    assert [q.request_id for q in shown.queue] == ["via-b"]  # seen through either daemon
    removed = await b.stub.DequeueInput(pb.DequeueInputRequest(session_id="pg", request_id="nope"))
    assert removed.removed is False
    await a.submit("pg", call.id, json.dumps(1))
    assert (await first).done.final_text == "one done"
    log = await queued  # run by A when its run ended (or by a sweep), followed by B
    assert log.error is None, log.error
    assert log.done.final_text == "reply 2" and log.events[1].run_start.request_id == "via-b"
    assert users(await a.get("pg")) == ["one", "two"]
    await a.close()
    await b.close()


async def test_r68_interrupt_through_one_daemon_aborts_the_run_of_the_other(
    two_daemons: list[DaemonProcess],
) -> None:
    a, b = (Harness(d.address) for d in two_daemons)
    spec = agent([calls(("add", {"a": 1})), {"text": "redirected"}])
    first, call = await busy_with_a_tool(a, "pgi", spec)
    log = await execute_if_busy(b, "pgi", "stop", spec, pb.IF_BUSY_INTERRUPT)
    aborted = await first  # A's sweep saw the interrupt queued through B
    assert aborted.done.finish_reason == pb.FINISH_REASON_ABORTED
    assert log.error is None, log.error
    assert log.done.final_text == "redirected"
    cp = await b.get("pgi")
    assert users(cp) == ["one", "stop"]
    assert_valid_transcript(cp)
    await a.close()
    await b.close()


async def test_r68_a_daemon_does_not_spin_on_an_input_queued_while_another_holds_the_session(
    postgres_url: str,
) -> None:
    """B queues an input on a session A's run holds: B tries it once and leaves it to A
    (whose run's end runs it), rather than retrying at once in a loop of lease
    acquisitions until A lets go."""
    import socket
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    pa = DaemonProcess(
        "--store", postgres_url, "--lease-owner", "a", "--queue-sweep-s", "0.2"
    ).start()
    pb_ = DaemonProcess(
        "--store",
        postgres_url,
        "--lease-owner",
        "b",
        "--queue-sweep-s",
        "3600",
        "--metrics-listen",
        f"127.0.0.1:{port}",
    ).start()

    def acquisitions() -> float:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            text = r.read().decode()
        return sum(
            float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith("luoshod_store_lease_writes_total") and 'op="acquire"' in line
        )

    try:
        a, b = Harness(pa.address), Harness(pb_.address)
        spec = agent([calls(("add", {"a": 1})), {"text": "one done"}, {"text": "reply 2"}])
        first, call = await busy_with_a_tool(a, "spin", spec)
        queued = await queue_one(b, "spin", "two", spec, pb.IF_BUSY_ENQUEUE, request_id="via-b")
        await asyncio.sleep(1.5)
        tried = await asyncio.to_thread(acquisitions)
        assert tried <= 3, f"B acquired the lease {tried} times in 1.5 s while A held it"
        await a.submit("spin", call.id, json.dumps(1))
        assert (await first).done.final_text == "one done"
        log = await queued
        assert log.error is None and log.done.final_text == "reply 2"
        await a.close()
        await b.close()
    finally:
        pa.stop()
        pb_.stop()


async def test_r68_r69_r74_a_retried_rollback_follows_the_run_its_first_attempt_is_starting(
    postgres_url: str,
) -> None:
    """A ROLLBACK sent when its session is free here runs as the plain Execute it then is
    (R12: it joins the session's unfinished run). That run may wait before its first save,
    here on the lease row's lock (which a daemon stopped inside a save holds); the caller's
    retry with the same request (R74) arriving meanwhile follows that run: it neither
    acknowledges the input as queued first while that run applies it as a plain Execute,
    nor aborts that run as an interrupting input does (the run then applied the input and
    ended at once, answered by nobody: R69). The daemon's sweep, every 0.2 s, spares it too."""
    import psycopg

    d = DaemonProcess("--store", postgres_url, "--queue-sweep-s", "0.2").start()
    try:
        h = Harness(d.address)
        spec = agent([calls(("add", {"a": 1})), {"text": "redirected"}])
        # The first run stops waiting for its call: its caller went away. Unfinished, free.
        await h.run("rb", "one", spec, stop_at=lambda e: e.type == "tool.call")
        with psycopg.connect(postgres_url) as conn:

            def released() -> bool:
                row = conn.execute(
                    "SELECT expires_at = '-infinity' FROM leases WHERE session_id = 'rb'"
                ).fetchone()
                conn.rollback()
                return bool(row and row[0])

            await until(released, what="the first run's lease released")
            conn.execute("SELECT 1 FROM leases WHERE session_id = 'rb' FOR UPDATE")
            answer = {"add": lambda a: a["a"]}

            def rollback() -> asyncio.Task[RunLog]:
                return asyncio.create_task(
                    execute_if_busy(
                        h, "rb", "stop", spec, pb.IF_BUSY_ROLLBACK, request_id="rb-r", tools=answer
                    )
                )

            first = rollback()
            await asyncio.sleep(1.0)  # its run claimed the session, waits on the lease row
            retry = rollback()
            await asyncio.sleep(1.0)  # five sweeps
            conn.rollback()  # the lock goes: the first attempt's run takes the lease
        logs = await asyncio.wait_for(asyncio.gather(first, retry), 30)
        for log in logs:
            assert log.error is None, log.error
            assert "input.queued" not in log.types, log.types
            assert log.done is not None and log.done.final_text == "redirected", log.types
        got = await h.stub.GetSession(pb.GetSessionRequest(session_id="rb"))
        assert got.checkpoint.status == pb.CHECKPOINT_STATUS_FINISHED
        assert users(got.checkpoint) == ["one", "stop"]  # applied once, answered
        assert_valid_transcript(got.checkpoint)
        assert list(got.queue) == []
        await h.close()
    finally:
        d.stop()


async def test_r54_r74_a_result_for_a_call_the_resuming_run_has_not_handed_out_yet_is_kept(
    postgres_url: str,
) -> None:
    """A client following a resumed run first reads the ``tool.call`` of the run before it
    (replayed from the log) and may answer it before the new run hands the call out again
    (here: that run waits on the lease row's lock). The daemon keeps the result for that
    run and answers ``ACCEPTED`` once it is saved; the call is not asked for again, and not
    refused with "resume the session" while the session is resuming."""
    import psycopg

    d = DaemonProcess("--store", postgres_url).start()
    try:
        h = Harness(d.address)
        spec = agent([calls(("add", {"a": 1})), {"text": "resumed"}])
        await h.run("kept", "one", spec, stop_at=lambda e: e.type == "tool.call")
        with psycopg.connect(postgres_url) as conn:

            def released() -> bool:
                row = conn.execute(
                    "SELECT expires_at = '-infinity' FROM leases WHERE session_id = 'kept'"
                ).fetchone()
                conn.rollback()
                return bool(row and row[0])

            await until(released, what="the first run's lease released")
            (call,) = (await h.get("kept")).messages[-1].tool_calls
            conn.execute("SELECT 1 FROM leases WHERE session_id = 'kept' FOR UPDATE")
            resumed = asyncio.create_task(h.run("kept", agent=spec, resume=True))
            await asyncio.sleep(1.0)  # the run claimed the session, waits on the lease row
            submit = asyncio.ensure_future(
                h.stub.SubmitToolResult(
                    pb.SubmitToolResultRequest(
                        session_id="kept", tool_call_id=call.id, result_json="1"
                    )
                )
            )
            await asyncio.sleep(0.5)
            assert not submit.done(), submit.result()  # kept: answered once it is saved
            conn.rollback()  # the lock goes: the run resumes and takes the kept result
        answer = await asyncio.wait_for(submit, 30)
        assert answer.outcome == pb.SUBMIT_OUTCOME_ACCEPTED
        log = await asyncio.wait_for(resumed, 30)
        assert log.error is None, log.error
        assert log.done is not None and log.done.final_text == "resumed"
        again = await h.stub.SubmitToolResult(
            pb.SubmitToolResultRequest(session_id="kept", tool_call_id=call.id, result_json="1")
        )
        assert again.outcome == pb.SUBMIT_OUTCOME_DUPLICATE
        cp = await h.get("kept")
        assert [m.content for m in cp.messages if m.role == pb.ROLE_TOOL] == ["1"]
        assert_valid_transcript(cp)
        await h.close()
    finally:
        d.stop()
