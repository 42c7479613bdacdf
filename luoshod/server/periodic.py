"""The daemon's background loops: one nudged periodic task each.

A :class:`Periodic` runs its ``tick`` (a coroutine function) every ``every_s`` seconds,
sooner when the tick asks for it (it returns the seconds until the next one) or when
:meth:`Periodic.nudge` wakes it. A tick that fails is logged (a store error in one line,
anything else with its traceback) and the loop goes on: the next tick comes after
``retry_s``. :meth:`Periodic.stop` lets the tick in progress end (at most ``grace_s``,
then it is cancelled) and starts no other.

Used for every loop of the daemon that looks at the store now and then: the waker of
sleeping sessions (R86), the scheduler (R87), the input queue's sweep (R68), the expiry
of approvals, retention and the delivery of webhooks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from ..errors import StoreError

#: How long :meth:`Periodic.stop` waits for the tick in progress before cancelling it.
STOP_GRACE_S = 5.0


class Periodic:
    """``tick`` every ``every_s`` seconds, sooner when nudged or when it says so."""

    def __init__(
        self,
        name: str,
        tick: Callable[[], Awaitable[float | None]],
        every_s: float,
        *,
        log: logging.Logger,
        retry_s: float | None = None,
    ) -> None:
        self.name = name
        self.tick = tick
        self.every_s = every_s
        self.retry_s = every_s if retry_s is None else retry_s
        self.log = log
        self._nudged = asyncio.Event()
        self._stopping = False
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self._task is not None

    def nudge(self) -> None:
        """Tick now (or as soon as the tick in progress ends)."""
        self._nudged.set()

    def start(self) -> None:
        if self._task is None:
            self._stopping = False
            self._task = asyncio.get_running_loop().create_task(self._forever(), name=self.name)

    async def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """Start no other tick; let the one in progress end (cancelled after ``grace_s``)."""
        task, self._task = self._task, None
        if task is None:
            return
        self._stopping = True
        self._nudged.set()
        done, _ = await asyncio.wait({task}, timeout=grace_s)
        if not done:
            self.log.warning("%s still busy after %.0f s; cancelled", self.name, grace_s)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _forever(self) -> None:
        while not self._stopping:
            self._nudged.clear()
            try:
                wait = await self.tick()
            except StoreError as e:  # the store is down: said in one line, tried again
                self.log.warning("%s failed (%s); tried again in %g s", self.name, e, self.retry_s)
                wait = self.retry_s
            except Exception:  # noqa: BLE001 - logged; the next tick tries again
                self.log.exception("%s failed; tried again in %g s", self.name, self.retry_s)
                wait = self.retry_s
            wait = self.every_s if wait is None else min(wait, self.every_s)
            if wait > 0 and not self._stopping:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._nudged.wait(), wait)


__all__ = ["Periodic", "STOP_GRACE_S"]
