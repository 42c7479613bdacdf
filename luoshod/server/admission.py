"""Whether a new run may start in this daemon: refused early, with a reason and a
retry-after, rather than accepted to make every run slower.

Two gates, each answering ``RESOURCE_EXHAUSTED``:

- ``max_active_runs``: how many runs may be active at once (``TOO_MANY_RUNS``, metadata
  ``limit``, ``active``, ``retry_after_s``). A waiting run costs memory only (about 50 KB,
  see the README's limits), so the default is sized by memory, not by CPU.
- ``max_loop_lag_ms``: how late the daemon's event loop may run, sustained, before new
  runs are refused (``DAEMON_OVERLOADED``, metadata ``lag_ms``, ``limit_ms``,
  ``retry_after_s``). CPU is what thousands of waiting runs do not use but their steps
  do: once the loop is late at every tick for :data:`LAG_WINDOW_S`, each step of every run
  already waits that long, and one more run would make it worse for all of them.
  The same limit bounds a burst (:class:`StartBudget`): runs started together are all
  admitted before the loop has been late for a whole window, so new runs are also
  admitted by an estimate of the loop work they bring (:data:`START_COST_S` each) against
  the loop time that went by since: a burst that would make the loop later than the
  limit gets ``DAEMON_OVERLOADED`` for its excess, at once.

``retry_after_s`` is a hint for the client: the time a run slot takes to free up at the
rate runs ended lately (count gate), or twice the lag (lag gate), within 1..60 s. A
``DAEMON_OVERLOADED`` refusal's is spread by :class:`Pacer`: the refusals of a burst are
told to come back one after the other, each :data:`START_COST_S` of loop work after the one
before, so that clients which wait as told (the luosho clients do) come back at the pace the
start budget admits them rather than all at once, to be refused again.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import deque
from collections.abc import Callable

from ..errors import DaemonOverloaded, TooManyRuns

#: How often the event loop's lateness is sampled (seconds).
LAG_TICK_S = 0.2
#: The lag gate closes when every sample of this window (seconds) was late by more than
#: the limit: one long step (a burst of run starts) does not close it, a loop that stays
#: behind does.
LAG_WINDOW_S = 2.0
#: How far back run ends are counted for the count gate's retry-after (seconds).
END_WINDOW_S = 30.0
DEFAULT_MAX_LOOP_LAG_MS = 1000
#: The longest ``retry_after_s`` a refusal names (seconds).
MAX_RETRY_AFTER_S = 60
#: The event-loop time a run's start costs the daemon (seconds): its Execute call, the
#: session's lease taken, its checkpoint loaded and saved, its first events sent, its
#: first model call. Measured with bench/slowruns.py (``--turns 1``: a start and one
#: step, 500 runs at once) on this project's 2-core machine: ~3.0 ms of the daemon's CPU
#: a run on lmdb, all its threads.
START_COST_S = 0.004


class LoopLag:
    """The event loop's sustained lateness: a task sleeps :data:`LAG_TICK_S` and records
    how late it woke; :attr:`lag_s` is the smallest lateness of the last
    :data:`LAG_WINDOW_S` (0 until the window has two samples)."""

    def __init__(self) -> None:
        self._samples: deque[tuple[float, float]] = deque()
        self._task: asyncio.Task[None] | None = None
        #: The loop time gone by so far (seconds, growing): the work a loop that never
        #: idles did meanwhile, at most.
        self.worked_s = 0.0

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._sample(), name="loop lag")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _sample(self) -> None:
        while True:
            before = time.monotonic()
            await asyncio.sleep(LAG_TICK_S)
            now = time.monotonic()
            self.record(now, max(0.0, now - before - LAG_TICK_S), now - before)

    def record(self, now: float, late_s: float, elapsed_s: float = 0.0) -> None:
        """One sample: the loop woke ``late_s`` seconds late at ``now`` (monotonic),
        ``elapsed_s`` after the previous one."""
        self.worked_s += elapsed_s
        self._samples.append((now, late_s))
        while self._samples and self._samples[0][0] < now - LAG_WINDOW_S:
            self._samples.popleft()

    @property
    def lag_s(self) -> float:
        if len(self._samples) < 2:
            return 0.0
        return min(late for _, late in self._samples)


class StartBudget:
    """The loop work admitted and not done yet, kept as a bucket of loop time (seconds).

    It holds at most ``capacity_s`` (``max_loop_lag_ms``: a burst that fits makes the loop
    at most that late); each admitted start takes ``cost_s``; it fills again by the loop
    time gone by (:class:`LoopLag`): a loop that kept working got through that much.
    Between two samples of a loop busy with a burst nothing comes back, so a burst's
    excess is refused at once. (How late one sample woke does not empty it: a loop paused
    once, by a collection or a stopped process, is not overloaded; the lag gate judges a
    loop that stays late.)
    """

    def __init__(self, capacity_s: float, lag: LoopLag, cost_s: float = START_COST_S) -> None:
        self.capacity_s = capacity_s
        self.cost_s = cost_s
        self.level_s = capacity_s
        self._lag = lag
        self._worked_seen = lag.worked_s

    def take(self) -> bool:
        """Admit one start if the bucket holds its cost (and take it); else ``False``."""
        self._refill()
        if self.level_s < self.cost_s * (1 - 1e-9):  # float sums of many costs
            return False
        self.level_s -= self.cost_s
        return True

    @property
    def queued_s(self) -> float:
        """The loop work admitted and not done yet: how late it makes the loop (seconds)."""
        self._refill()
        return self.capacity_s - self.level_s

    def _refill(self) -> None:
        worked, self._worked_seen = self._lag.worked_s - self._worked_seen, self._lag.worked_s
        self.level_s = min(self.capacity_s, self.level_s + worked)


class Pacer:
    """The times given to refused starts to come back: each refusal takes the next free
    slot, ``spacing_s`` after the one before (the loop work of one start: the start budget
    fills again by that much in that time) and no sooner than the gate's own wait; the
    slots a burst took pass with time, so a refusal in a quiet daemon gets the gate's wait
    alone. At most :data:`MAX_RETRY_AFTER_S` ahead: past that the refused come back early
    and are paced again."""

    def __init__(
        self, spacing_s: float = START_COST_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.spacing_s = spacing_s
        self._clock = clock
        self._next = 0.0  # on the clock: the first free slot

    def slot(self, wait_s: float, now: float | None = None) -> float:
        """Seconds from ``now`` (the clock's time) to the slot this refusal takes (at least
        ``wait_s``)."""
        now = self._clock() if now is None else now
        at = min(now + MAX_RETRY_AFTER_S, max(now + wait_s, self._next))
        self._next = at + self.spacing_s
        return at - now


class Admission:
    """The gates a new run passes (see the module docstring); 0 turns a gate off."""

    def __init__(
        self, max_active: int = 0, max_loop_lag_ms: int = 0, lag: LoopLag | None = None
    ) -> None:
        self.max_active = max_active
        self.max_loop_lag_ms = max_loop_lag_ms
        self.lag = lag if lag is not None else LoopLag()
        self.starts = StartBudget(max_loop_lag_ms / 1000, self.lag) if max_loop_lag_ms else None
        self.pacer = Pacer()
        self._ends: deque[float] = deque()

    def check(self, active: int, session_id: str) -> None:
        """Raise ``TooManyRuns`` or ``DaemonOverloaded`` when a new run may not start."""
        if self.max_active and active >= self.max_active:
            raise TooManyRuns(
                f"this daemon already runs {active} runs, its limit (max_active_runs); "
                f"retry in {self._slot_retry_after()} s or on another replica",
                limit=self.max_active,
                active=active,
                session_id=session_id,
                retry_after_s=self._slot_retry_after(),
            )
        lag_ms = self.lag.lag_s * 1000
        if self.max_loop_lag_ms and lag_ms > self.max_loop_lag_ms:
            retry = _clamp(self.pacer.slot(2 * lag_ms / 1000))
            raise DaemonOverloaded(
                f"this daemon is overloaded: its event loop runs {lag_ms:.0f} ms late "
                f"(limit {self.max_loop_lag_ms} ms, max_loop_lag_ms), so every run's steps "
                f"wait that long; retry in {retry} s or on another replica",
                lag_ms=round(lag_ms),
                limit_ms=self.max_loop_lag_ms,
                session_id=session_id,
                retry_after_s=retry,
            )
        if self.starts is not None and not self.starts.take():
            queued_ms = round(self.starts.queued_s * 1000)
            retry = _clamp(self.pacer.slot(2 * queued_ms / 1000))
            raise DaemonOverloaded(
                f"this daemon is overloaded: the runs it just started bring ~{queued_ms} ms "
                f"of work to its event loop (limit {self.max_loop_lag_ms} ms, "
                f"max_loop_lag_ms), so one more would make every run's steps wait longer; "
                f"retry in {retry} s or on another replica",
                lag_ms=queued_ms,
                limit_ms=self.max_loop_lag_ms,
                session_id=session_id,
                retry_after_s=retry,
            )

    def ended(self) -> None:
        """A run ended: counted for the count gate's retry-after."""
        now = time.monotonic()
        self._ends.append(now)
        while self._ends and self._ends[0] < now - END_WINDOW_S:
            self._ends.popleft()

    def _slot_retry_after(self) -> int:
        now = time.monotonic()
        recent = sum(1 for t in self._ends if t >= now - END_WINDOW_S)
        return _clamp(END_WINDOW_S / recent if recent else 5.0)


def _clamp(seconds: float) -> int:
    return int(min(MAX_RETRY_AFTER_S, max(1, math.ceil(seconds - 1e-9))))
