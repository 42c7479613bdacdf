"""What the engine is handed by its caller: where events go, where tool results come
from, and how a run is stopped from outside."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from .events import Event

T = TypeVar("T")


class Sink(Protocol):
    """Receives a run's events once they are durable (in the store's event log), with
    their wire form when the engine encoded them for the log (what the encoder gave with
    their stored form: ``LoopSettings.encode_event``; opaque to the engine)."""

    async def emit(self, event: Event, encoded: object | None = None) -> None: ...


#: R77: the answers to a ``tool.reconcile``. DONE: the outcome's result is the call's;
#: NOT_STARTED / UNKNOWN: no result, the call is handed out again (UNKNOWN marked so).
RECONCILE_DONE = "done"
RECONCILE_NOT_STARTED = "not_started"
RECONCILE_UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    result_json: str
    is_error: bool = False
    #: Done once the result is durable — saved with the checkpoint — or failed with the
    #: error of the save that should have held it. ``SubmitToolResult`` answers
    #: ``ACCEPTED`` only then (R54). For a NOT_STARTED or UNKNOWN reconcile answer: done
    #: once the call's next hand-out is saved (R77).
    saved: asyncio.Future[None] | None = None
    #: R77: the answer to a ``tool.reconcile`` (``RECONCILE_*``); "": a plain result.
    reconcile: str = ""
    #: R77: set by the run for a NOT_STARTED or UNKNOWN answer before ``saved`` is done:
    #: the attempt the call is handed out again as.
    attempt: list[int] | None = None


class ToolPort(Protocol):
    """Where client-executed tool calls are awaited (the service layer's bridge)."""

    def expect(self, call_id: str, *, reconcile: bool = False) -> asyncio.Future[ToolOutcome]:
        """Register interest in ``call_id``'s result before the tool.call event goes out;
        ``reconcile``: in the answer to its tool.reconcile (R77), which may be NOT_STARTED
        or UNKNOWN rather than a result."""

    def forget(self, call_id: str) -> None:
        """The run no longer waits for ``call_id``."""


#: Why a run whose caller went away (cancel, disconnect, deadline) stopped.
CLIENT_GONE = "client disconnected"
#: Why a run whose caller asked to leave once it waited on the app's tools stopped
#: (``ResolveRequest.detach_on_tool_call``: ``approvals approve``).
DETACHED = "the caller detached at a tool call; the app's next Resume runs it"
#: The reasons of a run whose caller left: resumable at once, no failure.
CALLER_LEFT = frozenset({CLIENT_GONE, DETACHED})


class RunInterrupted(Exception):
    """The run stopped at a boundary without finishing; its checkpoint is intact (R6)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class RunControl:
    """Abort (R3) or interrupt a run from outside. Both are sticky.

    The loop waits on :meth:`aborted_signal` and :meth:`stopped_signal`: one future each
    for the whole run, shared by every wait, rather than a task per wait (two tasks a
    step, each cancelled afterwards, were a measurable part of a step's CPU)."""

    def __init__(self) -> None:
        self.interrupted: str | None = None
        self._aborted = False
        self._stopped = False  # set by abort and by interrupt
        self._abort_signal: asyncio.Future[None] | None = None
        self._stop_signal: asyncio.Future[None] | None = None
        self._halted = False
        self._halt_signal: asyncio.Future[None] | None = None

    @property
    def aborted(self) -> bool:
        return self._aborted

    def abort(self) -> None:
        self._aborted = True
        _fire(self._abort_signal)
        self._stop()

    def interrupt(self, reason: str) -> None:
        if self.interrupted is None:
            self.interrupted = reason
        self._stop()

    def halt(self, reason: str) -> None:
        """Interrupt the run and give up a model call in flight (a daemon that must stop
        now: its drain timeout ran out, or a second signal). The run saves what it has
        not saved yet (a new session's input) and stops with ``RunInterrupted``."""
        self.interrupt(reason)
        self._halted = True
        _fire(self._halt_signal)

    @property
    def halted(self) -> bool:
        return self._halted

    def halted_signal(self) -> asyncio.Future[None]:
        """A future done once the run is halted. Only wait on it."""
        if self._halt_signal is None:
            self._halt_signal = _signal(self._halted)
        return self._halt_signal

    def _stop(self) -> None:
        self._stopped = True
        _fire(self._stop_signal)

    def aborted_signal(self) -> asyncio.Future[None]:
        """A future done once the run is aborted. Only wait on it (never cancel it)."""
        if self._abort_signal is None:
            self._abort_signal = _signal(self._aborted)
        return self._abort_signal

    async def unless_stopped(self, work: Awaitable[T]) -> tuple[T | None, bool]:
        """``work`` (a model call) run until it answers or the run is aborted or halted,
        whichever comes first: ``(answer, True)``, or ``(None, False)`` with ``work``
        cancelled (:attr:`aborted` then says which)."""
        task = asyncio.ensure_future(work)
        await wait_first(task, self.aborted_signal(), self.halted_signal())
        if task.done():
            return task.result(), True
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return None, False

    def stopped_signal(self) -> asyncio.Future[None]:
        """A future done once the run is aborted or interrupted. Only wait on it."""
        if self._stop_signal is None:
            self._stop_signal = _signal(self._stopped)
        return self._stop_signal


async def wait_first(*futures: asyncio.Future[Any]) -> None:
    """Wait until one of ``futures`` is done, cancelling none of them whatever happens
    here: ``asyncio.wait(futures, return_when=FIRST_COMPLETED)`` without the sets it
    builds and returns and its inner coroutine (a step waits like this three times).
    Like it, returns on a later turn of the event loop even when one is done already."""
    waiter = asyncio.get_running_loop().create_future()

    def wake(_: object) -> None:
        if not waiter.done():
            waiter.set_result(None)

    for f in futures:
        f.add_done_callback(wake)
    try:
        await waiter
    finally:
        for f in futures:
            f.remove_done_callback(wake)


def _signal(done: bool) -> asyncio.Future[None]:
    fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    if done:
        fut.set_result(None)
    return fut


def _fire(fut: asyncio.Future[None] | None) -> None:
    if fut is not None and not fut.done():
        fut.set_result(None)


def settle_acks(acks: list[asyncio.Future[None]], error: BaseException | None) -> None:
    """R54: tell the submitters of these results whether the save that holds them
    succeeded (a result, the save's exception, or cancelled when it was cut off)."""
    for ack in acks:
        if ack.done():
            continue
        if error is None:
            ack.set_result(None)
        elif isinstance(error, Exception):
            ack.set_exception(error)
        else:
            ack.cancel()
