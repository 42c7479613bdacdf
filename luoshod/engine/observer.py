"""What an observer is told about runs: every event a run emits and how each run ended.
The service layer calls it; the base does nothing; :mod:`luoshod.observe.metrics` counts
with it, so the service knows nothing of Prometheus. It lives beside the events and
outcomes it speaks of, below both the server and observe, so neither imports the other."""

from __future__ import annotations

import asyncio

from .events import Event


class RunObserver:
    def event(self, event: Event) -> None:
        """An event a run emitted (called in emission order)."""

    def run_ended(self, task: asyncio.Task[object]) -> None:
        """A run's task is done: its result is a ``RunOutcome`` (or ``None``: nothing to
        run), or it raised (``RunInterrupted``, a ``LuoshoError``, a bug), or it was
        cancelled."""
