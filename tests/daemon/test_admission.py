"""Admission (issue 16): a daemon refuses a new run early, with RESOURCE_EXHAUSTED, a
reason and a retry-after in the ErrorInfo, rather than slowing every run down: over
``max_active_runs`` (TOO_MANY_RUNS) and while its event loop runs late (DAEMON_OVERLOADED).
Real daemons over real gRPC; the loop is made late by real work blocking it."""

from __future__ import annotations

import asyncio
import math
import time

import grpc
import pytest

from luoshod.errors import DaemonOverloaded
from luoshod.server.admission import (
    LAG_WINDOW_S,
    MAX_RETRY_AFTER_S,
    START_COST_S,
    Admission,
    LoopLag,
    Pacer,
)
from luoshod.server.app import Config, Daemon
from tests.support.harness import Harness, a_run_waiting_on_a_tool, agent, error_info


async def test_too_many_runs_says_how_many_and_when_to_retry() -> None:
    d = Daemon(Config(listen=["127.0.0.1:0"], store="memory://", max_active_runs=1))
    await d.start()
    h = Harness(d.addresses[0], d)
    try:
        waiting, _ = await a_run_waiting_on_a_tool(h)  # active: it waits for its tool result
        second = await h.run("second", "hi", agent([{"text": "no room"}]))
        code, reason, meta = error_info(second.error)
        assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "TOO_MANY_RUNS")
        assert (meta["limit"], meta["active"]) == ("1", "1") and 1 <= int(
            meta["retry_after_s"]
        ) <= 60
        assert "max_active_runs" in second.error.details()
        waiting.cancel()
    finally:
        await h.close()
        await d.stop()


async def test_a_daemon_whose_loop_stays_late_refuses_new_runs_and_takes_them_again() -> None:
    d = Daemon(Config(listen=["127.0.0.1:0"], store="memory://", max_loop_lag_ms=100))
    await d.start()
    h = Harness(d.addresses[0], d)
    stop = asyncio.Event()

    async def hog() -> None:
        # Real work on the daemon's loop: 300 ms blocks with a yield between them, so the
        # loop still serves calls, each callback ~300 ms late.
        while not stop.is_set():
            time.sleep(0.3)
            await asyncio.sleep(0)

    try:
        assert (await h.run("before", "hi", agent([{"text": "ok"}]))).done.final_text == "ok"
        hogging = asyncio.create_task(hog())
        while d.lag.lag_s * 1000 <= 100:  # the lag gate closes once the window is late
            await asyncio.sleep(0.05)
        refused = await h.run("during", "hi", agent([{"text": "never"}]))
        code, reason, meta = error_info(refused.error)
        assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "DAEMON_OVERLOADED")
        assert int(meta["lag_ms"]) > 100 and meta["limit_ms"] == "100"
        assert (
            1 <= int(meta["retry_after_s"]) <= 60 and "max_loop_lag_ms" in refused.error.details()
        )
        stop.set()
        await hogging
        while d.lag.lag_s * 1000 > 100:
            await asyncio.sleep(0.05)
        assert (await h.run("during", "hi", agent([{"text": "now"}]))).done.final_text == "now"
    finally:
        stop.set()
        await h.close()
        await d.stop()


def test_the_lag_gate_needs_a_whole_late_window_not_one_late_tick() -> None:
    lag = LoopLag()
    admission = Admission(max_loop_lag_ms=500, lag=lag)
    t = 1000.0
    for late in (0.0, 0.0, 2.0, 0.0):  # one long step (a burst of starts): still open
        t += 0.2 + late
        lag.record(t, late)
    admission.check(0, "s")
    for _ in range(int(LAG_WINDOW_S / 0.8) + 2):  # late at every tick for a whole window
        t += 0.8
        lag.record(t, 0.6)
    assert lag.lag_s == 0.6
    with pytest.raises(DaemonOverloaded) as refused:
        admission.check(0, "s")
    assert refused.value.metadata["retry_after_s"] == "2"


def test_a_burst_is_admitted_up_to_the_loop_work_the_lag_limit_allows() -> None:
    """Runs started together are admitted while the loop work they bring (START_COST_S
    each) fits in max_loop_lag_ms; the excess is refused at once, before any late tick."""
    lag = LoopLag()
    admission = Admission(max_loop_lag_ms=1000, lag=lag)
    fits = int(1.0 / START_COST_S + 1e-9)
    for k in range(fits):
        admission.check(k, f"s{k}")
    with pytest.raises(DaemonOverloaded) as refused:
        admission.check(fits, "one-more")
    meta = refused.value.metadata
    assert meta["limit_ms"] == "1000" and 990 <= int(meta["lag_ms"]) <= 1000
    assert meta["retry_after_s"] == "2" and "max_loop_lag_ms" in str(refused.value)
    # The next sample, 0.3 s later: the loop worked that long, so 0.3 s worth of starts
    # comes back (a loop paused once is not kept refusing: no late tick empties it).
    lag.record(1000.0, 0.1, 0.3)
    for k in range(int(0.3 / START_COST_S + 1e-9)):
        admission.check(k, f"t{k}")
    with pytest.raises(DaemonOverloaded):
        admission.check(0, "t-more")
    lag.record(1005.0, 4.8, 5.0)  # a loop paused for 5 s: full again, never more
    for k in range(fits):
        admission.check(k, f"u{k}")
    with pytest.raises(DaemonOverloaded):
        admission.check(0, "u-more")
    assert Admission(max_loop_lag_ms=0).starts is None  # 0: no lag gate, no burst gate


async def test_a_burst_of_runs_gets_its_excess_refused_early_and_the_rest_finish() -> None:
    d = Daemon(Config(listen=["127.0.0.1:0"], store="memory://", max_loop_lag_ms=200))
    await d.start()
    h = Harness(d.addresses[0], d)
    try:
        logs = await asyncio.gather(
            *(h.run(f"burst-{k}", "hi", agent([{"text": f"ok {k}"}])) for k in range(600))
        )
        refused = [log for log in logs if log.error is not None]
        admitted = [log for log in logs if log.error is None]
        assert refused and admitted
        for log in refused:
            code, reason, meta = error_info(log.error)
            assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "DAEMON_OVERLOADED")
            assert meta["limit_ms"] == "200" and 1 <= int(meta["retry_after_s"]) <= 60
        assert all(
            log.done is not None and log.done.final_text.startswith("ok") for log in admitted
        )
        while d.runs.admission.starts.queued_s > 0.1:  # the loop catches up
            await asyncio.sleep(0.05)
        assert (await h.run("after", "hi", agent([{"text": "now"}]))).done.final_text == "now"
    finally:
        await h.close()
        await d.stop()


def test_a_burst_s_refusals_are_told_to_come_back_one_start_s_work_after_another() -> None:
    """The excess of a burst is not told to come back all at once (to be refused again,
    all but a budget's worth): each refusal's retry_after_s takes the next slot, one
    start's loop work after the one before, so no more are told the same second than the
    budget admits in a second; a refusal once the slots have passed gets the gate's wait."""
    lag = LoopLag()
    admission = Admission(max_loop_lag_ms=100, lag=lag)
    clock = [1000.0]
    admission.pacer = Pacer(clock=lambda: clock[0])  # the refusals come at one instant
    fits = round(0.1 / START_COST_S)
    for k in range(fits):
        admission.check(k, f"s{k}")
    hints = []
    for k in range(600):
        with pytest.raises(DaemonOverloaded) as refused:
            admission.check(fits, f"more-{k}")
        hints.append(int(refused.value.metadata["retry_after_s"]))
    assert hints == sorted(hints) and hints[0] == 1  # 2 x the 0.1 s admitted, rounded up
    per_second = round(1 / START_COST_S)
    assert max(hints.count(h) for h in set(hints)) <= per_second
    assert hints[-1] == math.ceil(0.2 + 600 * START_COST_S)  # 600 starts' work: 2.6 s -> 3
    clock[0] = 1010.0  # the slots passed
    with pytest.raises(DaemonOverloaded) as later:
        admission.check(fits, "later")
    assert later.value.metadata["retry_after_s"] == "1"


def test_the_pacer_never_names_more_than_a_minute() -> None:
    pacer = Pacer(spacing_s=1.0)
    waits = [pacer.slot(2.0, now=100.0) for _ in range(100)]
    assert waits[:3] == [2.0, 3.0, 4.0] and max(waits) == MAX_RETRY_AFTER_S
    assert pacer.slot(2.0, now=1000.0) == 2.0  # long after: the gate's own wait again
