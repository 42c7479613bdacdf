"""Two daemons sharing one store, for the lease tests under tests/processes: the lease
settings they run with (a 2 s TTL), an agent of six ``add`` calls over three turns, a run
left waiting on its first tool call, and the check of a run finished after a takeover
(R20–R24)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from luosho.v1 import agent_pb2 as pb
from tests.support.daemon_process import DaemonProcess
from tests.support.harness import Harness, RunLog, agent, assert_valid_transcript, calls

TTL = ("--lease-ttl-s", "2", "--lease-renew-s", "0.5")
SCRIPT = [calls(("add", {"a": k}), ("add", {"a": 100 + k})) for k in range(3)] + [{"text": "total"}]
SPEC = agent(SCRIPT)


def harness(d: DaemonProcess, tmp_path: Path) -> Harness:
    return Harness(d.address, call_log=tmp_path / "calls.jsonl")


async def waiting_for_a_tool(h: Harness, sid: str) -> asyncio.Task[RunLog]:
    """A run of ``sid`` started through ``h``, once it waits for its first tool result
    (which nobody gives: the test decides what happens to it)."""
    asked = asyncio.Event()

    async def on_event(e: pb.Event) -> None:
        if e.type == "tool.call":
            asked.set()

    run = asyncio.create_task(h.run(sid, "go", SPEC, on_event=on_event))
    await asyncio.wait_for(asked.wait(), 20)
    return run


def add(args: dict[str, int]) -> int:
    return args["a"]


def check_finished(cp: pb.Checkpoint, h: Harness, sid: str) -> None:
    """R20–R24 after a takeover: every call answered once, in order; no turn generated twice."""
    assert cp.status == pb.CHECKPOINT_STATUS_FINISHED
    assert_valid_transcript(cp)
    results = [m.tool_call_id for m in cp.messages if m.role == pb.ROLE_TOOL]
    assert results == [f"call_{k}_{j}" for k in range(3) for j in range(2)]
    turns = sum(1 for m in cp.messages if m.role == pb.ROLE_ASSISTANT)
    assert h.model_calls(sid) == turns == 4
