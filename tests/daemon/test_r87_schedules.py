"""R87: schedules. A schedule (a cron expression in a time zone, or an interval) starts a
run of its agent with its input at each fire, each fire once, under the request id
``schedule:NAME:FIRE``; fires missed follow the catch-up policy, fires during an active one
the overlap policy; pause, resume, trigger and delete; bad schedules refused with their
reason. Time is the engine's clock, moved by the tests (a day in milliseconds), on every
store of the ``h`` fixture (memory, SQLite, LMDB)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.server.app import Config, Daemon
from luoshod.server.schedules import Fire, State, next_fire, stamp
from luoshod.store import Capability
from luoshod.store.memory import MemoryStore
from tests.support.harness import AheadClock, Harness, agent, calls, error_info, user, watch

HOUR = 3600.0
DAY = 24 * HOUR


def spec(name: str = "n", **kw: object) -> pb.ScheduleSpec:
    out = pb.ScheduleSpec(name=name, agent=agent([{"text": "ok"}]), input=[user("go")])
    if "cron" not in kw and "interval_ms" not in kw:
        out.interval_ms = int(HOUR * 1000)
    for key, value in kw.items():
        if key == "cron":
            out.cron.CopyFrom(value)  # type: ignore[arg-type]
        else:
            setattr(out, key, value)
    return out


def moved(h: Harness, to: float | None = None) -> AheadClock:
    """The daemon's clock, made movable (at ``to`` when given)."""
    clock = AheadClock()
    if to is not None:
        clock.ahead = to - datetime.now(UTC).timestamp()
    h.daemon.engine.clock = clock
    return clock


async def step(h: Harness, clock: AheadClock, seconds: float, *, settle: bool = True) -> None:
    """Move the clock and let the scheduler see it (one pass, besides its own loop); with
    ``settle``, wait until the runs it started have ended (nothing queued, nothing run)."""
    clock.ahead += seconds
    await h.daemon.service.schedules.tick()
    if settle:
        store = h.daemon.store

        async def idle() -> bool:
            queued, _ = await store.queued_sessions(page_size=1, page_token="")
            return not queued and not len(h.daemon.runs)

        await until(idle, "the fires' runs to end")


async def until(check: Callable[[], Awaitable[bool]], what: str, timeout: float = 20) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


async def schedule(h: Harness, name: str = "n") -> pb.Schedule:
    listed = await h.stub.ListSchedules(pb.ListSchedulesRequest())
    return next(s for s in listed.schedules if s.spec.name == name)


async def sessions(h: Harness, prefix: str) -> list[pb.SessionSummary]:
    req = pb.ListSessionsRequest(page_size=1000, session_id_prefix=prefix)
    return list((await h.stub.ListSessions(req)).sessions)


async def all_finished(h: Harness, prefix: str, count: int) -> None:
    async def done() -> bool:
        found = await sessions(h, prefix)
        return len(found) >= count and all(s.status == pb.CHECKPOINT_STATUS_FINISHED for s in found)

    await until(done, f"{count} finished sessions {prefix}*")


async def refused(call: Awaitable[object]) -> tuple[grpc.StatusCode, str, str]:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call
    code, reason = error_info(info.value)[:2]
    return code, reason, info.value.details() or ""


# -- the cron expressions' times, daylight-saving changes included ------------------------


@pytest.mark.parametrize(
    ("zone", "spring", "autumn"),
    [
        ("Europe/Berlin", (2026, 3, 29), (2026, 10, 25)),
        ("America/New_York", (2026, 3, 8), (2026, 11, 1)),
    ],
)
def test_r87_a_daily_0230_cron_fires_once_a_day_across_both_daylight_saving_changes(
    zone: str, spring: tuple[int, int, int], autumn: tuple[int, int, int]
) -> None:
    tz = ZoneInfo(zone)
    cron = spec(cron=pb.ScheduleCron(expression="30 2 * * *", time_zone=zone))
    for day in (spring, autumn):
        start = datetime(*day, tzinfo=tz).timestamp() - 2 * DAY
        t, fires = start, []
        while (t := next_fire(cron, t, 0)) < start + 5 * DAY:
            fires.append(datetime.fromtimestamp(t, tz))
        # One fire each local day, five days around the change.
        assert [f.date() for f in fires] == sorted({f.date() for f in fires})
        assert len(fires) == 5
        changed = next(f for f in fires if f.date() == datetime(*day).date())
        if day == spring:  # 02:30 does not exist that day: fired at the jump, 03:00
            assert (changed.hour, changed.minute) == (3, 0)
        else:  # 02:30 happens twice that day: fired the first time only
            assert (changed.hour, changed.minute, changed.fold) == (2, 30, 0)
        assert all((f.hour, f.minute) == (2, 30) for f in fires if f != changed)


def test_r87_an_interval_fires_first_one_interval_after_its_start_even_asked_before_it() -> None:
    """A schedule starts at the second after its creation; resumed (or read) within that
    second, its next fire is still one interval after the start, never the start itself."""
    every = spec(interval_ms=60_000)
    start = 1_800_000_000.0
    for after in (start - 0.4, start - 0.001, start, start + 0.5, start + 59.9):
        assert next_fire(every, after, start) == start + 60
    assert next_fire(every, start + 60, start) == start + 120


async def test_r87_a_daily_cron_across_daylight_saving_fires_each_day_once_in_the_daemon(
    h: Harness,
) -> None:
    tz = ZoneInfo("Europe/Berlin")
    clock = moved(h, datetime(2026, 3, 27, 12, tzinfo=tz).timestamp())
    cron = pb.ScheduleCron(expression="30 2 * * *", time_zone="Europe/Berlin")
    await h.stub.CreateSchedule(pb.CreateScheduleRequest(spec=spec("daily", cron=cron)))
    for _ in range(4 * 24):  # four days, an hour a step
        await step(h, clock, HOUR)
    await all_finished(h, "schedule:daily:", 4)
    found = sorted(s.session_id for s in await sessions(h, "schedule:daily:"))
    assert found == [
        "schedule:daily:20260328T013000Z",  # 02:30 CET
        "schedule:daily:20260329T010000Z",  # 03:00 CEST: 02:30 was skipped by the clocks
        "schedule:daily:20260330T003000Z",  # 02:30 CEST
        "schedule:daily:20260331T003000Z",
    ]
    assert (await schedule(h, "daily")).fired == 4


# -- fires: each once, by the moved clock ----------------------------------------------------


async def test_r87_an_interval_schedule_runs_its_agent_once_per_fire(h: Harness) -> None:
    clock = moved(h)
    made = (await h.stub.CreateSchedule(pb.CreateScheduleRequest(spec=spec()))).schedule
    assert made.spec.overlap == pb.SCHEDULE_OVERLAP_SKIP
    assert made.spec.catch_up == pb.SCHEDULE_CATCH_UP_LATEST
    assert made.spec.session == pb.SCHEDULE_SESSION_EACH_FIRE
    first = made.next_fire.ToSeconds()
    assert first - made.created_at.ToSeconds() == pytest.approx(HOUR, abs=1)
    assert await sessions(h, "schedule:n:") == []
    for _ in range(3):
        await step(h, clock, HOUR)
        await step(h, clock, 0)  # a second pass at the same time fires nothing more
    await all_finished(h, "schedule:n:", 3)
    fires = [first + i * HOUR for i in range(3)]
    assert sorted(s.session_id for s in await sessions(h, "schedule:n:")) == [
        f"schedule:n:{stamp(t)}" for t in fires
    ]
    got = await h.get(f"schedule:n:{stamp(fires[0])}")
    assert [m.content for m in got.messages if m.role == pb.ROLE_USER] == ["go"]
    assert got.messages[-1].content == "ok"
    shown = await schedule(h)
    assert (shown.fired, shown.skipped) == (3, 0)
    assert shown.last_fire.ToSeconds() == fires[-1]
    assert shown.next_fire.ToSeconds() == fires[-1] + HOUR
    # Its fire time is its request id (R74): the run says so.
    sid = f"schedule:n:{stamp(fires[1])}"
    started = [e for e in await watch(h, sid) if e.type == "run.start"]
    assert [e.run_start.request_id for e in started] == [sid]


async def test_r87_one_session_grows_fire_after_fire(h: Harness) -> None:
    clock = moved(h)
    one = spec(session=pb.SCHEDULE_SESSION_ONE)
    await h.stub.CreateSchedule(pb.CreateScheduleRequest(spec=one))
    for n in range(1, 4):
        await step(h, clock, HOUR)
        await until(
            lambda n=n: _users(h, "schedule:n", n),
            f"fire {n} applied in schedule:n",  # type: ignore[misc]
        )
    assert await sessions(h, "schedule:n:") == []
    assert (await schedule(h)).last_session_id == "schedule:n"


async def _users(h: Harness, sid: str, n: int) -> bool:
    try:
        cp = await h.get(sid)
    except grpc.aio.AioRpcError:
        return False
    return (
        sum(m.role == pb.ROLE_USER for m in cp.messages) == n
        and cp.status == pb.CHECKPOINT_STATUS_FINISHED
    )


# -- pause, resume, trigger, delete -------------------------------------------------------


async def test_r87_pause_resume_trigger_and_delete(h: Harness) -> None:
    clock = moved(h)
    await h.stub.CreateSchedule(pb.CreateScheduleRequest(spec=spec()))
    paused = (await h.stub.PauseSchedule(pb.PauseScheduleRequest(name="n"))).schedule
    assert paused.paused and not paused.HasField("next_fire")
    for _ in range(3):
        await step(h, clock, HOUR)
    assert await sessions(h, "schedule:n:") == []
    # A trigger fires now, paused or not.
    fire = await h.stub.TriggerSchedule(pb.TriggerScheduleRequest(name="n"))
    assert fire.session_id.startswith("schedule:n:") and fire.request_id == fire.session_id
    await all_finished(h, "schedule:n:", 1)
    resumed = (await h.stub.ResumeSchedule(pb.ResumeScheduleRequest(name="n"))).schedule
    assert not resumed.paused
    assert resumed.next_fire.ToSeconds() > clock()  # the fires due while paused do not run
    await step(h, clock, 0)
    assert len(await sessions(h, "schedule:n:")) == 1
    await step(h, clock, HOUR)
    await all_finished(h, "schedule:n:", 2)
    assert (await schedule(h)).fired == 2
    await h.stub.DeleteSchedule(pb.DeleteScheduleRequest(name="n"))
    assert not (await h.stub.ListSchedules(pb.ListSchedulesRequest())).schedules
    await step(h, clock, HOUR)
    assert len(await sessions(h, "schedule:n:")) == 2
    for call in (
        h.stub.PauseSchedule(pb.PauseScheduleRequest(name="n")),
        h.stub.ResumeSchedule(pb.ResumeScheduleRequest(name="n")),
        h.stub.TriggerSchedule(pb.TriggerScheduleRequest(name="n")),
        h.stub.DeleteSchedule(pb.DeleteScheduleRequest(name="n")),
    ):
        code, reason, _ = await refused(call)
        assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "SCHEDULE_NOT_FOUND")


# -- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "reason", "says"),
    [
        (spec(cron=pb.ScheduleCron(expression="61 * * * *")), "INVALID_SCHEDULE", "cron"),
        (spec(cron=pb.ScheduleCron(expression="every day")), "INVALID_SCHEDULE", "cron"),
        (
            spec(cron=pb.ScheduleCron(expression="0 9 * * *", time_zone="Mars/Olympus")),
            "UNKNOWN_TIME_ZONE",
            "Mars/Olympus",
        ),
        (spec(interval_ms=10), "INVALID_SCHEDULE", "interval_ms"),
        (spec(name="no spaces"), "INVALID_SCHEDULE", "name"),
        (spec(name=""), "INVALID_SCHEDULE", "name"),
        (spec(overlap=pb.SCHEDULE_OVERLAP_ENQUEUE), "INVALID_SCHEDULE", "session ONE"),
        (spec(catch_up=9), "INVALID_SCHEDULE", "catch_up"),
        (
            pb.ScheduleSpec(name="n", agent=agent([]), input=[user("x")]),
            "INVALID_SCHEDULE",
            "interval",
        ),
        (
            pb.ScheduleSpec(name="n", interval_ms=60_000, input=[user("x")]),
            "INVALID_SCHEDULE",
            "agent",
        ),
        (
            pb.ScheduleSpec(name="n", interval_ms=60_000, agent=agent([])),
            "INVALID_SCHEDULE",
            "input",
        ),
    ],
)
async def test_r87_a_bad_schedule_is_refused_with_its_reason(
    h: Harness, bad: pb.ScheduleSpec, reason: str, says: str
) -> None:
    code, got, details = await refused(h.stub.CreateSchedule(pb.CreateScheduleRequest(spec=bad)))
    assert (code, got) == (grpc.StatusCode.INVALID_ARGUMENT, reason)
    assert says in details
    assert not (await h.stub.ListSchedules(pb.ListSchedulesRequest())).schedules


async def test_r87_a_second_schedule_of_one_name_is_refused(h: Harness) -> None:
    await h.stub.CreateSchedule(pb.CreateScheduleRequest(spec=spec()))
    code, reason, _ = await refused(h.stub.CreateSchedule(pb.CreateScheduleRequest(spec=spec())))
    assert (code, reason) == (grpc.StatusCode.ALREADY_EXISTS, "SCHEDULE_EXISTS")


# -- catch-up -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "runs"),
    [
        (pb.SCHEDULE_CATCH_UP_LATEST, [9]),
        (pb.SCHEDULE_CATCH_UP_ALL, list(range(10))),
        (pb.SCHEDULE_CATCH_UP_NONE, []),
    ],
)
async def test_r87_missed_fires_follow_the_catch_up_policy(
    h: Harness, policy: int, runs: list[int]
) -> None:
    clock = moved(h)
    made = await h.stub.CreateSchedule(
        pb.CreateScheduleRequest(spec=spec(interval_ms=60_000, catch_up=policy))
    )
    first = made.schedule.next_fire.ToSeconds()
    h.daemon.service.schedules.late_s = 5  # ten fires more than 5 s late: all missed
    await step(h, clock, 10 * 60 + 30)
    await all_finished(h, "schedule:n:", len(runs))
    await asyncio.sleep(0.2)
    assert sorted(s.session_id for s in await sessions(h, "schedule:n:")) == [
        f"schedule:n:{stamp(first + 60 * i)}" for i in runs
    ]
    shown = await schedule(h)
    assert (shown.fired, shown.skipped) == (len(runs), 10 - len(runs))
    assert shown.next_fire.ToSeconds() == first + 600


# -- overlap ------------------------------------------------------------------------------


def waiting_agent() -> pb.AgentSpec:
    """Each run calls the client tool ``add`` and waits for its result (stays active)."""
    return agent([calls(("add", {})), {"text": "ok"}, calls(("add", {})), {"text": "ok"}])


async def pending_call(h: Harness, sid: str) -> str:
    found: list[str] = []

    async def waiting() -> bool:
        try:
            got = await h.stub.GetSession(pb.GetSessionRequest(session_id=sid))
        except grpc.aio.AioRpcError:
            return False
        last = got.checkpoint.messages[-1] if got.checkpoint.messages else None
        found[:] = [c.id for c in last.tool_calls] if last is not None else []
        return bool(found) and h.daemon.runs.get(sid) is not None

    await until(waiting, f"a pending tool call in {sid}")
    return found[0]


@pytest.mark.parametrize("overlap", ["skip", "enqueue", "allow", "each-fire-skip"])
async def test_r87_a_fire_while_the_previous_runs_follows_the_overlap_policy(
    h: Harness, overlap: str
) -> None:
    clock = moved(h)
    policy = {
        "skip": pb.SCHEDULE_OVERLAP_SKIP,
        "enqueue": pb.SCHEDULE_OVERLAP_ENQUEUE,
        "allow": pb.SCHEDULE_OVERLAP_ALLOW,
        "each-fire-skip": pb.SCHEDULE_OVERLAP_SKIP,
    }[overlap]
    each = overlap.startswith("each-fire")
    one = spec(
        session=pb.SCHEDULE_SESSION_EACH_FIRE if each else pb.SCHEDULE_SESSION_ONE,
        overlap=policy,
    )
    one.agent.CopyFrom(waiting_agent())
    made = await h.stub.CreateSchedule(pb.CreateScheduleRequest(spec=one))
    second = made.schedule.next_fire.ToSeconds() + HOUR
    main = f"schedule:n:{stamp(second - HOUR)}" if each else "schedule:n"
    await step(h, clock, HOUR, settle=False)
    call = await pending_call(h, main)  # the first fire's run waits for its tool
    await step(h, clock, HOUR, settle=False)  # the second fire, while the first is active
    shown = await schedule(h)
    if overlap in ("skip", "each-fire-skip"):
        assert (shown.fired, shown.skipped) == (1, 1)
        assert [s.session_id for s in await sessions(h, "schedule:n")] == [main]
    elif overlap == "enqueue":
        assert (shown.fired, shown.skipped) == (2, 0)
        queued = (await h.stub.GetSession(pb.GetSessionRequest(session_id=main))).queue
        assert [q.request_id for q in queued] == [f"schedule:n:{stamp(second)}"]
    else:
        assert (shown.fired, shown.skipped) == (2, 0)
        alongside = f"schedule:n:{stamp(second)}"
        assert shown.last_session_id == alongside
        await pending_call(h, alongside)  # runs now, beside the first
    await h.submit(main, call, json.dumps(3))
    if overlap == "enqueue":  # the queued fire runs after: its own tool call
        await until(lambda: _two_users(h), "the queued fire to run")
        assert await pending_call(h, main)
    else:
        await until(lambda: _users(h, main, 1), "the first fire's run to finish")
    if overlap == "each-fire-skip":  # the first ended: the next fire runs
        await step(h, clock, HOUR, settle=False)
        assert (await schedule(h)).fired == 2


async def _two_users(h: Harness) -> bool:
    cp = await h.get("schedule:n")
    return sum(m.role == pb.ROLE_USER for m in cp.messages) == 2


# -- restarts -----------------------------------------------------------------------------


async def test_r87_fires_missed_while_the_daemon_was_down_run_after_a_restart(
    tmp_path: Path,
) -> None:
    config = Config(listen=["127.0.0.1:0"], store=f"sqlite:///{tmp_path}/db.db", drain_timeout_s=5)
    first = Daemon(config)
    await first.start()
    try:
        h = Harness(first.addresses[0], first)
        clock = moved(h)
        made = await h.stub.CreateSchedule(
            pb.CreateScheduleRequest(
                spec=spec(interval_ms=60_000, catch_up=pb.SCHEDULE_CATCH_UP_ALL)
            )
        )
        start = made.schedule.next_fire.ToSeconds()
        await h.close()
    finally:
        await first.stop()
    # Down for five minutes and a half; and a fire claimed by a daemon killed before it
    # queued it (pending in the store) is queued by the next.
    store = first.store
    await store.open()
    found = await store.get_schedule("n")
    assert found is not None
    state = State.decode(found.data)
    lost = Fire(
        start - 3600, f"schedule:n:{stamp(start - 3600)}", f"schedule:n:{stamp(start - 3600)}", 0.0
    )
    state.pending.append(lost)
    assert await store.update_schedule("n", state.encode(), version=found.version)
    await store.close()
    second = Daemon(config)
    second.engine.clock = clock
    clock.ahead += 5 * 60 + 30
    await second.start()
    try:
        h = Harness(second.addresses[0], second)
        await second.service.schedules.tick()
        await all_finished(h, "schedule:n:", 6)
        assert sorted(s.session_id for s in await sessions(h, "schedule:n:")) == sorted(
            [lost.session_id] + [f"schedule:n:{stamp(start + 60 * i)}" for i in range(5)]
        )
        shown = await schedule(h)
        assert (shown.fired, shown.skipped) == (5, 0)
        await h.close()
    finally:
        await second.stop()


# -- a store without schedules --------------------------------------------------------------


async def test_r87_a_store_without_schedules_refuses_them_by_name(tmp_path: Path) -> None:
    daemon = Daemon(Config(listen=["127.0.0.1:0"], store="memory://"))
    # A driver that keeps no schedules (the kit lets a driver leave them out).
    daemon.store.capabilities = MemoryStore.capabilities - {Capability.SCHEDULES}  # type: ignore[misc]
    await daemon.start()
    try:
        h = Harness(daemon.addresses[0], daemon)
        code, reason, details = await refused(
            h.stub.CreateSchedule(pb.CreateScheduleRequest(spec=spec()))
        )
        assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "SCHEDULES_UNSUPPORTED")
        assert "MemoryStore" in details
        await h.close()
    finally:
        await daemon.stop()


async def test_r87_a_long_outage_of_a_one_second_schedule_runs_one_fire_and_counts_the_rest(
    h: Harness,
) -> None:
    clock = moved(h)
    made = await h.stub.CreateSchedule(
        pb.CreateScheduleRequest(spec=spec(interval_ms=1000, catch_up=pb.SCHEDULE_CATCH_UP_LATEST))
    )
    first = made.schedule.next_fire.ToSeconds()
    h.daemon.service.schedules.late_s = 0.5  # every fire but the very last is missed
    await step(h, clock, 30 * DAY)  # a month down: 2.6 million fires missed
    await all_finished(h, "schedule:n:", 1)
    shown = await schedule(h)
    assert shown.fired == 1
    latest = shown.last_fire.ToSeconds()
    assert shown.skipped == latest - first  # every other fire up to the latest
    assert [s.session_id for s in await sessions(h, "schedule:n:")] == [
        f"schedule:n:{stamp(latest)}"
    ]
    assert shown.next_fire.ToSeconds() == latest + 1


async def test_r87_two_daemons_on_one_sqlite_file_claim_each_fire_once(tmp_path: Path) -> None:
    config = Config(listen=["127.0.0.1:0"], store=f"sqlite:///{tmp_path}/db.db", drain_timeout_s=5)
    daemons = [Daemon(config), Daemon(config)]
    clock = AheadClock()
    for d in daemons:
        d.engine.clock = clock
        await d.start()
    try:
        h = Harness(daemons[0].addresses[0], daemons[0])
        allow = spec(overlap=pb.SCHEDULE_OVERLAP_ALLOW)  # no fire waits for the one before
        made = await h.stub.CreateSchedule(pb.CreateScheduleRequest(spec=allow))
        first = made.schedule.next_fire.ToSeconds()
        for _ in range(5):  # both daemons find each fire due at the same moment
            clock.ahead += HOUR
            await asyncio.gather(*(d.service.schedules.tick() for d in daemons))
        await all_finished(h, "schedule:n:", 5)
        await asyncio.sleep(0.3)
        assert sorted(s.session_id for s in await sessions(h, "schedule:n:")) == [
            f"schedule:n:{stamp(first + i * HOUR)}" for i in range(5)
        ]
        for s in await sessions(h, "schedule:n:"):
            assert s.message_count == 3  # one run each
        assert (await schedule(h)).fired == 5
        await h.close()
    finally:
        for d in daemons:
            await d.stop()


# -- what an idle daemon reads ---------------------------------------------------------------


async def test_r87_an_idle_daemon_reads_every_schedule_only_every_schedule_sweep_s(
    h: Harness,
) -> None:
    """The next fire times are kept in memory: between two reads of every schedule (a
    nudge, every ``schedule_sweep_s``), a daemon whose schedules are not due reads none;
    one made through it is read at once and fires on time."""
    clock = moved(h)
    scheduler, store = h.daemon.service.schedules, h.daemon.store
    reads: dict[str, int] = {"list_schedules": 0, "get_schedule": 0}
    for method in reads:
        real = getattr(store, method)

        def counted(*a: object, _real: object = real, _name: str = method) -> object:
            reads[_name] += 1
            return _real(*a)  # type: ignore[operator]

        setattr(store, method, counted)
    for k in range(5):
        await h.stub.CreateSchedule(pb.CreateScheduleRequest(spec=spec(f"n{k}")))
    await scheduler.tick()  # the creations' read
    await asyncio.sleep(0.1)
    assert scheduler.reread_s == 30.0  # schedule_sweep_s's default
    reads.update(list_schedules=0, get_schedule=0)
    for _ in range(29):  # 29 s of an idle daemon, a pass each second
        await step(h, clock, 1.0, settle=False)
    assert reads == {"list_schedules": 0, "get_schedule": 0}
    await step(h, clock, 1.0, settle=False)  # 30 s: every schedule read again
    assert reads == {"list_schedules": 1, "get_schedule": 0}
    reads.update(list_schedules=0)
    await step(h, clock, HOUR, settle=False)  # each fire due: read once, claimed
    await all_finished(h, "schedule:n", 5)
    assert reads["list_schedules"] == 1  # the sweep due by then; each fire's own reads:
    assert reads["get_schedule"] <= 5 * 2  # its claim (compare-and-set), its pending fire done
    assert (await schedule(h, "n3")).fired == 1
