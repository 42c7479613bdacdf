"""R86: durable timers. An agent with ``sleep_tool`` calls ``sleep``: the run ends with the
session SLEEPING, held by nobody, and a daemon resumes it at its time (the engine's
clock, moved ahead here so a day-long sleep wakes in milliseconds), or earlier on
``Resume`` with ``wake``; input while it sleeps follows ``if_busy``. On each store."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace
from datetime import UTC, datetime

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.server.app import Config, Daemon
from tests.support.harness import (
    AheadClock,
    Harness,
    agent,
    assert_valid_transcript,
    calls,
    error_info,
    execute_if_busy,
    queue_one,
    until,
)

DAY = 86_400.0


def sleeper(seconds: float | None = DAY, *, until_: str = "", after: str = "woke") -> pb.AgentSpec:
    """An agent that sleeps (``seconds`` or ``until_``), then answers ``after``."""
    args: dict[str, object] = {"until": until_} if until_ else {"seconds": seconds}
    return agent([calls(("sleep", args)), {"text": after}], tools=[], sleep_tool=True)


async def status(h: Harness, sid: str) -> int:
    return (await h.get(sid)).status


def sleep_result(cp: pb.Checkpoint) -> dict:
    [call] = [c for m in cp.messages for c in m.tool_calls if c.name == "sleep"]
    [result] = [m for m in cp.messages if m.role == pb.ROLE_TOOL and m.tool_call_id == call.id]
    assert not result.is_error, result.content
    return json.loads(result.content)


async def asleep(h: Harness, sid: str, spec: pb.AgentSpec) -> pb.Checkpoint:
    log = await h.run(sid, "go", spec)
    assert log.error is None, log.error
    assert log.done.finish_reason == pb.FINISH_REASON_SLEEPING
    assert log.done.status == pb.CHECKPOINT_STATUS_SLEEPING
    await h.idle(sid)
    return await h.get(sid)


def wake_all(daemon: Daemon, ahead: float) -> None:
    """Move the daemon's one clock ``ahead`` seconds and nudge its waker."""
    daemon.engine.clock = AheadClock(ahead)
    assert daemon.waker is not None
    daemon.waker.nudge()


async def test_r86_a_day_long_sleep_holds_nothing_and_wakes_in_ms_with_the_clock_moved(
    h: Harness,
) -> None:
    before = time.time()
    cp = await asleep(h, "nap", sleeper())
    assert cp.status == pb.CHECKPOINT_STATUS_SLEEPING
    assert cp.finish_reason == pb.FINISH_REASON_SLEEPING
    wake_at = cp.wake_at.ToDatetime(tzinfo=UTC).timestamp()
    assert before + DAY <= wake_at <= time.time() + DAY + 1
    assert cp.sleep_call_id == cp.messages[-1].tool_calls[0].id
    # Nothing is held for it: no lease, no run; it is a row the listing finds by status.
    assert h.daemon.engine.leases_held() == 0 and h.daemon.runs.get("nap") is None
    listed = await h.stub.ListSessions(
        pb.ListSessionsRequest(status=pb.CHECKPOINT_STATUS_SLEEPING, page_size=10)
    )
    [summary] = listed.sessions
    assert summary.session_id == "nap" and summary.wake_at == cp.wake_at
    await asyncio.sleep(0.3)
    assert await status(h, "nap") == pb.CHECKPOINT_STATUS_SLEEPING  # not before its time
    started = time.monotonic()
    wake_all(h.daemon, DAY + 5)
    await until(
        lambda: _finished(h, "nap"), timeout=10, what="the session woken by the moved clock"
    )
    assert time.monotonic() - started < 5
    cp = await h.get("nap")
    assert_valid_transcript(cp)
    assert cp.messages[-1].content == "woke"
    got = sleep_result(cp)
    assert got["woken"] == "time"
    assert datetime.fromisoformat(got["slept_until"]).timestamp() == pytest.approx(
        wake_at, abs=0.01
    )
    assert not cp.HasField("wake_at") and cp.sleep_call_id == ""
    assert h.daemon.waker.woken == 1


async def _finished(h: Harness, sid: str) -> bool:
    return await status(h, sid) == pb.CHECKPOINT_STATUS_FINISHED


async def test_r86_a_short_sleep_wakes_by_itself_in_real_time(h: Harness) -> None:
    started = time.monotonic()
    await asleep(h, "short", sleeper(0.4))
    await until(lambda: _finished(h, "short"), timeout=10, what="a 0.4 s sleep to end")
    assert time.monotonic() - started >= 0.4
    assert sleep_result(await h.get("short"))["woken"] == "time"


async def test_r86_sleep_until_an_instant_and_one_already_past(h: Harness) -> None:
    soon = datetime.fromtimestamp(time.time() + 3600, UTC).isoformat()
    cp = await asleep(h, "until", sleeper(until_=soon))
    assert cp.wake_at.ToDatetime(tzinfo=UTC).timestamp() == pytest.approx(
        datetime.fromisoformat(soon).timestamp(), abs=0.01
    )
    # An instant already past does not end the run: the result is given at once.
    log = await h.run("past", "go", sleeper(until_="2020-01-01T00:00:00Z"))
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    assert sleep_result(await h.get("past")) == {
        "slept_until": "2020-01-01T00:00:00.000Z",
        "woken": "time",
    }
    # Bad arguments are the call's error result, which the model reads; the run goes on.
    for sid, args in (("both", {"seconds": 1, "until": soon}), ("naive", {"until": "2030-01-01"})):
        spec = agent([calls(("sleep", args)), {"text": "ok"}], tools=[], sleep_tool=True)
        log = await h.run(sid, "go", spec)
        assert log.done.finish_reason == pb.FINISH_REASON_STOP
        [result] = log.of("tool.result")
        assert result.tool_result.is_error


async def test_r86_resume_with_wake_wakes_it_early_and_without_wake_is_refused(
    h: Harness,
) -> None:
    await asleep(h, "early", sleeper())
    log = await h.run("early", resume=True)
    assert error_info(log.error)[:2] == (grpc.StatusCode.ABORTED, "SESSION_SLEEPING")
    assert "wake_at" in error_info(log.error)[2]
    log = await h.follow(h.stub.Resume(pb.ResumeRequest(session_id="early", wake=True)), "early")
    assert log.error is None, log.error
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    cp = await h.get("early")
    assert sleep_result(cp)["woken"] == "resume" and cp.messages[-1].content == "woke"
    log = await h.follow(h.stub.Resume(pb.ResumeRequest(session_id="early", wake=True)), "early")
    assert error_info(log.error)[:2] == (grpc.StatusCode.FAILED_PRECONDITION, "NOT_SLEEPING")


async def test_r86_input_while_asleep_follows_if_busy(h: Harness) -> None:
    spec = sleeper()
    # REJECT (the default): refused, nothing changes.
    await asleep(h, "rej", spec)
    log = await execute_if_busy(h, "rej", "hello?", spec, pb.IF_BUSY_REJECT)
    assert error_info(log.error)[:2] == (grpc.StatusCode.ABORTED, "SESSION_SLEEPING")
    assert await status(h, "rej") == pb.CHECKPOINT_STATUS_SLEEPING
    # ENQUEUE: the input waits with the session and runs once it wakes.
    await asleep(h, "enq", spec)
    queued = await queue_one(h, "enq", "and then?", spec, pb.IF_BUSY_ENQUEUE)
    await asyncio.sleep(0.5)
    got = await h.stub.GetSession(pb.GetSessionRequest(session_id="enq"))
    assert got.checkpoint.status == pb.CHECKPOINT_STATUS_SLEEPING and len(got.queue) == 1
    wake_all(h.daemon, DAY + 5)
    log = await asyncio.wait_for(queued, 20)
    assert log.error is None, log.error
    cp = await h.get("enq")
    assert_valid_transcript(cp)
    assert sleep_result(cp)["woken"] == "time"
    texts = [m.content for m in cp.messages if m.role in (pb.ROLE_USER, pb.ROLE_ASSISTANT)]
    assert texts.index("woke") < texts.index("and then?")
    h.daemon.engine.clock = AheadClock(0)
    # INTERRUPT: wakes it now (the sleep's result says "input") and the input runs.
    await asleep(h, "int", spec)
    log = await execute_if_busy(h, "int", "wake up", spec, pb.IF_BUSY_INTERRUPT)
    assert log.error is None, log.error
    assert log.done is not None and log.done.finish_reason == pb.FINISH_REASON_STOP
    cp = await h.get("int")
    assert_valid_transcript(cp)
    assert sleep_result(cp)["woken"] == "input"
    assert "wake up" in [m.content for m in cp.messages if m.role == pb.ROLE_USER]


async def test_r86_a_daemon_started_after_the_wake_time_resumes_it(config: Config) -> None:
    if config.store == "memory://":
        pytest.skip("a second daemon reads what the first saved: a store on disk")
    first = Daemon(config)
    await first.start()
    h = Harness(first.addresses[0], first, config.scripted_call_log)
    try:
        await asleep(h, "down", sleeper(3600))
    finally:
        await h.close()
        await first.stop()
    second = Daemon(config)
    second.engine.clock = AheadClock(7200)  # it starts two hours later
    await second.start()
    h = Harness(second.addresses[0], second, config.scripted_call_log)
    try:
        await until(lambda: _finished(h, "down"), timeout=10, what="the overdue session")
        assert sleep_result(await h.get("down"))["woken"] == "time"
    finally:
        await h.close()
        await second.stop()


async def test_r86_a_daemons_own_sleepers_wake_at_their_times_without_a_sweep(
    h: Harness,
) -> None:
    waker = h.daemon.waker
    await until(lambda: waker.sweeps >= 1, timeout=5, what="the start sweep")
    sweeps = waker.sweeps
    sids = [f"own-{k}" for k in range(3)]
    for k, sid in enumerate(sids):
        await asleep(h, sid, sleeper(0.3 * (k + 1)))
    for sid in sids:
        await until(lambda sid=sid: _finished(h, sid), timeout=10, what=sid)
    assert waker.sweeps == sweeps  # woken from the few it keeps, not by listing them all


async def test_r86_what_the_waker_keeps_is_bounded_and_a_sweep_finds_the_rest(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from luoshod.server import waker as waker_module

    monkeypatch.setattr(waker_module, "SOONEST", 2)
    waker = h.daemon.waker
    await until(lambda: waker.sweeps >= 1, timeout=5, what="the start sweep")
    sweeps = waker.sweeps
    sids = [f"many-{k}" for k in range(4)]
    for k, sid in enumerate(sids):
        await asleep(h, sid, sleeper(0.3 * (k + 1)))
    assert len(waker._soonest) <= 2
    for sid in sids:
        await until(lambda sid=sid: _finished(h, sid), timeout=10, what=sid)
    assert waker.sweeps > sweeps  # the ones it did not keep were found by a sweep


async def test_r86_sleep_tool_is_the_lead_agents_and_its_name_is_the_daemons(
    h: Harness,
) -> None:
    sub = agent([{"text": "x"}], [], sleep_tool=True)
    lead = agent([{"text": "x"}], [])
    lead.subagents.add(name="helper", description="helps", agent=sub)
    log = await h.run("sub-sleeps", "go", lead)
    code, reason, meta = error_info(log.error)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_SLEEP_TOOL")
    assert meta["field"] == "agent.subagents[0].agent.sleep_tool"
    log = await h.run("clash", "go", agent([{"text": "x"}], ["sleep"], sleep_tool=True))
    assert error_info(log.error)[1] == "DUPLICATE_TOOL_NAME"
    # Without sleep_tool, "sleep" is a tool of the app like any other.
    log = await h.run("app-sleep", "go", agent([calls(("sleep", {}))], ["sleep"]), {"sleep": str})
    assert log.done.finish_reason == pb.FINISH_REASON_STOP


async def test_r86_rollback_while_asleep_goes_back_to_before_the_run_that_slept(
    h: Harness,
) -> None:
    spec = agent([{"text": "hello"}, calls(("sleep", {"seconds": DAY}))], [], sleep_tool=True)
    assert (await h.run("rb", "hi", spec)).done.finish_reason == pb.FINISH_REASON_STOP
    log = await h.run("rb", "sleep now", spec)
    assert log.done.finish_reason == pb.FINISH_REASON_SLEEPING
    await h.idle("rb")
    slept = (await h.get("rb")).sleep_call_id
    log = await execute_if_busy(h, "rb", "never mind", spec, pb.IF_BUSY_ROLLBACK)
    assert log.error is None, log.error
    # The run that slept is gone; the input ran in its place (and its model, scripted by
    # turn number, asks to sleep again: a new sleep of its own).
    assert log.done is not None and log.done.finish_reason == pb.FINISH_REASON_SLEEPING
    cp = await h.get("rb")
    assert [m.content for m in cp.messages if m.role == pb.ROLE_USER] == ["hi", "never mind"]
    assert [c.id for m in cp.messages for c in m.tool_calls] == [cp.sleep_call_id]
    assert cp.status == pb.CHECKPOINT_STATUS_SLEEPING and slept


async def test_r86_r81_time_asleep_is_paused_time_for_a_wall_clock_limit(h: Harness) -> None:
    spec = sleeper()
    spec.limits.run.wall_clock_ms = 60_000  # a minute of run time, a day asleep
    await asleep(h, "limited", spec)
    wake_all(h.daemon, DAY + 5)
    await until(lambda: _finished(h, "limited"), timeout=10, what="the limited sleeper")
    cp = await h.get("limited")
    assert cp.finish_reason == pb.FINISH_REASON_STOP and cp.messages[-1].content == "woke"
    assert cp.run_paused_ms >= DAY * 1000


async def test_r86_sleepers_due_at_once_on_a_full_daemon_wake_one_after_another(
    config: Config,
) -> None:
    d = Daemon(replace(config, max_active_runs=1))
    await d.start()
    h = Harness(d.addresses[0], d, config.scripted_call_log)
    try:
        sids = [f"full-{k}" for k in range(3)]
        for sid in sids:
            await asleep(h, sid, sleeper())
        wake_all(d, DAY + 5)  # all three due at once; one run at a time fits
        for sid in sids:
            await until(lambda sid=sid: _finished(h, sid), timeout=15, what=sid)
    finally:
        await h.close()
        await d.stop()
