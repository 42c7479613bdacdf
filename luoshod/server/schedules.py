"""Schedules (docs/reference/rules.md R87): runs the daemon starts at the times a schedule
names, a cron expression in a time zone or an interval.

**One loop.** Each daemon runs one :class:`Scheduler` loop (not a task per schedule). It
keeps in memory when to look at each schedule next (its next fire, or when a fire left
pending is to be queued again), a heap, and sleeps until the soonest of them by the
engine's clock (``Engine.clock``, so a test moves time instead of waiting for it). When one
comes, it reads that schedule alone from the store and handles the fires due. It reads
every schedule again when one is created, changed or deleted through this daemon
(:meth:`Scheduler.nudge`) and every ``reread_s`` in any case: what another daemon created
or changed is seen by then. Between those reads, an idle daemon reads no schedule at all.

**Each fire once.** A fire is claimed by a compare-and-set of the schedule's record
(``Store.update_schedule`` on its version): of the daemons that find a fire due, exactly
one moves the schedule's next fire time past it, and records the fire as *pending* in the
same write. The winner then queues the fire's input on its session (the input queue of
R68, R69) under the request id ``schedule:NAME:FIRE`` (FIRE: the fire time, UTC) and
removes it from the pending fires. A daemon killed in between leaves the fire pending,
and the next daemon to look queues it again: the queue is idempotent by request id, and
an input whose request the session already applied is dropped, not run (R74). So a fire
runs exactly once across daemons and restarts.

**Late fires.** A fire more than ``late_s`` behind the clock when found was missed (every
daemon was down, or the schedule paused): the schedule's catch-up policy says which of
those run (the latest, all, none); the others are counted skipped.

**Overlap.** A fire is *active* while its input is queued (waiting, or being run: an
input leaves the queue when the run that applied it ends). A fire due while the previous
one is active is skipped (SKIP), queued behind it (ENQUEUE, one session), or run at once
in a session of its own (ALLOW).
"""

from __future__ import annotations

import asyncio
import base64
import heapq
import json
import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from luosho.v1 import agent_pb2 as pb

from ..domain import StoredSchedule
from ..errors import (
    InvalidArgument,
    ScheduleExists,
    ScheduleNotFound,
    SchedulesUnsupported,
    StoreError,
)
from ..store import Capability, Store
from . import convert
from .periodic import Periodic
from .runner import Runner
from .validation import check_agent, check_messages

log = logging.getLogger("luoshod.server.schedules")

#: A schedule's name: it is part of its sessions' ids.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
MIN_INTERVAL_MS = 1000
#: A fire found more than this many seconds after its time was missed (catch-up policy).
DEFAULT_LATE_S = 60.0
#: How often the loop reads every schedule even when none is due (seconds): what another
#: daemon created or changed is seen by then.
DEFAULT_REREAD_S = 30.0
#: After a pass that failed (the store is down), the next one comes this soon (seconds).
RETRY_S = 1.0
#: A pending fire older than this is queued again by whichever daemon sees it (its
#: claimer was killed before queuing it, or before saying so).
PENDING_AGAIN_S = 5.0
#: The most fires handled in one pass of one schedule (the rest next pass).
MAX_FIRES_PER_PASS = 1000

OVERLAPS = {pb.SCHEDULE_OVERLAP_SKIP, pb.SCHEDULE_OVERLAP_ENQUEUE, pb.SCHEDULE_OVERLAP_ALLOW}
CATCH_UPS = {pb.SCHEDULE_CATCH_UP_LATEST, pb.SCHEDULE_CATCH_UP_ALL, pb.SCHEDULE_CATCH_UP_NONE}
SESSIONS = {pb.SCHEDULE_SESSION_EACH_FIRE, pb.SCHEDULE_SESSION_ONE}


def _invalid(message: str, name: str) -> InvalidArgument:
    return InvalidArgument(message, reason="INVALID_SCHEDULE", schedule=name)


def stamp(t: float) -> str:
    """A fire time in ids: UTC, to the second (``20261205T093000Z``), with milliseconds
    when it has any (a trigger's)."""
    seconds, ms = divmod(round(t * 1000), 1000)
    d = datetime.fromtimestamp(seconds, UTC)
    return d.strftime("%Y%m%dT%H%M%S") + (f".{ms:03d}" if ms else "") + "Z"


def time_zone(name: str, schedule: str) -> ZoneInfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidArgument(
            f"schedule {schedule!r}: time zone {name!r} is not an IANA time zone this daemon "
            "knows (e.g. Europe/Berlin, America/New_York, UTC)",
            reason="UNKNOWN_TIME_ZONE",
            schedule=schedule,
            time_zone=name,
        ) from None


def check_spec(spec: pb.ScheduleSpec) -> pb.ScheduleSpec:
    """``spec`` checked, its policies' defaults filled in; ``InvalidArgument`` naming the
    field at fault."""
    name = spec.name
    if not NAME.fullmatch(name):
        raise _invalid(
            f"schedule name {name[:80]!r} is invalid: 1 to 64 of A-Z a-z 0-9 . _ -, starting "
            "with a letter or digit",
            name,
        )
    out = pb.ScheduleSpec()
    out.CopyFrom(spec)
    which = spec.WhichOneof("when")
    if which is None:
        raise _invalid(f"schedule {name!r} needs a cron expression or an interval_ms", name)
    if which == "interval_ms" and spec.interval_ms < MIN_INTERVAL_MS:
        raise _invalid(
            f"schedule {name!r}: interval_ms {spec.interval_ms} is under the minimum of "
            f"{MIN_INTERVAL_MS}",
            name,
        )
    if which == "cron":
        zone = time_zone(spec.cron.time_zone, name)
        try:
            CronSim(spec.cron.expression, datetime(2000, 1, 1, tzinfo=zone))
        except CronSimError as e:
            raise _invalid(
                f"schedule {name!r}: cron expression {spec.cron.expression!r} is invalid: {e} "
                "(five fields: minute hour day-of-month month day-of-week)",
                name,
            ) from None
    if not spec.HasField("agent"):
        raise _invalid(f"schedule {name!r} needs an agent", name)
    check_agent(spec.agent)
    if not spec.input:
        raise _invalid(f"schedule {name!r} needs an input (the message each fire sends)", name)
    check_messages(list(spec.input))
    out.overlap = spec.overlap or pb.SCHEDULE_OVERLAP_SKIP
    out.catch_up = spec.catch_up or pb.SCHEDULE_CATCH_UP_LATEST
    out.session = spec.session or pb.SCHEDULE_SESSION_EACH_FIRE
    for value, known, what in (
        (out.overlap, OVERLAPS, "overlap"),
        (out.catch_up, CATCH_UPS, "catch_up"),
        (out.session, SESSIONS, "session"),
    ):
        if value not in known:
            raise _invalid(f"schedule {name!r}: {what} {value} is not a known value", name)
    if out.overlap == pb.SCHEDULE_OVERLAP_ENQUEUE and out.session != pb.SCHEDULE_SESSION_ONE:
        raise _invalid(
            f"schedule {name!r}: overlap ENQUEUE queues a fire behind the previous one in "
            "their one session: it needs session ONE",
            name,
        )
    return out


def next_fire(spec: pb.ScheduleSpec, after: float, anchor: float) -> float:
    """The schedule's first fire time strictly after ``after`` (seconds since the epoch).
    An interval counts from ``anchor``, its first fire one interval after it (asked before
    the anchor too); a cron expression is read in its time zone."""
    if spec.WhichOneof("when") == "interval_ms":
        every = spec.interval_ms / 1000
        after = max(after, anchor)
        return round(anchor + (math.floor((after - anchor) / every) + 1) * every, 3)
    zone = time_zone(spec.cron.time_zone, spec.name)
    local = datetime.fromtimestamp(after, zone)
    return next(CronSim(spec.cron.expression, local)).timestamp()


@dataclass(slots=True)
class Fire:
    """A claimed fire: where and under which request id its input is queued."""

    time: float
    session_id: str
    request_id: str
    claimed_at: float


@dataclass(slots=True)
class State:
    """What the store keeps of a schedule (``StoredSchedule.data``, JSON)."""

    spec: pb.ScheduleSpec
    created_at: float
    anchor: float
    paused: bool = False
    next_fire: float = 0.0
    last_fire: float = 0.0
    last_session: str = ""
    fired: int = 0
    skipped: int = 0
    pending: list[Fire] = field(default_factory=list)

    def encode(self) -> bytes:
        return json.dumps(
            {
                "spec": base64.b64encode(self.spec.SerializeToString(deterministic=True)).decode(),
                "created_at": self.created_at,
                "anchor": self.anchor,
                "paused": self.paused,
                "next_fire": self.next_fire,
                "last_fire": self.last_fire,
                "last_session": self.last_session,
                "fired": self.fired,
                "skipped": self.skipped,
                "pending": [
                    [f.time, f.session_id, f.request_id, f.claimed_at] for f in self.pending
                ],
            },
            separators=(",", ":"),
        ).encode()

    @classmethod
    def decode(cls, data: bytes) -> State:
        d = json.loads(data)
        spec = pb.ScheduleSpec()
        spec.ParseFromString(base64.b64decode(d["spec"]))
        return cls(
            spec,
            d["created_at"],
            d["anchor"],
            d["paused"],
            d["next_fire"],
            d["last_fire"],
            d["last_session"],
            d["fired"],
            d["skipped"],
            [Fire(*p) for p in d["pending"]],
        )

    def shown(self) -> pb.Schedule:
        out = pb.Schedule(
            spec=self.spec,
            paused=self.paused,
            last_session_id=self.last_session,
            fired=self.fired,
            skipped=self.skipped,
            created_at=convert.timestamp(self.created_at),
        )
        if not self.paused and self.next_fire:
            out.next_fire.CopyFrom(convert.timestamp(self.next_fire))
        if self.last_fire:
            out.last_fire.CopyFrom(convert.timestamp(self.last_fire))
        return out


class InputQueue(Protocol):
    """What the scheduler needs of the input queue (``queueing.InputQueue``)."""

    runner: Runner

    async def submit(self, request: pb.ExecuteRequest) -> None: ...


def fire_request(spec: pb.ScheduleSpec, fire: Fire) -> pb.ExecuteRequest:
    return pb.ExecuteRequest(
        session_id=fire.session_id,
        input=spec.input,
        agent=spec.agent,
        request_id=fire.request_id,
        if_busy=pb.IF_BUSY_ENQUEUE,
    )


class Scheduler:
    """The daemon's schedules: the RPCs' operations and the one loop that fires them."""

    def __init__(self, inputs: InputQueue) -> None:
        self.inputs = inputs
        #: A fire further behind the clock than this is missed (set by :meth:`start`).
        self.late_s = DEFAULT_LATE_S
        #: Every schedule is read again at least this often (set by :meth:`start`).
        self.reread_s = DEFAULT_REREAD_S
        #: When to look at each schedule next, (time, name), a heap: one entry a schedule
        #: that is not paused or has fires pending.
        self._soonest: list[tuple[float, str]] = []
        #: Every schedule is read at the next pass (a nudge, a failed pass).
        self._reread = True
        #: When every schedule was last read (the engine's clock).
        self._read_at = -math.inf
        self._passing = asyncio.Lock()
        self._loop = Periodic("schedules pass", self._tick, self.reread_s, log=log, retry_s=RETRY_S)

    @property
    def store(self) -> Store:
        return self.inputs.runner.store

    def now(self) -> float:
        return self.inputs.runner.engine.clock()

    @property
    def supported(self) -> bool:
        return (
            Capability.SCHEDULES in self.store.capabilities
            and Capability.QUEUE in self.store.capabilities
        )

    def _require(self) -> None:
        if not self.supported:
            raise SchedulesUnsupported(
                f"schedules need a store that keeps schedules and an input queue; "
                f"{type(self.store).__name__} does not (use sqlite, lmdb or postgres)",
            )

    # -- the RPCs' operations ----------------------------------------------------------

    async def create(self, spec: pb.ScheduleSpec) -> pb.Schedule:
        self._require()
        spec = check_spec(spec)
        now = self.now()
        anchor = float(math.ceil(now))  # an interval's first fire is one interval on
        state = State(spec, now, anchor, next_fire=next_fire(spec, anchor, anchor))
        if await self.store.create_schedule(spec.name, state.encode()) is None:
            raise ScheduleExists(
                f"a schedule named {spec.name!r} exists: delete it first, or pick another name",
                schedule=spec.name,
            )
        self.nudge()
        return state.shown()

    async def every(self) -> list[pb.Schedule]:
        self._require()
        return [State.decode(r.data).shown() for r in await self.store.list_schedules()]

    async def _load(self, name: str) -> tuple[StoredSchedule, State]:
        self._require()
        found = await self.store.get_schedule(name)
        if found is None:
            raise ScheduleNotFound(f"no schedule is named {name!r}", schedule=name)
        return found, State.decode(found.data)

    async def _change(self, name: str, change: Callable[[State], None]) -> State:
        """Apply ``change(state)`` by compare-and-set, again on a conflict."""
        while True:
            found, state = await self._load(name)
            change(state)
            if await self.store.update_schedule(name, state.encode(), version=found.version):
                self.nudge()
                return state

    async def pause(self, name: str) -> pb.Schedule:
        def paused(s: State) -> None:
            s.paused = True

        return (await self._change(name, paused)).shown()

    async def resume(self, name: str) -> pb.Schedule:
        now = self.now()

        def resumed(s: State) -> None:
            if s.paused:
                s.paused = False
                s.next_fire = next_fire(s.spec, now, s.anchor)

        return (await self._change(name, resumed)).shown()

    async def delete(self, name: str) -> None:
        self._require()
        if not await self.store.delete_schedule(name):
            raise ScheduleNotFound(f"no schedule is named {name!r}", schedule=name)
        self.nudge()

    async def trigger(self, name: str) -> Fire:
        now = self.now()
        fires: list[Fire] = []

        def triggered(s: State) -> None:
            fires.clear()
            # Its own ids, never a scheduled fire's (a trigger at a fire's very time).
            rid = f"schedule:{s.spec.name}:{stamp(now)}-trigger"
            one = s.spec.session == pb.SCHEDULE_SESSION_ONE
            fire = Fire(now, f"schedule:{s.spec.name}" if one else rid, rid, now)
            fires.append(fire)
            s.pending.append(fire)
            s.fired += 1
            s.last_fire, s.last_session = now, fire.session_id

        await self._change(name, triggered)
        await self._queue(name, fires)
        return fires[0]

    # -- the loop ----------------------------------------------------------------------

    def nudge(self) -> None:
        """Read every schedule now (one was created, changed or deleted here)."""
        self._reread = True
        self._loop.nudge()

    def start(self, *, late_s: float = DEFAULT_LATE_S, reread_s: float = DEFAULT_REREAD_S) -> None:
        """Fire schedules from now on (a store that keeps none: nothing to fire)."""
        self.late_s, self.reread_s = late_s, reread_s
        if self.supported:
            self._loop.every_s = reread_s
            self._loop.start()

    async def stop(self) -> None:
        await self._loop.stop()

    async def tick(self) -> float:
        """A pass besides the loop's (the clock was moved: tests); the loop then looks
        again when its next pass is needed."""
        try:
            return await self._tick()
        finally:
            self._loop.nudge()

    async def _tick(self) -> float:
        """One pass: every schedule read again if it is time (see the module), the fires
        due by now handled; the seconds until the next pass is needed."""
        async with self._passing:  # the loop's and a test's: one at a time
            now = self.now()
            try:
                if self._reread or now - self._read_at >= self.reread_s:
                    self._reread = False
                    records = await self.store.list_schedules()
                    self._read_at, self._soonest = now, []
                else:
                    names: dict[str, None] = {}
                    while self._soonest and self._soonest[0][0] <= now:
                        names[heapq.heappop(self._soonest)[1]] = None
                    records = []
                    for name in names:
                        if (record := await self.store.get_schedule(name)) is not None:
                            records.append(record)  # else deleted meanwhile
                for record in records:
                    self._keep(record.name, await self._look(record, now))
            except BaseException:
                self._reread = True  # what was not handled is found by the next pass
                raise
            soonest = self._soonest[0][0] if self._soonest else math.inf
            return max(0.0, min(soonest, self._read_at + self.reread_s) - self.now())

    async def _look(self, record: StoredSchedule, now: float) -> State | float:
        """The schedule's state once its fires due by ``now`` are handled; when to try it
        again if it could not be."""
        try:
            return await self._pass(record, now)
        except StoreError:
            raise
        except Exception:  # noqa: BLE001 - one schedule's fault stops no other
            log.exception("schedule %s not handled this pass", record.name)
            return now + RETRY_S

    def _keep(self, name: str, looked: State | float) -> None:
        """Remember when to look at the schedule next: its next fire (unless paused), or
        when a fire it left pending is to be queued again, whichever comes first."""
        if isinstance(looked, State):
            times = [f.claimed_at + PENDING_AGAIN_S for f in looked.pending]
            if not looked.paused:
                times.append(looked.next_fire)
            if not times:
                return
            looked = min(times)
        heapq.heappush(self._soonest, (looked, name))

    async def _pass(self, record: StoredSchedule, now: float) -> State:
        """Claim the schedule's fires due by ``now``, queue again its stale pending ones."""
        state = State.decode(record.data)
        if not state.paused and state.next_fire <= now:
            state = await self._claim(record, state, now)
        stale = [f for f in state.pending if f.claimed_at <= now - PENDING_AGAIN_S]
        if stale and await self._queue(record.name, stale):
            state.pending = [f for f in state.pending if f not in stale]
        return state

    def _session_for(self, s: State, t: float, *, busy: bool) -> str:
        one = s.spec.session == pb.SCHEDULE_SESSION_ONE
        if one and not (busy and s.spec.overlap == pb.SCHEDULE_OVERLAP_ALLOW):
            return f"schedule:{s.spec.name}"
        return f"schedule:{s.spec.name}:{stamp(t)}"

    async def _active(self, sid: str) -> bool:
        """Whether a fire's input waits or runs in ``sid`` (it leaves the queue when the
        run that applied it ends)."""
        if not sid:
            return False
        if self.inputs.runner.runs.get(sid) is not None:
            return True
        return bool(await self.store.queued_inputs(sid))

    def _due(self, state: State, now: float) -> tuple[list[float], int, float]:
        """The fires of ``state`` due by ``now`` that run (by the catch-up policy), how
        many are skipped, and the next fire time after them. The missed fires a policy
        skips are counted, not listed: an interval's in one step, however long every
        daemon was down."""
        policy, spec = state.spec.catch_up, state.spec
        cutoff = now - self.late_s
        running: list[float] = []
        skipped, last_missed = 0, None
        t = state.next_fire
        while t <= now and len(running) < MAX_FIRES_PER_PASS:
            if t < cutoff and policy != pb.SCHEDULE_CATCH_UP_ALL:
                if spec.WhichOneof("when") == "interval_ms":
                    every, anchor = spec.interval_ms / 1000, state.anchor
                    first = round((t - anchor) / every)
                    after = max(first + 1, math.ceil((cutoff - anchor) / every))
                    skipped += after - first - 1 + (last_missed is not None)  # [t, cutoff)
                    last_missed = round(anchor + (after - 1) * every, 3)
                    t = round(anchor + after * every, 3)
                    continue
                skipped += last_missed is not None
                last_missed = t
            else:
                running.append(t)
            t = next_fire(spec, t, state.anchor)
        if last_missed is not None:
            if policy == pb.SCHEDULE_CATCH_UP_LATEST and not running:
                running.append(last_missed)
            else:
                skipped += 1
        return running, skipped, t

    async def _claim(self, record: StoredSchedule, state: State, now: float) -> State:
        """Claim the fires of ``state`` due by ``now`` (compare-and-set), then queue those
        that run. Returns the state as stored after (another daemon's, if it came first)."""
        running, skipped, t = self._due(state, now)
        one = state.spec.session == pb.SCHEDULE_SESSION_ONE
        active = await self._active(f"schedule:{state.spec.name}" if one else state.last_session)
        fires: list[Fire] = []
        for d in running:
            if active and state.spec.overlap == pb.SCHEDULE_OVERLAP_SKIP:
                skipped += 1
                continue
            sid = self._session_for(state, d, busy=active)
            # The fires of one pass (caught up together) do not skip one another: in one
            # session they queue one behind the other.
            fires.append(Fire(d, sid, f"schedule:{state.spec.name}:{stamp(d)}", now))
        if skipped:
            log.info("schedule %s: %d fire(s) skipped", state.spec.name, skipped)
        state.next_fire = t
        state.skipped += skipped
        state.fired += len(fires)
        state.pending.extend(fires)
        if fires:
            state.last_fire, state.last_session = fires[-1].time, fires[-1].session_id
        written = await self.store.update_schedule(
            record.name, state.encode(), version=record.version
        )
        if written is None:  # another daemon claimed them first
            again = await self.store.get_schedule(record.name)
            return State.decode(again.data) if again is not None else state
        if await self._queue(record.name, fires):
            state.pending = [f for f in state.pending if f not in fires]
        return state

    async def _queue(self, name: str, fires: list[Fire]) -> bool:
        """Queue the fires' inputs (idempotent by request id), then drop them from the
        schedule's pending fires; whether they are all queued and dropped."""
        if not fires:
            return True
        found = await self.store.get_schedule(name)
        if found is None:
            return True
        spec = State.decode(found.data).spec
        for fire in fires:
            try:
                await self.inputs.submit(fire_request(spec, fire))
            except StoreError:
                log.warning("schedule %s: fire %s not queued yet", name, fire.request_id)
                return False  # still pending: queued again later
            log.info("schedule %s fired: %s in %s", name, fire.request_id, fire.session_id)
        done = {f.request_id for f in fires}
        while found is not None:
            state = State.decode(found.data)
            kept = [f for f in state.pending if f.request_id not in done]
            if len(kept) == len(state.pending):
                return True
            state.pending = kept
            if await self.store.update_schedule(name, state.encode(), version=found.version):
                return True
            found = await self.store.get_schedule(name)
        return True
