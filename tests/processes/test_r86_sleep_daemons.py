"""R86 with real daemon processes on one PostgreSQL store: sleeping sessions are woken by
exactly one of two daemons, each once; and a sleeper whose daemons were all killed -9
wakes when a daemon starts again after its time. Real time, short sleeps (the moved clock
is tested in tests/daemon/test_r86_sleep.py)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.daemon_process import DaemonProcess
from tests.support.harness import Harness, agent, assert_valid_transcript, calls

pytestmark = pytest.mark.asyncio


def sleeper(seconds: float) -> pb.AgentSpec:
    return agent([calls(("sleep", {"seconds": seconds})), {"text": "woke"}], [], sleep_tool=True)


def args(postgres_url: str, calls_log: Path, owner: str) -> tuple[str, ...]:
    return (
        "--store",
        postgres_url,
        "--scripted-call-log",
        str(calls_log),
        "--lease-owner",
        owner,
        "--sleep-sweep-s",
        "0.2",
    )


async def finished(h: Harness, sids: list[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    for sid in sids:
        while (await h.get(sid)).status != pb.CHECKPOINT_STATUS_FINISHED:
            assert time.monotonic() < deadline, f"{sid} not woken"
            await asyncio.sleep(0.1)


def model_calls(calls_log: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in calls_log.read_text().splitlines():
        sid = json.loads(line)["session_id"]
        counts[sid] = counts.get(sid, 0) + 1
    return counts


async def woken_runs(h: Harness, sid: str) -> int:
    """The runs of ``sid`` that began after its first (the wakes), read from its log."""
    starts = 0
    async for resp in h.stub.Watch(pb.WatchRequest(session_id=sid), timeout=10):
        starts += resp.event.type == "run.start"
    return starts - 1


async def test_r86_two_daemons_on_postgres_wake_each_sleeper_exactly_once(
    postgres_url: str, tmp_path: Path
) -> None:
    log = tmp_path / "calls.jsonl"
    daemons = [DaemonProcess(*args(postgres_url, log, o)).start() for o in ("a", "b")]
    hs = [Harness(d.address) for d in daemons]
    try:
        sids = [f"nap-{i}" for i in range(12)]
        for i, sid in enumerate(sids):  # half put to sleep through each daemon
            run = await hs[i % 2].run(sid, "go", sleeper(1.0 + (i % 3) * 0.2))
            assert run.done.finish_reason == pb.FINISH_REASON_SLEEPING, run.error
        listed = await hs[1].stub.ListSessions(
            pb.ListSessionsRequest(status=pb.CHECKPOINT_STATUS_SLEEPING, page_size=100)
        )
        assert len(listed.sessions) >= 6  # seen asleep through either daemon
        await finished(hs[0], sids)
        await asyncio.sleep(1.0)  # a second wake would have happened by now
        assert model_calls(log) == {sid: 2 for sid in sids}  # one before, one after: once
        for sid in sids:
            cp = await hs[0].get(sid)
            assert_valid_transcript(cp)
            assert cp.messages[-1].content == "woke"
            assert json.loads(cp.messages[-2].content)["woken"] == "time"
            assert await woken_runs(hs[0], sid) == 1
    finally:
        for h in hs:
            await h.close()
        for d in daemons:
            d.stop()


async def test_r86_a_sleeper_wakes_after_kill9_of_every_daemon_and_a_restart(
    postgres_url: str, tmp_path: Path
) -> None:
    log = tmp_path / "calls.jsonl"
    daemons = [DaemonProcess(*args(postgres_url, log, o)).start() for o in ("a", "b")]
    try:
        h = Harness(daemons[0].address)
        run = await h.run("k9", "go", sleeper(1.5))
        assert run.done.finish_reason == pb.FINISH_REASON_SLEEPING, run.error
        await h.close()
        for d in daemons:
            d.kill9()
    finally:
        for d in daemons:
            d.stop()
    await asyncio.sleep(2.0)  # its time passes while no daemon runs
    assert model_calls(log) == {"k9": 1}
    again = DaemonProcess(*args(postgres_url, log, "c")).start()
    try:
        h = Harness(again.address)
        await finished(h, ["k9"], timeout=30)
        cp = await h.get("k9")
        assert_valid_transcript(cp)
        assert json.loads(cp.messages[-2].content)["woken"] == "time"
        assert model_calls(log) == {"k9": 2}
        await h.close()
    finally:
        again.stop()
