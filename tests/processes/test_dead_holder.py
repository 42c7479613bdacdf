"""Locked out after a crash no more (issue 28): a daemon on an embedded store (SQLite,
LMDB) killed with kill -9 while its run waits for a tool, and started again with no
``--lease-owner``, resumes the session at once instead of answering SESSION_BUSY until
the dead daemon's lease runs out (15 s). The new daemon recognises the holder as a process
of this machine (same host, boot id, PID namespace) that is gone, and takes its leases
back with the next fencing token. A live holder (a second daemon on the same store, even
one paused with SIGSTOP) keeps its lease, and the refusal says it is alive."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import grpc
import pytest

from tests.support.daemon_process import DaemonProcess
from tests.support.harness import error_info
from tests.support.leases import SPEC, add, check_finished, harness, waiting_for_a_tool

pytestmark = pytest.mark.asyncio

TTL_S = 15.0  # the default lease TTL (no --lease-ttl): what a resume must not wait out


@pytest.fixture(params=["sqlite", "lmdb"])
def embedded_store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return {"sqlite": f"sqlite:///{tmp_path}/luoshod.db", "lmdb": f"lmdb://{tmp_path}/lmdb"}[
        request.param
    ]


def daemon(store: str, tmp_path: Path) -> DaemonProcess:
    """A daemon as ``make run`` starts one: its default lease owner, the default TTL."""
    return DaemonProcess(
        "--store", store, "--scripted-call-log", str(tmp_path / "calls.jsonl")
    ).start()


async def test_after_kill9_and_a_restart_a_resume_succeeds_at_once(
    embedded_store: str, tmp_path: Path
) -> None:
    first = daemon(embedded_store, tmp_path)
    try:
        running = await waiting_for_a_tool(harness(first, tmp_path), "crash-3")
        first.kill9()
        await running  # its stream broke: UNAVAILABLE
    finally:
        first.stop()
    second = daemon(embedded_store, tmp_path)
    try:
        h = harness(second, tmp_path)
        started = time.monotonic()
        log = await h.run("crash-3", agent=SPEC, tools={"add": add}, resume=True)
        took = time.monotonic() - started
        assert log.error is None, (log.error, second.stderr()[-3000:])
        assert took < TTL_S / 3, f"the resume took {took:.1f} s"
        check_finished(await h.get("crash-3"), h, "crash-3")
    finally:
        second.stop()


async def test_a_live_holder_is_not_taken_over_and_busy_says_it_is_alive(
    embedded_store: str, tmp_path: Path
) -> None:
    a, b = daemon(embedded_store, tmp_path), daemon(embedded_store, tmp_path)
    try:
        ha, hb = harness(a, tmp_path), harness(b, tmp_path)
        running = await waiting_for_a_tool(ha, "s")
        for paused in (False, True):  # a daemon stopped by SIGSTOP is alive too
            if paused:
                assert a.proc is not None
                a.proc.send_signal(signal.SIGSTOP)
            busy = await hb.run("s", agent=SPEC, tools={"add": add}, resume=True)
            assert busy.error is not None and busy.events == []
            code, reason, meta = error_info(busy.error)
            assert (code, reason) == (grpc.StatusCode.ABORTED, "SESSION_BUSY")
            assert meta["holder_alive"] == "true" and meta["holder"].split("/")[1] == str(
                a.proc.pid
            )
            assert meta["expires_at"].endswith("Z") and 0 <= float(meta["expires_in_s"]) <= TTL_S
            assert "sessions cancel s" in meta["hint"]
            assert (
                "until 20" in busy.error.details() and "holder alive: true" in busy.error.details()
            )
        a.proc.send_signal(signal.SIGCONT)
        # Once it is killed, the other daemon takes the session at once and finishes it.
        a.kill9()
        running.cancel()
        started = time.monotonic()
        log = await hb.run("s", agent=SPEC, tools={"add": add}, resume=True)
        assert log.error is None and time.monotonic() - started < TTL_S / 3
        check_finished(await hb.get("s"), hb, "s")
    finally:
        for d in (a, b):
            if d.proc and d.proc.poll() is None:
                d.proc.send_signal(signal.SIGCONT)
            d.stop()
