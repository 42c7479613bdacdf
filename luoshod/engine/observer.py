"""What the service tells an observer about runs: every event a run emits and how each
run ended. The base does nothing; :mod:`luoshod.observe.metrics` counts with it, so the
service knows nothing of Prometheus."""

from __future__ import annotations

import asyncio

from ..engine.events import Event


class RunObserver:
    def event(self, event: Event) -> None:
        """An event a run emitted (called in emission order)."""

    def run_ended(self, task: asyncio.Task[object]) -> None:
        """A run's task is done: its result is a ``RunOutcome`` (or ``None``: nothing to
        run), or it raised (``RunInterrupted``, a ``LuoshoError``, a bug), or it was
        cancelled."""
