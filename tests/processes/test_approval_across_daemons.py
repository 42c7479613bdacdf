"""An approval resolved by another daemon process than the one that paused the run,
after the first daemon was killed (a real SQLite file shared by both)."""

from __future__ import annotations

import json
from pathlib import Path

from luosho.v1 import agent_pb2 as pb
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.harness import Harness, agent, calls


async def test_approval_resolved_by_a_second_daemon_after_the_first_was_killed(
    tmp_path: Path,
) -> None:
    log_file = tmp_path / "calls.jsonl"
    args = ("--store", db_url(tmp_path), "--scripted-call-log", str(log_file))
    spec = agent([calls(("add", {"a": 1}), ("pay", {"eur": 40})), {"text": "paid"}], ["add", "pay"])
    spec.tools[1].needs_approval = True
    first = DaemonProcess(*args).start()
    try:
        h = Harness(first.address, call_log=log_file)
        log = await h.run("order", "charge", spec, {"add": lambda a: 1})
        approval = log.of("approval.requested")[0].approval_requested.approval
        await h.close()
    finally:
        first.kill9()
        first.stop()
    second = DaemonProcess(*args).start()
    try:
        h = Harness(second.address, call_log=log_file)
        listed = await h.stub.ListApprovals(pb.ListApprovalsRequest())
        assert [a.approval_id for a in listed.approvals] == [approval.approval_id]
        paid = []
        events = []
        async for resp in h.stub.Resolve(
            pb.ResolveRequest(approval_id=approval.approval_id, approved=True)
        ):
            e = resp.event
            events.append(e)
            if e.type == "tool.call":
                paid.append(json.loads(e.tool_call.call.arguments_json))
                await h.submit("order", e.tool_call.call.id, '"ok"')
        assert paid == [{"eur": 40}] and events[-1].run_done.final_text == "paid"
        assert events[0].seq > log.events[-1].seq  # the session's numbering goes on
        assert h.model_calls("order") == 2
        await h.close()
    finally:
        second.stop()
