"""Waking sleeping sessions (docs/reference/rules.md R86).

A session whose agent called ``sleep`` is a row of the store with status ``sleeping`` and
its wake time in its header, nothing more: no task, no lease, no memory of this daemon
is kept for it. The :class:`Waker` is one loop per daemon. Each sweep lists the sleeping
sessions (``Store.list_sessions(status=SLEEPING)``: the status index every driver keeps)
and resumes each one that is due as a run of its own (``RunRequest.wake = "time"``),
through the runner like any run, so its end kicks the session's queued inputs (R68).

**Exactly one daemon wakes it.** The run takes the session's lease first; under it the
engine reads the checkpoint again and goes on only if it still sleeps and is due. A
second daemon sweeping at the same moment either finds the lease held (``SESSION_BUSY``,
its run never starts) or, once the first has saved, a session that no longer sleeps (its
run runs nothing).

**When it sweeps.** At start (what was due while every daemon was down wakes then), at
the earliest wake time its last sweep saw, when told of a sleep this daemon's own runs
began (:meth:`Waker.nudge` with the wake time), and every ``every_s`` in any case: a
session put to sleep by another daemon that then died is found by that periodic sweep.
Time is the engine's clock (``Engine.clock``), read anew at every step, so a clock moved
ahead (tests) and a nudge wake a day-long sleep at once. What it keeps between sweeps is
one number, the next wake time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math

from ..domain import Status
from ..engine import TIME, RunRequest
from ..errors import LuoshoError, ShuttingDown, TooManyRuns
from .runner import Runner

log = logging.getLogger("luoshod.server.waker")

#: How often a daemon lists the sleeping sessions even when it knows of none due
#: (seconds): another daemon's sleepers, left by a daemon that died.
DEFAULT_SLEEP_SWEEP_S = 30.0
_PAGE = 500


class Waker:
    def __init__(self, runner: Runner, every_s: float = DEFAULT_SLEEP_SWEEP_S) -> None:
        self.runner = runner
        self.every_s = every_s
        #: The earliest wake time the last sweep saw (or a nudge said), ``inf``: none.
        self.next_at = math.inf
        self._nudged = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        #: Sessions woken by this daemon (a count, for tests and the benchmark).
        self.woken = 0

    def nudge(self, wake_at: float | None = None) -> None:
        """A sleep began here (``wake_at``: its wake time), or sweep now (``None``)."""
        if wake_at is not None:
            if wake_at >= self.next_at:
                return  # the loop already waits for an earlier time
            self.next_at = wake_at
        else:
            self.next_at = -math.inf
        self._nudged.set()

    async def sweep(self) -> int:
        """Wake every sleeping session that is due; returns how many runs it started.
        Sets :attr:`next_at` to the earliest wake time not due yet."""
        store, started, soonest, token = self.runner.store, 0, math.inf, ""
        now = self.runner.engine.clock()
        self.next_at = math.inf  # a nudge meanwhile lowers it
        while True:
            page, token = await store.list_sessions(
                status=Status.SLEEPING, page_size=_PAGE, page_token=token
            )
            for s in page:
                if s.wake_at is None:
                    continue
                if s.wake_at > now:
                    soonest = min(soonest, s.wake_at)
                elif await self._wake(s.session_id):
                    started += 1
            if not token:
                break
        self.next_at = min(soonest, self.next_at)
        return started

    async def _wake(self, sid: str) -> bool:
        runner = self.runner
        if runner.runs.get(sid) is not None:
            return False
        req = RunRequest(sid, resume_only=True, wake=TIME)
        try:
            await runner.start(sid, runner.engine.run, req)
        except (ShuttingDown, TooManyRuns) as e:
            log.info("session %s not woken now (%s); the next sweep tries again", sid, e)
            self.next_at = min(self.next_at, runner.engine.clock() + 1.0)
            return False
        except LuoshoError as e:  # held here meanwhile: that run's end is what counts
            log.info("session %s not woken: %s", sid, e)
            return False
        self.woken += 1
        log.info("waking session %s", sid)
        return True

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._forever())

    async def _forever(self) -> None:
        while True:
            self._nudged.clear()
            try:
                await self.sweep()
            except Exception:  # noqa: BLE001 - a sweep that failed is retried next time
                log.exception("sleep sweep failed")
                self.next_at = math.inf
            swept = self.runner.engine.clock()
            while True:
                now = self.runner.engine.clock()
                wait = min(self.every_s - (now - swept), self.next_at - now)
                if wait <= 0:
                    break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._nudged.wait(), min(wait, self.every_s))
                self._nudged.clear()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
