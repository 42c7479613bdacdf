"""The runs active in this daemon: one per session (R51), their controls, and the bridge
through which ``SubmitToolResult`` answers a waiting ``tool.call``."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from typing import Any

from ..engine import (
    CALLER_LEFT,
    RECONCILE_NOT_STARTED,
    RECONCILE_UNKNOWN,
    RunControl,
    ToolOutcome,
)
from ..errors import ApprovalNotFound, SessionBusy, ShuttingDown
from .admission import Admission

SHUTDOWN = "daemon shutting down"
#: How long a new run waits for a run whose client went away to stop (seconds).
ORPHAN_WAIT_S = 5.0


class Delivery(Enum):
    ACCEPTED = "accepted"
    DUPLICATE = "duplicate"
    #: R77: a NOT_STARTED or UNKNOWN answer for a call whose tool.reconcile is not waiting.
    NOT_ASKED = "not asked"


class ActiveRun:
    """One running run. Implements the engine's ``ToolPort``."""

    def __init__(self, session_id: str, request_id: str = "") -> None:
        self.session_id = session_id
        #: The request (R74) this run was started for, from its claim on: an input that
        #: interrupts the session's run (R68) never aborts the run about to apply it.
        self.request_id = request_id
        self.control = RunControl()
        self._waiting: dict[str, asyncio.Future[ToolOutcome]] = {}
        self._answered: set[str] = set()
        #: R77: calls whose tool.reconcile waits for its answer, and those answered.
        self._reconciling: set[str] = set()
        self._reconciled: set[str] = set()
        #: Results submitted for a pending call of this run before it handed the call out
        #: (a client answering a ``tool.call`` replayed from the log of the run before it).
        self._parked: dict[str, ToolOutcome] = {}
        self.done = asyncio.Event()
        #: The acknowledgements (R54) that ``SubmitToolResult`` calls wait on: cancelled
        #: when the run ends without having settled them (its result was not recorded).
        self._acks: list[asyncio.Future[None]] = []

    def hold_ack(self, saved: asyncio.Future[None]) -> None:
        """``saved`` is settled by the save that writes its result, or cancelled when the
        run ends first: its submitter then waits on that one future alone."""
        if self.done.is_set():
            saved.cancel()
            return
        self._acks = [a for a in self._acks if not a.done()]
        self._acks.append(saved)

    def cut_off_acks(self) -> None:
        """The run ended: the acknowledgements it did not settle never will be."""
        acks, self._acks = self._acks, []
        for ack in acks:
            ack.cancel()

    def expect(self, call_id: str, *, reconcile: bool = False) -> asyncio.Future[ToolOutcome]:
        fut: asyncio.Future[ToolOutcome] = asyncio.get_running_loop().create_future()
        self._waiting[call_id] = fut
        parked = self._parked.pop(call_id, None)
        if parked is not None:
            fut.set_result(parked)  # a result, not a reconcile answer: the call is done
        elif reconcile:
            self._reconciling.add(call_id)
        return fut

    def park(self, call_id: str, outcome: ToolOutcome) -> Delivery:
        """Keep the result of a call this run has not handed out yet (it is pending in
        the checkpoint the run resumes): the run takes it when it gets to the call,
        rather than asking the app again."""
        if call_id in self._parked or call_id in self._answered:
            return Delivery.DUPLICATE
        self._parked[call_id] = outcome
        return Delivery.ACCEPTED

    def forget(self, call_id: str) -> None:
        self._waiting.pop(call_id, None)
        self._reconciling.discard(call_id)
        self._answered.add(call_id)

    def deliver(self, call_id: str, outcome: ToolOutcome) -> Delivery | None:
        """Hand a result (or a reconcile answer, R77) to the waiting call. ``None``: this
        run is not waiting for it."""
        fut = self._waiting.get(call_id)
        no_result = outcome.reconcile in (RECONCILE_NOT_STARTED, RECONCILE_UNKNOWN)
        if no_result and call_id in self._reconciled:
            return Delivery.DUPLICATE  # the answer again (a retry): the call went out again
        if fut is None:
            return Delivery.DUPLICATE if call_id in self._answered else None
        if fut.done():
            return Delivery.DUPLICATE
        if no_result and call_id not in self._reconciling:
            return Delivery.NOT_ASKED
        if call_id in self._reconciling:
            self._reconciling.discard(call_id)
            self._reconciled.add(call_id)
        fut.set_result(outcome)
        return Delivery.ACCEPTED


class RunRegistry:
    """``max_active``: how many runs may be active at once (0: no limit); ``admission``
    decides with the event loop's lag too (admission.py)."""

    def __init__(self, max_active: int = 0, admission: Admission | None = None) -> None:
        self.admission = admission if admission is not None else Admission(max_active)
        self._runs: dict[str, ActiveRun] = {}
        self._resolving: set[str] = set()
        self.draining = False
        self._hurry = asyncio.Event()

    @contextmanager
    def resolving(self, approval_id: str) -> Iterator[None]:
        """Mark an approval as being resolved here: a second Resolve of it loses (R33)."""
        if approval_id in self._resolving:
            raise ApprovalNotFound(
                f"approval {approval_id!r} is already being resolved", approval_id=approval_id
            )
        self._resolving.add(approval_id)
        try:
            yield
        finally:
            self._resolving.discard(approval_id)

    async def begin(self, session_id: str, request_id: str = "") -> ActiveRun:
        """Claim the session for a run (of the request ``request_id``, if any). Raises
        ``SessionBusy`` (R51), ``TooManyRuns`` (or ``DaemonOverloaded``) or ``ShuttingDown``.

        A run whose client went away is stopping at its next boundary (checkpointing the
        model call in flight first, R6): the new claim waits up to
        :data:`ORPHAN_WAIT_S` for it, so a client that crashed and comes back at once
        resumes instead of getting ``SessionBusy`` for a run nobody listens to.
        """
        self._refuse_if_draining()
        orphan = self._runs.get(session_id)
        if orphan is not None and orphan.control.interrupted in CALLER_LEFT:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(orphan.done.wait(), ORPHAN_WAIT_S)
            self._refuse_if_draining()
        if session_id in self._runs:
            raise SessionBusy(
                f"session {session_id!r} already has a run in this daemon; holder alive: true; "
                f"wait for that run to end, or cancel it (`luoshod sessions cancel {session_id}`), "
                "then retry",
                session_id=session_id,
                holder_alive="true",
                hint="the run in this daemon goes on: wait for it to end, or cancel it, then retry",
            )
        self.admission.check(len(self._runs), session_id)
        run = self._runs[session_id] = ActiveRun(session_id, request_id)
        return run

    def _refuse_if_draining(self) -> None:
        if self.draining:
            raise ShuttingDown("the daemon is shutting down; retry on another instance or later")

    def end(self, run: ActiveRun) -> None:
        if self._runs.get(run.session_id) is run:
            del self._runs[run.session_id]
            self.admission.ended()
        run.done.set()
        run.cut_off_acks()

    def get(self, session_id: str) -> ActiveRun | None:
        return self._runs.get(session_id)

    def __len__(self) -> int:
        return len(self._runs)

    async def drain(self, timeout: float) -> int:
        """Refuse new runs, stop the active ones at their next boundary, wait up to
        ``timeout`` seconds (less if :meth:`hurry` is called). Returns how many were
        still running."""
        self.draining = True
        runs = list(self._runs.values())
        for run in runs:
            run.control.interrupt(SHUTDOWN)
        await self._wait(runs, timeout, self._hurry)
        return len(self._runs)

    def hurry(self) -> None:
        """Stop waiting in :meth:`drain` (an operator's second Ctrl-C)."""
        self._hurry.set()

    async def halt(self, timeout: float) -> int:
        """Halt the runs still active: a model call in flight is given up, what the run had
        not saved is saved, its lease released, its stream ended with ``SHUTTING_DOWN``.
        Waits up to ``timeout`` seconds for them to end; returns how many did not."""
        runs = list(self._runs.values())
        for run in runs:
            run.control.halt(SHUTDOWN)
        await self._wait(runs, timeout)
        return len(self._runs)

    @staticmethod
    async def _wait(
        runs: list[ActiveRun], timeout: float, hurry: asyncio.Event | None = None
    ) -> None:
        if not runs:
            return
        ended = asyncio.ensure_future(asyncio.gather(*(r.done.wait() for r in runs)))
        waits: set[asyncio.Future[Any]] = {ended}
        if hurry is not None:
            waits.add(asyncio.ensure_future(hurry.wait()))
        try:
            await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()
