"""Inputs that arrive while their session is busy (docs/reference/rules.md R68, R69).

``ExecuteRequest.if_busy`` other than ``REJECT`` never refuses a busy session: the input
is queued with the session in the store (``Store.enqueue_input``, idempotent by the
request id, which the daemon picks when the caller gave none), so a crash loses nothing
and every daemon sharing the store sees it. ``ENQUEUE`` queues last; ``INTERRUPT`` and
``ROLLBACK`` queue first and abort the run holding the session (as ``Cancel`` does, R3):
at once when it runs in this daemon, at the holder's next sweep when it runs in another.

**Who runs a queued input.** The daemon that sees the session free: each run's end kicks
its session's queue here, and a sweep every ``sweep_s`` kicks every session with queued
inputs (what a crashed daemon left, or a session freed in another daemon). The head
input is run in the background as the ``Execute`` it was, under its request id (R74):
the save that applies it records the id, and the input leaves the queue only after that,
so an input whose run was cut short by a crash is either applied (its record says so, and
it is dropped from the queue, not run again) or runs again: exactly once. A session
paused on an approval keeps its queue until the approval is resolved (R69).

**The caller's stream** gets ``input.queued`` (seq 0, never stored) and then follows the
run that applies its input, from that run's ``run.start`` to its ``run.done``, through
the store's event log (so a run in another daemon is followed too). An input removed with
``DequeueInput`` before it ran ends that stream with ``ABORTED``/``INPUT_DEQUEUED``; an
input the engine refused when its turn came (e.g. ``AGENT_DRIFT``) is dropped from the
queue and its stream ends with that error.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc

from luosho.v1 import agent_pb2 as pb

from ..domain import Checkpoint, QueuedInput, Status
from ..engine import (
    INPUT,
    RUN_DONE,
    RUN_START,
    RunInterrupted,
    RunRequest,
    check_same_body,
    replay,
    rollback,
    run_digest,
)
from ..errors import (
    InvalidArgument,
    LeaseLost,
    LuoshoError,
    SessionAwaitingApproval,
    SessionBusy,
    ShuttingDown,
    StoreError,
    TooManyRuns,
)
from ..store import Capability
from . import convert, stored_events
from .hub import SHUTDOWN_MARK
from .periodic import Periodic
from .runner import Runner
from .validation import (
    check_agent,
    check_history_limit,
    check_json,
    check_messages,
    check_request_id,
    check_retention_ms,
    check_session_id,
)

log = logging.getLogger("luoshod.server.queue")

#: How often a daemon looks for queued inputs it could run (seconds).
DEFAULT_QUEUE_SWEEP_S = 1.0
#: How often a caller's stream reads the store for a run of another daemon (seconds).
FOLLOW_POLL_S = 0.25
INPUT_QUEUED = "input.queued"
_PAGE = 500
#: How many times ``GetSession`` reads the queue between two checkpoint reads, at most.
_CONSISTENT_READS = 5
_FRONT = (pb.IF_BUSY_INTERRUPT, pb.IF_BUSY_ROLLBACK)


def check_if_busy(value: int) -> int:
    """``IF_BUSY_UNSPECIFIED`` is ``REJECT``; an unknown value is ``INVALID_IF_BUSY``."""
    if value == pb.IF_BUSY_UNSPECIFIED:
        return pb.IF_BUSY_REJECT
    if value not in pb.IfBusy.values():
        raise InvalidArgument(
            f"if_busy {value} is not one of REJECT, ENQUEUE, INTERRUPT, ROLLBACK",
            reason="INVALID_IF_BUSY",
            if_busy=str(value),
        )
    return value


def run_request(request: pb.ExecuteRequest) -> RunRequest:
    """The engine's request of an ``Execute``, every field checked (``InvalidArgument``)."""
    return RunRequest(
        session_id=check_session_id(request.session_id),
        input=check_messages(list(request.input)),
        agent=check_agent(request.agent) if request.HasField("agent") else None,
        business_state_json=check_json(request.business_state_json, "business_state_json")
        if request.HasField("business_state_json")
        else None,
        request_id=check_request_id(request.request_id),
        history_limit=check_history_limit(request.history_limit)
        if request.HasField("history_limit")
        else None,
        retention_s=check_retention_ms(request.retention_ms)
        if request.HasField("retention_ms")
        else None,
        # REJECT (or unset) as 0: the digest of a plain Execute stays what it was (R74).
        if_busy=0 if (busy := check_if_busy(request.if_busy)) == pb.IF_BUSY_REJECT else busy,
    )


@dataclass(frozen=True, slots=True)
class Queued:
    """What the store's queue holds of an input (``QueuedInput.data``): the ``Execute`` as
    sent (its request id filled in) and, for ``ROLLBACK``, the run to roll back."""

    request: pb.ExecuteRequest
    rollback_run: str = ""

    def encode(self) -> bytes:
        body = {
            "execute": base64.b64encode(
                self.request.SerializeToString(deterministic=True)
            ).decode(),
            "rollback_run": self.rollback_run,
        }
        return json.dumps(body, sort_keys=True).encode()

    @classmethod
    def decode(cls, data: bytes) -> Queued:
        body = json.loads(data)
        return cls(
            pb.ExecuteRequest.FromString(base64.b64decode(body["execute"])), body["rollback_run"]
        )

    @property
    def interrupts(self) -> bool:
        return self.request.if_busy in _FRONT


def queued_input_pb(q: QueuedInput) -> pb.QueuedInput:
    request = Queued.decode(q.data).request
    return pb.QueuedInput(
        request_id=q.request_id,
        input=list(request.input),
        if_busy=request.if_busy,
        position=q.position,
        enqueued_at=convert.timestamp(q.enqueued_at),
    )


def _version(cp: Checkpoint | None) -> int:
    return -1 if cp is None else cp.version


def _dequeued(sid: str, rid: str) -> SessionBusy:
    return SessionBusy(
        f"the input {rid!r} queued on session {sid!r} was removed (DequeueInput) before it ran",
        reason="INPUT_DEQUEUED",
        session_id=sid,
        request_id=rid,
    )


class InputQueue:
    """The service's side of the queue: ``execute`` for callers, ``kick`` and the sweep
    to run queued inputs, ``shown``/``dequeue`` for ``GetSession``/``DequeueInput``. Its
    runs are started and streamed by the ``runner``, as the service's own are."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self._draining: dict[str, asyncio.Task[None]] = {}
        self._again: set[str] = set()
        #: Inputs dropped because the engine refused them: the error, for their caller.
        self._refused: dict[tuple[str, str], LuoshoError] = {}
        self._sweeper: Periodic | None = None

    @property
    def supported(self) -> bool:
        return Capability.QUEUE in self.runner.store.capabilities

    # -- callers -----------------------------------------------------------------------

    async def execute(
        self, request: pb.ExecuteRequest, req: RunRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.Event]:
        """``Execute`` with ``if_busy`` ENQUEUE, INTERRUPT or ROLLBACK."""
        store, sid = self.runner.store, req.session_id
        if not self.supported:
            raise InvalidArgument(
                f"if_busy needs a store that keeps an input queue; {type(store).__name__} does not",
                reason="IF_BUSY_UNSUPPORTED",
                session_id=sid,
            )
        if not req.request_id:
            req.request_id = request.request_id = f"q-{uuid.uuid4().hex}"
        rid = req.request_id
        await self._own_attempt(sid, rid)
        queued = await store.queued_inputs(sid)
        applied = await store.find_request(sid, rid)
        # Its run began, was cut short (a crash) and nobody resumed it: resume it (R74),
        # whether or not the input is still queued (it leaves the queue only once its run
        # ends; a sweep that finds it applied drops it without resuming anything). Busy
        # here or in another daemon, the caller follows the run that holds the session.
        orphan = applied is not None and applied.end is None
        if (orphan or applied is None and not queued) and self.runner.runs.get(sid) is None:
            # Free here (perhaps busy in another daemon, or paused): run it as a plain
            # Execute; queue it only when refused before anything ran.
            started = False
            try:
                async for event in self.runner.stream(sid, self.runner.engine.run, req, context):
                    started = True
                    yield event
                return
            except (SessionBusy, SessionAwaitingApproval):
                if started:
                    raise
        if applied is not None and applied.end is not None and (cp := await store.load(sid)):
            # R74: a retry of a request whose run ended replays that run.
            check_same_body(cp, applied, run_digest(req))
            async for event in self.runner.replay(replay(cp, applied)):
                yield event
            return
        if applied is None:
            await self._enqueue(request, rid)
            ahead = [q.request_id for q in await store.queued_inputs(sid)]
            yield pb.Event(
                session_id=sid,
                type=INPUT_QUEUED,
                time=convert.timestamp(self.runner.engine.clock()),
                input_queued=pb.InputQueued(
                    request_id=rid, ahead=ahead.index(rid) if rid in ahead else 0
                ),
            )
            self.kick(sid)
        async for event in self._follow(sid, rid):
            yield event

    async def submit(self, request: pb.ExecuteRequest) -> None:
        """Queue ``request`` (its ``request_id`` set) with no caller to stream to, and run
        it when its session is free: a schedule's fire (R87). Idempotent by request id,
        as a retried ``Execute`` is: queued again after it ran, it is dropped, not run."""
        await self._enqueue(request, request.request_id)
        self.kick(request.session_id)

    async def _own_attempt(self, sid: str, rid: str) -> None:
        """A retry (R74) that finds this daemon starting a run for the same request waits
        until that run has applied the input (the retry then follows it) or ended without
        applying it (the retry then decides afresh). The run may wait a while before its
        first save: for the lease of a daemon that stopped, or for a lock such a daemon
        holds. Queuing the input meanwhile acknowledged it as queued (an INTERRUPT or
        ROLLBACK, first in the queue) while that run went on applying it as the plain
        ``Execute`` it found the session free for; and aborting that run, as an
        interrupting input does, left the input applied by a run that ended at once,
        answered by nobody (found by `luoshod torture`, two daemons on PostgreSQL)."""
        while (run := self.runner.runs.get(sid)) is not None and run.request_id == rid:
            if await self.runner.store.find_request(sid, rid) is not None:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(run.done.wait(), FOLLOW_POLL_S)

    async def _enqueue(self, request: pb.ExecuteRequest, rid: str) -> None:
        store, sid = self.runner.store, request.session_id
        rollback_run = ""
        if request.if_busy == pb.IF_BUSY_ROLLBACK:
            cp = await store.load(sid)
            rollback_run = cp.run_id if cp is not None else ""
        item = Queued(request, rollback_run)
        entry = await store.enqueue_input(
            sid, rid, item.encode(), front=item.interrupts, now=self.runner.engine.clock()
        )
        kept = Queued.decode(entry.data).request
        if kept.SerializeToString(deterministic=True) != request.SerializeToString(
            deterministic=True
        ):
            raise InvalidArgument(
                f"request id {rid!r} is already queued in session {sid!r} for a different "
                "request; a retry must send the same request, a new request a new id",
                reason="REQUEST_ID_REUSED",
                session_id=sid,
                request_id=rid,
            )
        if item.interrupts:
            self._abort_local(sid, rid)

    def _abort_local(self, sid: str, rid: str) -> None:
        """Abort the session's run in this daemon, unless it is the one applying ``rid``:
        started for it (its claim names the request), which holds from the claim on, before
        the run's first save records the request (that may wait for a lease or a lock)."""
        run = self.runner.runs.get(sid)
        if run is not None and run.request_id != rid:
            log.info("aborting the run of session %s: input %s interrupts it", sid, rid)
            run.control.abort()

    async def _follow(self, sid: str, rid: str) -> AsyncIterator[pb.Event]:
        """The events of the run that applies ``rid``, from its ``run.start`` (which names
        ``rid``) through its ``run.done``, read from the store's log: the run may be
        another daemon's, and may wait on a tool call before its first save records the
        id. Woken by this daemon's live events, else every :data:`FOLLOW_POLL_S`."""
        store = self.runner.store
        cursor, run_id = 0, ""  # the log read so far; the run followed, once its start is seen
        with self.runner.hub.subscribe(sid) as live:
            while True:
                while True:
                    page = await store.read_events(sid, after_seq=cursor, limit=_PAGE)
                    for stored in page.events:
                        cursor = stored.seq
                        event = stored_events.decode(stored.data, sid, stored.seq)
                        if event.type == RUN_START and event.run_start.request_id == rid:
                            run_id = event.run_id  # (again, when a crashed attempt ran first)
                        if not run_id:
                            continue
                        yield event
                        if event.type == RUN_DONE and event.run_id == run_id:
                            return
                    if len(page.events) < _PAGE:
                        break
                if not run_id:
                    record = await store.find_request(sid, rid)
                    if (
                        record is not None
                        and record.end is not None
                        and (cp := await store.load(sid))
                    ):
                        # It ended and the log no longer keeps its start: replayed (R74).
                        async for event in self.runner.replay(replay(cp, record)):
                            yield event
                        return
                    if (
                        record is None
                        and not any(q.request_id == rid for q in await store.queued_inputs(sid))
                        and await store.find_request(sid, rid) is None
                    ):
                        if (run := self._refused.pop((sid, rid), None)) is not None:
                            raise run
                        if cursor == (await store.read_events(sid, after_seq=cursor, limit=0)).last:
                            raise _dequeued(sid, rid)
                        continue  # it started meanwhile: read on
                with contextlib.suppress(TimeoutError):
                    mark = await asyncio.wait_for(live.get(), FOLLOW_POLL_S)
                    if mark is SHUTDOWN_MARK:
                        raise ShuttingDown(
                            "the daemon is shutting down; the queued input stays queued",
                            session_id=sid,
                            request_id=rid,
                        )

    async def session(self, sid: str) -> tuple[Checkpoint | None, list[pb.QueuedInput]]:
        """What ``GetSession`` shows: the checkpoint and the queue as of one moment (R69).

        They are two reads, and an input applied between them (its run's save lands after
        the checkpoint is read, before the queue is) would be in neither: not in the
        transcript read before, not in the queue read after (an applied input is not
        shown). Every save bumps the checkpoint's version, and an input leaves the queue
        only after the save that applies it, so a queue read between two checkpoint reads
        of one version matches that checkpoint; else it is read again (a few times: a run
        that saves faster than the reads gets the last pair)."""
        store = self.runner.store
        cp = await store.load(sid)
        if not self.supported:
            return cp, []
        for _ in range(_CONSISTENT_READS):
            queue = await self.shown(sid)
            again = await store.load(sid)
            if _version(again) == _version(cp):
                break
            cp = again
        return cp, queue

    async def shown(self, sid: str) -> list[pb.QueuedInput]:
        if not self.supported:
            return []
        store = self.runner.store
        # An input whose run has begun saving is applied: it leaves the queue when that run
        # ends, and is not shown meanwhile.
        return [
            queued_input_pb(q)
            for q in await store.queued_inputs(sid)
            if await store.find_request(sid, q.request_id) is None
        ]

    async def dequeue(self, sid: str, rid: str) -> bool:
        if not rid:
            raise InvalidArgument("request_id is required", reason="INVALID_REQUEST_ID")
        if not self.supported:
            return False
        return await self.runner.store.remove_queued_input(sid, rid)

    # -- running what is queued ----------------------------------------------------------

    def kick(self, sid: str) -> None:
        """Run the session's queued inputs, one after another, if it is free here."""
        if not self.supported:
            return
        task = self._draining.get(sid)
        if task is not None and not task.done():
            self._again.add(sid)
            return
        self._draining[sid] = asyncio.get_running_loop().create_task(self._drain(sid))

    async def _drain(self, sid: str) -> None:
        try:
            while True:
                self._again.discard(sid)
                if not await self._next(sid) and sid not in self._again:
                    return
        except (StoreError, LeaseLost) as e:
            log.warning("queued inputs of session %s not run now (%s); the sweep retries", sid, e)
        except Exception:  # noqa: BLE001 - logged; the sweep retries
            log.exception("queued inputs of session %s not run", sid)
        finally:
            if self._draining.get(sid) is asyncio.current_task():
                del self._draining[sid]

    async def _next(self, sid: str) -> bool:
        """Run the head of the session's queue; whether to look at the queue again."""
        runner, store = self.runner, self.runner.store
        if runner.runs.get(sid) is not None or runner.runs.draining:
            return False  # that run's end kicks again
        queued = await store.queued_inputs(sid)
        if not queued:
            return False
        head = queued[0]
        cp = await store.load(sid)
        applied = await store.find_request(sid, head.request_id) if cp is not None else None
        if applied is not None and applied.end is not None:
            # Applied by a run that ended before the input left the queue.
            await store.remove_queued_input(sid, head.request_id)
            return True
        # Applied by a run that was cut short (a crash inside it, after the save that
        # applied the input): run the request again below; under its request id the
        # engine resumes that run rather than applying the input twice (R74). Dropping it
        # here instead left the session with the input answered by nobody, or answered
        # together with the next queued input in one merged turn.
        if cp is not None and cp.status is Status.AWAITING_APPROVAL:
            return False  # R69: kept until the approval is resolved
        item = Queued.decode(head.data)
        if cp is not None and cp.status is Status.SLEEPING and not item.interrupts:
            return False  # R86: ENQUEUE waits for the session to wake (the woken run's end kicks)
        try:
            req = run_request(item.request)
        except InvalidArgument as e:  # checked when queued; a daemon with other limits
            return await self._drop(sid, head.request_id, e)
        if cp is not None and cp.status is Status.SLEEPING and not item.rollback_run:
            req.wake = INPUT  # R86: INTERRUPT wakes it; the sleep's result says "input"
        if runner.engine.request_id_limit <= 0:
            # No record can say it was applied: run it at most once rather than twice.
            await store.remove_queued_input(sid, head.request_id)
        if item.rollback_run:
            try:
                await self._rollback(sid, item.rollback_run, head.request_id)
            except (SessionBusy, ShuttingDown, TooManyRuns):
                return False
        try:
            started = await runner.start(sid, runner.engine.run, req)
        except (SessionBusy, ShuttingDown, TooManyRuns):
            return False
        error = await started.ended()  # its callers follow it through the store's log
        applied = await store.find_request(sid, head.request_id)
        if applied is not None and applied.end is not None:
            await store.remove_queued_input(sid, head.request_id)
            return True
        # Applied and not ended: this attempt failed after the save that applied it, or
        # found the session held (another daemon's lease, its run then resumed there). It
        # stays first and its request runs again (resuming that run, R74); removing it
        # here let the next queued input merge into its unfinished run, or left it
        # unanswered (found by `luoshod torture` with two daemons on PostgreSQL).
        if isinstance(error, SessionBusy):
            # Held elsewhere (another daemon's lease): that run's end kicks there. The kick
            # of this attempt's own end is no news: looping on it retried at once, hundreds
            # of times a second, until the other daemon let go.
            self._again.discard(sid)
            return False
        if isinstance(
            error, SessionAwaitingApproval | ShuttingDown | RunInterrupted | StoreError | LeaseLost
        ):
            return False  # not applied: it stays first in the queue
        if isinstance(error, LuoshoError):
            return await self._drop(sid, head.request_id, error)
        return False

    async def _drop(self, sid: str, rid: str, error: LuoshoError) -> bool:
        log.warning("queued input %s of session %s refused and dropped: %s", rid, sid, error)
        if len(self._refused) > 1000:
            self._refused.clear()
        self._refused[(sid, rid)] = error
        await self.runner.store.remove_queued_input(sid, rid)
        return True

    async def _rollback(self, sid: str, run_id: str, rid: str) -> None:
        claim = await self.runner.runs.begin(sid, rid)
        try:
            engine = self.runner.engine
            async with engine.hold(sid) as held:
                if await rollback(engine.store, held.lease, sid, run_id, engine.clock()):
                    log.info("session %s rolled back to before run %s", sid, run_id)
        finally:
            self.runner.runs.end(claim)

    async def sweep(self) -> None:
        """Kick every session with queued inputs; abort a run of this daemon that an input
        queued through another daemon interrupts."""
        store, token = self.runner.store, ""
        while True:
            ids, token = await store.queued_sessions(page_size=_PAGE, page_token=token)
            for sid in ids:
                if sid.startswith("_"):
                    continue  # not a session: a key of the daemon's own (the webhooks' outbox)
                if self.runner.runs.get(sid) is None:
                    self.kick(sid)
                    continue
                queued = await store.queued_inputs(sid)
                if queued and Queued.decode(queued[0].data).interrupts:
                    self._abort_local(sid, queued[0].request_id)
            if not token:
                return

    def start(self, every_s: float = DEFAULT_QUEUE_SWEEP_S) -> None:
        if self.supported and self._sweeper is None:
            self._sweeper = Periodic("queue sweep", self.sweep, every_s, log=log)
            self._sweeper.start()

    async def stop(self) -> None:
        """Stop sweeping and wait for the background runs (already stopped by the
        registry's drain) to be done with the queue."""
        if self._sweeper is not None:
            await self._sweeper.stop()
            self._sweeper = None
        tasks = list(self._draining.values())
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5)
