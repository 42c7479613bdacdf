"""A tool call's attempt and its reconcile across a daemon killed with ``kill -9``
(docs/reference/rules.md R77), with real processes on SQLite, LMDB and PostgreSQL, and a
takeover by a second daemon on PostgreSQL.

Four sessions each hand out one ``pay`` call; the test's client runs the payment (a
ledger keyed by the call id, as a payment provider's idempotency key would be) for three
of them — the fourth never started — and the daemon is killed before any result is
submitted. The daemon that resumes them hands each call out again with attempt 2, or, for
a tool with ``reconcile``, first asks: DONE records the payment without running the tool
again, NOT_STARTED hands it out again, UNKNOWN hands it out marked so the tool checks the
ledger by the call id (as the plain tool does on its attempt 2). Every payment is made
exactly once."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from pathlib import Path

import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.daemon_process import DaemonProcess
from tests.support.harness import Harness, agent, assert_valid_transcript, calls

pytestmark = pytest.mark.asyncio

TTL = ("--lease-ttl-s", "2", "--lease-renew-s", "0.5")
#: session → (does its tool reconcile, does the client run the payment before the kill)
SESSIONS = {
    "plain": (False, True),
    "done": (True, True),
    "not-started": (True, False),
    "unknown": (True, True),
}


def pay_agent(reconcile: bool) -> pb.AgentSpec:
    spec = agent([calls(("pay", {"amount": 5})), {"text": "paid"}], ["pay"])
    spec.tools[0].reconcile = reconcile
    return spec


class Ledger:
    """The payment provider: payments by idempotency key, and how often ``pay`` ran."""

    def __init__(self) -> None:
        self.payments: dict[str, int] = {}
        self.runs: Counter[str] = Counter()

    def pay(self, key: str, amount: int, *, check_first: bool) -> dict[str, object]:
        self.runs[key] += 1
        if check_first and key in self.payments:
            return {"payment": key, "again": False}
        assert key not in self.payments, f"{key} paid twice"
        self.payments[key] = amount
        return {"payment": key}


async def hand_out_all(h: Harness, ledger: Ledger) -> dict[str, pb.ToolCallRequested]:
    """Start every session and wait until each has its call handed out (the payment made
    for those that run it); the runs stay waiting for their results."""
    handed: dict[str, pb.ToolCallRequested] = {}
    streams = []
    for sid, (reconcile, runs) in SESSIONS.items():
        stream = h.stub.Execute(
            pb.ExecuteRequest(
                session_id=sid,
                input=[pb.Message(role=pb.ROLE_USER, content="pay")],
                agent=pay_agent(reconcile),
            )
        )
        streams.append(stream)
        async for resp in stream:
            if resp.event.type == "tool.call":
                call = resp.event.tool_call
                assert (call.attempt, call.reconciled) == (1, pb.RECONCILE_OUTCOME_UNSPECIFIED)
                if runs:
                    ledger.pay(f"{sid}:{call.call.id}", 5, check_first=False)
                handed[sid] = call
                break
    return handed


async def resume_all(h: Harness, ledger: Ledger, deadline_s: float = 20) -> dict[str, list[str]]:
    """Resume every session, answering reconciles from the ledger; the events of each."""
    seen: dict[str, list[str]] = {}
    for sid in SESSIONS:
        end = time.monotonic() + deadline_s
        while True:
            events: list[str] = []
            log = await h.run(sid, None, resume=True, on_event=answerer(h, sid, ledger, events))
            if log.reason != "SESSION_BUSY":  # a killed holder's lease runs out (R52)
                break
            assert time.monotonic() < end, "the lease never became free"
            await asyncio.sleep(0.2)
        assert log.error is None and log.done.finish_reason == pb.FINISH_REASON_STOP, log.error
        seen[sid] = events
    return seen


def answerer(h: Harness, sid: str, ledger: Ledger, events: list[str]):
    async def on_event(e: pb.Event) -> None:
        if e.type == "tool.reconcile":
            r = e.tool_reconcile
            assert r.attempt == 1
            events.append("reconcile")
            key = f"{sid}:{r.call.id}"
            if sid == "unknown":  # the client cannot tell (say its provider is down)
                outcome, body = pb.RECONCILE_OUTCOME_UNKNOWN, ""
            elif key in ledger.payments:
                outcome, body = pb.RECONCILE_OUTCOME_DONE, json.dumps({"payment": key})
            else:
                outcome, body = pb.RECONCILE_OUTCOME_NOT_STARTED, ""
            await h.stub.SubmitToolResult(
                pb.SubmitToolResultRequest(
                    session_id=sid, tool_call_id=r.call.id, reconcile=outcome, result_json=body
                )
            )
        elif e.type == "tool.call":
            c = e.tool_call
            events.append(f"call attempt={c.attempt} reconciled={c.reconciled}")
            # A hand-out after the first, unless the client said the call never started,
            # may follow a payment: the tool looks its key up first.
            check = c.attempt > 1 and c.reconciled != pb.RECONCILE_OUTCOME_NOT_STARTED
            result = ledger.pay(f"{sid}:{c.call.id}", 5, check_first=check)
            await h.submit(sid, c.call.id, json.dumps(result))

    return on_event


async def check_after(h: Harness, ledger: Ledger, seen: dict[str, list[str]]) -> None:
    unknown, not_started = pb.RECONCILE_OUTCOME_UNKNOWN, pb.RECONCILE_OUTCOME_NOT_STARTED
    assert seen == {
        "plain": ["call attempt=2 reconciled=0"],  # no reconcile: handed out again
        "done": ["reconcile"],  # DONE: recorded, the tool did not run again
        "not-started": ["reconcile", f"call attempt=2 reconciled={not_started}"],
        "unknown": ["reconcile", f"call attempt=2 reconciled={unknown}"],
    }
    # Each payment made once; the tool ran again only where it was handed out again.
    assert sorted(ledger.payments) == sorted(f"{s}:call_0_0" for s in SESSIONS)
    assert ledger.runs == {
        "plain:call_0_0": 2,  # ran again (R24), found the payment by its key (attempt 2)
        "done:call_0_0": 1,
        "not-started:call_0_0": 1,
        "unknown:call_0_0": 2,  # the second run found the payment by its key
    }
    for sid in SESSIONS:
        cp = await h.get(sid)
        assert cp.status == pb.CHECKPOINT_STATUS_FINISHED
        assert_valid_transcript(cp)
        attempts = 1 if sid == "done" else 2
        assert [(r.call.id, r.attempts) for r in cp.tool_calls] == [("call_0_0", attempts)]
        assert json.loads(cp.messages[3].content)["payment"] == f"{sid}:call_0_0"


@pytest.fixture(params=["sqlite", "lmdb", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/luoshod.db"
    if request.param == "lmdb":
        return f"lmdb://{tmp_path}/lmdb"
    return request.getfixturevalue("postgres_url")


async def test_r77_after_kill9_each_call_comes_back_with_attempt_2_or_a_reconcile(
    store: str,
) -> None:
    args = ("--store", store, "--lease-owner", "d1")  # the same daemon restarted
    ledger = Ledger()
    first = DaemonProcess(*args).start()
    try:
        h = Harness(first.address)
        handed = await hand_out_all(h, ledger)
        assert set(handed) == set(SESSIONS)
        first.kill9()  # every call handed out, no result recorded
        await h.close()
    finally:
        first.stop()
    second = DaemonProcess(*args).start()
    try:
        h = Harness(second.address)
        for sid in SESSIONS:  # the count was saved with the hand-out
            assert (await h.get(sid)).attempts == {"call_0_0": 1}
        await check_after(h, ledger, await resume_all(h, ledger))
        await h.close()
    finally:
        second.stop()


async def test_r77_a_takeover_by_another_daemon_counts_one_more_attempt(
    postgres_url: str,
) -> None:
    ledger = Ledger()
    a = DaemonProcess("--store", postgres_url, "--lease-owner", "daemon-a", *TTL).start()
    b = DaemonProcess("--store", postgres_url, "--lease-owner", "daemon-b", *TTL).start()
    try:
        ha, hb = Harness(a.address), Harness(b.address)
        await hand_out_all(ha, ledger)
        a.kill9()  # its leases hold the sessions until they run out; then B takes over
        await check_after(hb, ledger, await resume_all(hb, ledger))
        await ha.close()
        await hb.close()
    finally:
        a.stop()
        b.stop()
