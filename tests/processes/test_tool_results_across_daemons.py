"""Two daemons sharing PostgreSQL: a run takes tool results only through the daemon that
drives it (its waiter lives in that process). A result sent to the other daemon is
forwarded to the driving one (R89). A call that is not forwarded again — one another
daemon forwarded already, marked so — and reaches a daemon that does not drive the run
fails with ``FAILED_PRECONDITION``/``TOOL_CALL_NOT_PENDING`` whose ErrorInfo names the
owning daemon (``holder``: its lease owner name, as ``SESSION_BUSY`` does), for an ordinary
run and for a queued run (R68) that daemon A runs while its caller follows it from daemon
B; the result sent to A is taken."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.server.peers import FORWARDED
from tests.support.daemon_process import DaemonProcess
from tests.support.harness import Harness, agent, busy_with_a_tool, calls, error_info, user

pytestmark = pytest.mark.asyncio


async def refused_at(h: Harness, sid: str, call_id: str) -> dict[str, str]:
    """The refusal of a result for ``call_id`` marked as forwarded already (answered where
    it arrives, never forwarded again)."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await h.stub.SubmitToolResult(
            pb.SubmitToolResultRequest(
                session_id=sid, tool_call_id=call_id, result_json=json.dumps(0)
            ),
            metadata=((FORWARDED, "another-daemon"),),
        )
    code, reason, meta = error_info(caught.value)
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "TOOL_CALL_NOT_PENDING"), (
        caught.value
    )
    assert call_id in caught.value.details() and "daemon-a" in caught.value.details()
    return meta


async def test_r89_a_tool_result_at_another_daemon_goes_to_the_daemon_that_drives_the_run(
    postgres_url: str, tmp_path: Path
) -> None:
    # B sweeps its queue rarely: A, whose run ends, runs what B queued (deterministic).
    pa = DaemonProcess(
        "--store", postgres_url, "--lease-owner", "daemon-a", "--queue-sweep-s", "0.2"
    ).start()
    pb_ = DaemonProcess(
        "--store", postgres_url, "--lease-owner", "daemon-b", "--queue-sweep-s", "3600"
    ).start()
    try:
        a, b = Harness(pa.address), Harness(pb_.address)
        spec = agent(
            [
                calls(("add", {"a": 1})),
                {"text": "one done"},
                calls(("add", {"a": 2})),
                {"text": "two done"},
            ]
        )
        first, call = await busy_with_a_tool(a, "own", spec)
        # An ordinary run driven by A.
        meta = await refused_at(b, "own", call.id)
        assert (
            meta["holder"] == "daemon-a"
            and meta["session_id"] == "own"
            and meta["tool_call_id"] == call.id
        )
        assert meta["expires_at"].endswith("Z")

        # A queued run: queued through B, run by A once its run ends, followed from B.
        stream = b.stub.Execute(
            pb.ExecuteRequest(
                session_id="own",
                input=[user("two")],
                agent=spec,
                if_busy=pb.IF_BUSY_ENQUEUE,
                request_id="via-b",
            )
        )
        events: list[pb.Event] = []
        refusals: list[dict[str, str]] = []

        async def follow() -> None:
            async for resp in stream:
                e = resp.event
                events.append(e)
                if e.type == "input.queued":
                    # B looks at the queue once, just after queueing (the session is A's
                    # then: SESSION_BUSY, and B sweeps again only in an hour); A's run ends
                    # after that, so A, at its run's end, runs the queued input.
                    await asyncio.sleep(1.0)
                    assert (
                        await a.submit("own", call.id, json.dumps(1)) == pb.SUBMIT_OUTCOME_ACCEPTED
                    )
                if e.type == "tool.call":
                    refusals.append(await refused_at(b, "own", e.tool_call.call.id))
                    # Not marked: B forwards it to A, which takes it (R89).
                    outcome = await b.submit("own", e.tool_call.call.id, json.dumps(2))
                    assert outcome == pb.SUBMIT_OUTCOME_ACCEPTED

        await asyncio.wait_for(follow(), 60)
        assert (await first).done.final_text == "one done"
        assert [r["holder"] for r in refusals] == ["daemon-a"]
        done = [e for e in events if e.type == "run.done"]
        assert done and done[-1].run_done.final_text == "two done"
        results = [m for m in (await b.get("own")).messages if m.role == pb.ROLE_TOOL]
        assert [m.content for m in results] == ["1", "2"]  # each result once, as A took it
        await a.close()
        await b.close()
    finally:
        pa.stop()
        pb_.stop()


async def test_a_call_no_run_waits_for_names_no_daemon(postgres_url: str) -> None:
    """A's run stopped (its caller left at the tool call): no lease is held, so B says the
    call is not pending, without a holder (resume the session to run it again)."""
    pa = DaemonProcess("--store", postgres_url, "--lease-owner", "daemon-a").start()
    pb_ = DaemonProcess("--store", postgres_url, "--lease-owner", "daemon-b").start()
    try:
        a, b = Harness(pa.address), Harness(pb_.address)
        spec = agent([calls(("add", {"a": 1})), {"text": "done"}])
        log = await a.run("gone", "one", spec, {}, stop_at=lambda e: e.type == "tool.call")
        assert log.dropped
        call_id = (await a.get("gone")).messages[-1].tool_calls[0].id
        deadline = asyncio.get_running_loop().time() + 20
        while True:  # the run stops once A sees its caller gone, and its lease is released
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await b.submit("gone", call_id, "1")
            code, reason, meta = error_info(caught.value)
            assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "TOOL_CALL_NOT_PENDING")
            if "holder" not in meta:
                break
            assert asyncio.get_running_loop().time() < deadline, meta
            await asyncio.sleep(0.1)
        assert "resume" in caught.value.details()
        await a.close()
        await b.close()
    finally:
        pa.stop()
        pb_.stop()
