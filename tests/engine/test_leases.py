"""docs/reference/rules.md R51, R52 and R33 across daemons: two engines on one store, each its own
lease owner, as two daemons sharing a database would be. The store's clock is a fake one
the test advances, so a lease runs out without waiting out its TTL."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from luoshod.domain import FinishReason, Status
from luoshod.errors import ApprovalNotFound, LeaseLost, SessionBusy
from luoshod.store.memory import MemoryStore
from tests.support.engine_harness import (
    EngineHarness,
    RunLog,
    Tools,
    agent,
    assert_valid_transcript,
    calls,
    tool_results,
)

SCRIPT = [calls(("add", {"a": 1}), ("add", {"a": 2})), {"text": "total"}]
TTL_S = 60.0


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def two(tmp_path: Path) -> AsyncIterator[tuple[EngineHarness, EngineHarness, Clock]]:
    """Engines ``daemon-a`` and ``daemon-b`` on one store whose clock the test moves.
    Renewals come every 59 s of real time, so none happens during a test."""
    store, clock = MemoryStore(), Clock()
    store.clock = clock
    await store.open()
    a, b = (
        EngineHarness(
            store,
            call_log=tmp_path / "calls.jsonl",
            owner=name,
            lease_ttl_s=TTL_S,
            lease_renew_s=TTL_S - 1,
        )
        for name in ("daemon-a", "daemon-b")
    )
    try:
        yield a, b, clock
    finally:
        await store.close()


async def waiting_for_a_tool(
    h: EngineHarness, sid: str
) -> tuple[asyncio.Task[RunLog], Tools, asyncio.Queue[str]]:
    """A run of ``sid`` on ``h``, once it waits for its first tool result (which nobody
    gives: the test decides); the tool port to give results through, and the ids of the
    calls asked, as they are asked."""
    asked: asyncio.Queue[str] = asyncio.Queue()
    ports: asyncio.Queue[Tools] = asyncio.Queue()

    def on_event(e, port, control) -> None:
        if e.type == "tool.call":
            asked.put_nowait(e.data["call"].id)
            ports.put_nowait(port)

    run = asyncio.create_task(h.run(sid, "go", agent(SCRIPT), on_event=on_event))
    port = await asyncio.wait_for(ports.get(), 10)
    return run, port, asked


async def test_r51_a_session_run_by_one_daemon_is_busy_on_the_other(two) -> None:
    a, b, _ = two
    running, port, asked = await waiting_for_a_tool(a, "s")
    busy = await b.run("s", "again", agent(SCRIPT), {"add": lambda x: 1})
    assert isinstance(busy.error, SessionBusy) and busy.events == []
    assert busy.error.metadata["holder"] == "daemon-a" and busy.error.metadata[
        "expires_at"
    ].endswith("Z")
    with pytest.raises(SessionBusy):
        await b.delete("s")
    assert b.engine.leases_held() == 0 and a.engine.leases_held() == 1
    for expected in ("call_0_0", "call_0_1"):  # the second is asked once the first is recorded
        call_id = await asyncio.wait_for(asked.get(), 10)
        assert call_id == expected and port.deliver(call_id, "1")
    done = await running
    assert done.done["finish_reason"] is FinishReason.STOP and a.engine.leases_held() == 0
    # A finished run releases the lease at once, not after its TTL.
    again = await b.run("s", "more", agent(SCRIPT), {"add": lambda x: 1})
    assert again.error is None and again.done["finish_reason"] is FinishReason.STOP


async def test_r52_a_frozen_holder_is_taken_over_after_the_ttl_and_cannot_write(two) -> None:
    a, b, clock = two
    stalled, port, _ = await waiting_for_a_tool(a, "s")
    clock.now += TTL_S - 1
    assert (await b.run("s", resume=True)).reason == "SESSION_BUSY"  # R51: until the TTL
    clock.now += 2  # A froze (a GC pause, SIGSTOP) and did not renew: its lease ran out
    resumed = await b.run("s", resume=True, tools={"add": lambda x: x["a"] * 10})
    assert resumed.error is None and resumed.done["finish_reason"] is FinishReason.STOP
    # R52: B ran what A left, from A's last checkpoint: the saved turn, no model call first.
    assert resumed.types[:2] == ["run.start", "tool.call"]
    assert [c["call"].id for c in resumed.of("tool.call")] == ["call_0_0", "call_0_1"]
    done = await b.get("s")
    # A wakes up and records the result given to it now: the store refuses its stale lease.
    assert port.deliver("call_0_0", "999")
    log = await asyncio.wait_for(stalled, 10)
    assert isinstance(log.error, LeaseLost) and log.reason == "LEASE_LOST"
    after = await b.get("s")
    assert after == done and after.status is Status.FINISHED
    assert [m.content for m in tool_results(after)] == ["10", "20"]
    assert_valid_transcript(after)


async def test_r33_an_approval_being_resolved_by_another_daemon_is_not_found_there(two) -> None:
    a, b, _ = two
    spec = agent([calls(("pay", {"eur": 40})), {"text": "paid"}], ["pay"], needs_approval=("pay",))
    paused = await a.run("pay", "charge", spec)
    approval = paused.of("approval.requested")[0]["approval"]
    asked: asyncio.Future[Tools] = asyncio.get_running_loop().create_future()

    def on_event(e, port, control) -> None:
        if e.type == "tool.call":
            asked.set_result(port)

    resolving = asyncio.create_task(a.resolve(approval.approval_id, True, on_event=on_event))
    port = await asyncio.wait_for(asked, 10)  # A claimed it and runs the call
    lost = await b.resolve(approval.approval_id, True)
    assert isinstance(lost.error, ApprovalNotFound) and lost.events == []
    port.deliver(approval.call.id, json.dumps("ok"))
    won = await resolving
    assert won.done["final_text"] == "paid" and won.types.count("tool.call") == 1
