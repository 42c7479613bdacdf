"""What the engine is handed by its caller: where events go, where tool results come
from, and how a run is stopped from outside."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol

from .events import Event


class Sink(Protocol):
    """Receives a run's events once they are durable (in the store's event log), with
    their encoded form when the engine encoded them for the log."""

    async def emit(self, event: Event, encoded: bytes | None = None) -> None: ...


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    result_json: str
    is_error: bool = False


class ToolPort(Protocol):
    """Where client-executed tool calls are awaited (the service layer's bridge)."""

    def expect(self, call_id: str) -> asyncio.Future[ToolOutcome]:
        """Register interest in ``call_id``'s result before the tool.call event goes out."""

    def forget(self, call_id: str) -> None:
        """The run no longer waits for ``call_id``."""


class RunInterrupted(Exception):
    """The run stopped at a boundary without finishing; its checkpoint is intact (R6)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class RunControl:
    """Abort (R3) or interrupt a run from outside. Both are sticky."""

    def __init__(self) -> None:
        self.interrupted: str | None = None
        self._abort = asyncio.Event()
        self._stop = asyncio.Event()  # set by abort and by interrupt

    @property
    def aborted(self) -> bool:
        return self._abort.is_set()

    def abort(self) -> None:
        self._abort.set()
        self._stop.set()

    def interrupt(self, reason: str) -> None:
        if self.interrupted is None:
            self.interrupted = reason
        self._stop.set()

    async def wait_abort(self) -> None:
        await self._abort.wait()

    async def wait(self) -> None:
        """Until the run is aborted or interrupted."""
        await self._stop.wait()
