"""Issue 16: lease upkeep per daemon, not per run, between two real daemons sharing a
PostgreSQL database. A daemon holding many sessions renews all of their leases in one
write an interval; frozen (SIGSTOP) past the TTL, it is still fenced off the session
another daemon took over, while the sessions nobody took keep going when it wakes."""

from __future__ import annotations

import asyncio
import signal
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from daemon_proc import DaemonProcess
from support import error_info
from test_leases import check_finished, harness, resume_when_free, waiting_for_a_tool

from luosho.v1 import agent_pb2 as pb

HELD = 12
RENEW_S = 0.5


def lease_writes(metrics: str) -> dict[str, float]:
    with urllib.request.urlopen(f"http://{metrics}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    found: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("luoshod_store_lease_writes_total{"):
            op = line.split('op="')[1].split('"')[0]
            found[op] = float(line.rsplit(" ", 1)[1])
    return {op: found.get(op, 0.0) for op in ("acquire", "renew", "release")}


@pytest.fixture
def pg_daemons(
    postgres_url: str, tmp_path: Path
) -> Iterator[tuple[DaemonProcess, DaemonProcess, str]]:
    """``daemon-a`` (with metrics) and ``daemon-b`` on one PostgreSQL database, 2 s TTL."""
    log = str(tmp_path / "calls.jsonl")
    ttl = ("--lease-ttl-s", "2", "--lease-renew-s", str(RENEW_S), "--scripted-call-log", log)
    a = DaemonProcess(
        "--store",
        postgres_url,
        "--lease-owner",
        "daemon-a",
        "--metrics-listen",
        "127.0.0.1:0",
        *ttl,
    )
    b = DaemonProcess("--store", postgres_url, "--lease-owner", "daemon-b", *ttl)
    started: list[DaemonProcess] = []
    try:
        started.append(a.start())
        assert a.proc is not None and a.proc.stdout is not None
        metrics = (
            a.proc.stdout.readline()
            .removeprefix("luoshod metrics on http://")
            .removesuffix("/metrics\n")
        )
        started.append(b.start())
        yield a, b, metrics
    finally:
        for d in started:
            if d.proc and d.proc.poll() is None:
                d.proc.send_signal(signal.SIGCONT)  # a paused one must be able to die
            d.stop()


async def test_one_renewal_write_an_interval_covers_every_session_and_a_frozen_holder_is_fenced(
    pg_daemons: tuple[DaemonProcess, DaemonProcess, str], tmp_path: Path
) -> None:
    a, b, metrics = pg_daemons
    ha, hb = harness(a, tmp_path), harness(b, tmp_path)
    stalled = await waiting_for_a_tool(ha, "s")
    others = {f"o{k}": await waiting_for_a_tool(ha, f"o{k}") for k in range(HELD)}
    before = await asyncio.to_thread(lease_writes, metrics)
    assert before["acquire"] == HELD + 1
    start = time.monotonic()
    while (now := await asyncio.to_thread(lease_writes, metrics))["renew"] < before["renew"] + 4:
        await asyncio.sleep(RENEW_S / 2)  # paces the scrapes; the count is what is checked
    intervals = (time.monotonic() - start) / RENEW_S
    # One write an interval for HELD + 1 sessions, not one a session.
    assert now["renew"] - before["renew"] <= intervals + 2 < HELD

    assert a.proc is not None
    a.proc.send_signal(signal.SIGSTOP)  # frozen past its TTL: B takes "s" over
    try:
        refusals, resumed = await resume_when_free(hb, "s")
        assert refusals >= 1 and resumed.error is None and resumed.done is not None
        done = await hb.get("s")
    finally:
        a.proc.send_signal(signal.SIGCONT)
    # A's renewal finds "s" taken over: that run alone stops with LEASE_LOST, and nothing
    # of it reaches the store.
    log = await asyncio.wait_for(stalled, 20)
    assert log.error is not None and error_info(log.error)[:2] == (
        grpc.StatusCode.ABORTED,
        "LEASE_LOST",
    )
    assert await hb.get("s") == done
    check_finished(done, hb, "s")
    # The sessions nobody took over were renewed with the rest (same tokens): A still
    # writes them. A result is ACCEPTED only once saved under the session's lease (R54).
    accepted = pb.SUBMIT_OUTCOME_ACCEPTED
    for sid, run in others.items():
        assert [await ha.submit(sid, f"call_0_{j}", "1") for j in range(2)] == [accepted, accepted]
        results = [m.tool_call_id for m in (await ha.get(sid)).messages if m.role == pb.ROLE_TOOL]
        assert results == ["call_0_0", "call_0_1"] and not run.done(), sid
        run.cancel()
    await ha.close()
    await hb.close()
