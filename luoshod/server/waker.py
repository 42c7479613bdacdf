"""Waking sleeping sessions (docs/reference/rules.md R86).

A session whose agent called ``sleep`` is a row of the store with status ``sleeping`` and
its wake time in its header, nothing more: no task, no lease and no timer of any daemon
is kept for it. The :class:`Waker` is one loop per daemon. A sweep lists the sleeping
sessions (``Store.list_sessions(status=SLEEPING)``: the status index every driver keeps),
resumes each one that is due as a run of its own (``RunRequest.wake = "time"``), through
the runner like any run (so its end kicks the session's queued inputs, R68), and keeps the
:data:`SOONEST` soonest of the others, by wake time, to wake them when their time comes
without listing them all again.

**Exactly one daemon wakes it.** The run takes the session's lease first; under it the
engine reads the checkpoint again and goes on only if it still sleeps and is due. A
second daemon waking it at the same moment either finds the lease held (``SESSION_BUSY``,
its run never starts) or, once the first has saved, a session that no longer sleeps (its
run runs nothing).

**When it sweeps.** At start (what was due while every daemon was down wakes then), when
the soonest it kept are all woken and the sweep left others out, and every ``every_s`` in
any case: a session put to sleep by another daemon that then stopped is found by that
periodic sweep. A sleep one of this daemon's runs begins joins the kept ones
(:meth:`Waker.nudge`). Time is the engine's clock (``Engine.clock``), read anew at every
step, so a clock moved ahead (tests) and a nudge wake a day-long sleep at once. What it
keeps between sweeps is bounded: at most :data:`SOONEST` (wake time, session id) pairs,
however many sessions sleep.
"""

from __future__ import annotations

import heapq
import logging
import math

from ..domain import Status
from ..engine import TIME, RunRequest
from ..errors import LuoshoError, ShuttingDown, TooManyRuns
from .periodic import Periodic
from .runner import Runner

log = logging.getLogger("luoshod.server.waker")

#: How often a daemon lists the sleeping sessions even when it knows of none due
#: (seconds): another daemon's sleepers, left by a daemon that stopped.
DEFAULT_SLEEP_SWEEP_S = 30.0
#: How many of the sleepers not due yet a sweep keeps (the soonest): woken at their
#: time without another sweep.
SOONEST = 1000
_PAGE = 500


class Waker:
    def __init__(self, runner: Runner, every_s: float = DEFAULT_SLEEP_SWEEP_S) -> None:
        self.runner = runner
        self.every_s = every_s
        #: The soonest sleepers known, (wake time, session id), a heap.
        self._soonest: list[tuple[float, str]] = []
        #: Every sleeper due by this time is in ``_soonest`` (``inf``: every sleeper the
        #: last sweep saw is); past it, a sweep is needed.
        self._horizon = math.inf
        self._sweep_now = True
        #: When the last sweep began (the engine's clock).
        self._swept = -math.inf
        #: A failed sweep is tried again in a second.
        self._loop = Periodic("sleep sweep", self.tick, every_s, log=log, retry_s=1.0)
        #: Runs this daemon started to wake a session (for tests and the benchmark).
        self.woken = 0
        #: Sweeps made (for tests and the benchmark).
        self.sweeps = 0
        #: Sessions a full daemon could not wake now: tried again in a second.
        self._again: list[str] = []

    def nudge(self, wake_at: float | None = None, session_id: str = "") -> None:
        """A sleep began here (``wake_at``, ``session_id``), or sweep now (``None``)."""
        if wake_at is None:
            self._sweep_now = True
        elif wake_at <= self._horizon:
            heapq.heappush(self._soonest, (wake_at, session_id))
            if len(self._soonest) > SOONEST:  # the latest one leaves; a sweep finds it
                latest = max(self._soonest)
                self._soonest.remove(latest)
                heapq.heapify(self._soonest)
                self._horizon = min(self._horizon, latest[0])
        self._loop.nudge()

    async def sweep(self) -> int:
        """Wake every sleeping session that is due and keep the :data:`SOONEST` soonest
        of the others; returns how many runs it started."""
        store, started, token = self.runner.store, 0, ""
        now = self.runner.engine.clock()
        later: list[tuple[float, str]] = []  # a max-heap by negated time, at most SOONEST
        horizon = math.inf
        self.sweeps += 1
        while True:
            page, token = await store.list_sessions(
                status=Status.SLEEPING, page_size=_PAGE, page_token=token
            )
            for s in page:
                if s.wake_at is None:
                    continue
                if s.wake_at <= now:
                    started += await self._wake(s.session_id)
                    continue
                item = (-s.wake_at, s.session_id)
                if len(later) < SOONEST:
                    heapq.heappush(later, item)
                elif item > later[0]:
                    horizon = min(horizon, -heapq.heapreplace(later, item)[0])
                else:
                    horizon = min(horizon, s.wake_at)
            if not token:
                break
        self._soonest = [(-t, sid) for t, sid in later]
        heapq.heapify(self._soonest)
        self._horizon = horizon
        return started

    async def wake_due(self) -> int:
        """Wake the kept sleepers that are due; how many runs it started."""
        started, now = 0, self.runner.engine.clock()
        while self._soonest and self._soonest[0][0] <= now:
            _, sid = heapq.heappop(self._soonest)
            started += await self._wake(sid)
        return started

    async def _wake(self, sid: str) -> bool:
        runner = self.runner
        if runner.runs.get(sid) is not None:
            return False
        req = RunRequest(sid, resume_only=True, wake=TIME)
        try:
            await runner.start(sid, runner.engine.run, req)
        except (ShuttingDown, TooManyRuns) as e:
            log.info("session %s not woken now (%s); tried again in a second", sid, e)
            self._again.append(sid)
            return False
        except LuoshoError as e:  # held here meanwhile: that run's end is what counts
            log.info("session %s not woken: %s", sid, e)
            return False
        self.woken += 1
        log.info("waking session %s", sid)
        return True

    def start(self) -> None:
        self._loop.start()

    async def stop(self) -> None:
        await self._loop.stop()

    async def tick(self) -> float:
        """Sweep if it is time (see the module), wake the kept sleepers that are due;
        the seconds until the next tick is needed."""
        now = self.runner.engine.clock()
        try:
            if self._sweep_now or now - self._swept >= self.every_s or now >= self._horizon:
                self._sweep_now = False
                self._swept = now
                try:
                    await self.sweep()
                except BaseException:
                    self._sweep_now = True  # retried at the next tick
                    raise
            await self.wake_due()
        finally:
            now = self.runner.engine.clock()
            for sid in self._again:  # kept with the soonest, whatever the bound
                heapq.heappush(self._soonest, (now + 1.0, sid))
            self._again.clear()
        soonest = self._soonest[0][0] if self._soonest else math.inf
        return min(self._swept + self.every_s, self._horizon, soonest) - now
