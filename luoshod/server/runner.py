"""Starting runs and streaming their events: the one place that does it, for the service's
``Execute``/``Resume``/``Resolve`` and for the input queue's background runs (R68, R69).

A run belongs to the daemon, not to the RPC: :meth:`Runner.start` claims the session and
runs the engine as a task of its own, whose events go to a :class:`QueueSink` (for the one
caller) and to the session's watchers (the hub). :meth:`Runner.stream` is a caller's
stream of it; when the caller's stream goes away the run is *interrupted* (it stops at the
next boundary, a model call in flight is finished and checkpointed) and the session stays
busy until it has stopped. :meth:`Runner.replay` is a retry's stream of a run that ended
(R74). When a run ends, :attr:`Runner.after_run` is told (the queue runs the session's
next queued input).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf import json_format

from luosho.v1 import agent_pb2 as pb

from .. import logs
from ..engine import (
    CLIENT_GONE,
    DETACHED,
    TOOL_CALL,
    Engine,
    Event,
    Replay,
    ResolveRequest,
    RunInterrupted,
    RunObserver,
    RunOutcome,
    RunRequest,
)
from ..errors import SessionBusy, ShuttingDown
from ..store import Capability, Store
from . import convert, stored_events
from .hub import END, EventHub
from .runs import SHUTDOWN, ActiveRun, RunRegistry
from .webhooks import Notifier

# The service's logger: its lines (a run's events at DEBUG, how a run ended) keep their name.
log = logging.getLogger("luoshod.server")

#: How many stored events a replay reads at a time.
REPLAY_PAGE = 500
#: How long a failed run's stream waits for its run.failed webhook to reach the outbox.
FAILURE_NOTICE_WAIT_S = 5.0

#: What starts a run: ``Engine.run`` or ``Engine.resolve``.
StartRun = Callable[..., Coroutine[Any, Any, object]]


class EventQueue:
    """The run's events on their way to its one reader: ``asyncio.Queue``'s
    ``put_nowait`` and ``get`` without its four deques and locks (~2.5 KB), which every
    waiting run held."""

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: list[pb.Event | None] = []
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, item: pb.Event | None) -> None:
        self._items.append(item)
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def get(self) -> pb.Event | None:
        while not self._items:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._items.pop(0)


class QueueSink:
    """The engine's ``Sink`` of a run started here: events from the run task to its reader
    (``None`` marks the end) and to the session's watchers. Each is logged at DEBUG: its
    type, and what it says only with ``log_contents``."""

    def __init__(
        self,
        hub: EventHub,
        observer: RunObserver,
        log_contents: bool,
        notify: Callable[[Event], Awaitable[None]] | None = None,
    ) -> None:
        self.queue = EventQueue()
        self.hub = hub
        self.observer = observer
        self.log_contents = log_contents
        self.notify = notify  # webhooks: written to the store's outbox before it goes on
        self.run_id = ""
        self.failure_notice: asyncio.Task[None] | None = None  # a failed run's webhook write

    async def emit(self, event: Event, encoded: object | None = None) -> None:
        self.observer.event(event)
        self.run_id = event.run_id
        if self.notify is not None:
            await self.notify(event)
        proto = stored_events.wire_of(event, encoded)
        if log.isEnabledFor(logging.DEBUG):
            if self.log_contents:
                body = json_format.MessageToJson(proto, indent=None)
                log.debug("event %s seq=%d %s", event.type, event.seq, body)
            else:
                log.debug("event %s seq=%d", event.type, event.seq)
        self.queue.put_nowait(proto)
        self.hub.publish(event.session_id, proto)


@dataclass(frozen=True, slots=True)
class Started:
    """A run started by :meth:`Runner.start`: its registry entry, its sink and its task."""

    run: ActiveRun
    sink: QueueSink
    task: asyncio.Task[object]

    async def ended(self) -> BaseException | None:
        """Wait for the run to end, its events left unread (whoever follows it reads the
        store's log); the error it ended with, if any."""
        while await self.sink.queue.get() is not None:
            pass
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait({self.task})
        return self.task.exception() if not self.task.cancelled() else None


class Runner:
    """Starts the runs of this daemon and streams their events."""

    def __init__(
        self,
        engine: Engine,
        store: Store,
        runs: RunRegistry,
        hub: EventHub,
        observer: RunObserver | None = None,
        *,
        log_contents: bool = False,
    ) -> None:
        self.engine = engine
        self.store = store
        self.runs = runs
        self.hub = hub
        self.observer = observer or RunObserver()
        self.log_contents = log_contents
        #: Webhooks (set by the daemon when configured): each event on its way, and a
        #: failed run's ``run.failed``.
        self.notifier: Notifier | None = None
        #: Told the session id when a run ends (the input queue's ``kick``, R68).
        self.after_run: Callable[[str], None] = lambda session_id: None
        #: Told the wake time and the session when a run ends with its session sleeping
        #: (the waker, R86).
        self.after_sleep: Callable[[float, str], None] = lambda wake_at, session_id: None

    async def start(
        self, session_id: str, start: StartRun, req: RunRequest | ResolveRequest
    ) -> Started:
        """Claim the session (``SessionBusy``) and start its run as a task of its own;
        its events go to the sink's queue (``None`` at the end) and the session's
        watchers. When it ends, :attr:`after_run` is told."""
        logs.session_id.set(session_id)  # the run's task and its log lines inherit it
        run = await self.runs.begin(session_id, req.request_id)
        sink = QueueSink(
            self.hub,
            self.observer,
            self.log_contents,
            self.notifier.event if self.notifier else None,
        )
        task = asyncio.create_task(start(req, sink, run, run.control))

        def finished(t: asyncio.Task[object]) -> None:
            self.runs.end(run)
            self.observer.run_ended(t)
            sink.queue.put_nowait(None)
            self.hub.publish(session_id, END)
            self.after_run(session_id)
            if not t.cancelled() and t.exception() is None:
                outcome = t.result()
                if isinstance(outcome, RunOutcome) and outcome.wake_at is not None:
                    self.after_sleep(outcome.wake_at, session_id)
            if not t.cancelled() and (e := t.exception()) is not None:
                if isinstance(e, RunInterrupted):
                    # Every "run start" has its end in the log: here, a run that stopped at a
                    # boundary (its caller left, e.g. `approvals approve` once the run waits
                    # on the app's tools; or the daemon stops), resumable later.
                    log.info(
                        "run stopped session=%s: %s; its checkpoint is kept for a Resume",
                        session_id,
                        e.reason,
                    )
                elif isinstance(e, SessionBusy):
                    # Refused before it began (another daemon's lease): no run to end.
                    log.info("run not started session=%s: %s", session_id, e)
                else:
                    # Also reported to the caller when it is still there; logged for when it is not.
                    log.info("run ended with error session=%s: %s", session_id, e)
                    if self.notifier is not None and sink.run_id:  # a run began, then failed
                        sink.failure_notice = self.notifier.run_failed(session_id, sink.run_id, e)

        task.add_done_callback(finished)
        return Started(run, sink, task)

    async def stream(
        self,
        session_id: str,
        start: StartRun,
        req: RunRequest | ResolveRequest,
        context: grpc.aio.ServicerContext,
        *,
        detach: bool = False,
    ) -> AsyncIterator[pb.Event]:
        """Start the run and yield its events to the caller of ``context``; ``detach``: the
        stream ends (OK) after the first ``tool.call``, the run stopping at that boundary
        (``DETACHED``), resumable by the app. A request that replays a run which ended
        (R74) yields that run's events."""
        started = await self.start(session_id, start, req)
        run, sink, task = started.run, started.sink, started.task

        # The caller going away (cancel, disconnect, deadline) ends the RPC; the run then
        # stops at its next boundary. grpc may cancel the handler outside this generator,
        # so the RPC's own completion is what we watch, not a CancelledError here.
        def gone(_: object) -> None:
            if not run.done.is_set():
                run.control.interrupt(CLIENT_GONE)

        # types-grpcio's _DoneCallback is a class, not a Protocol: no function matches it.
        context.add_done_callback(gone)  # type: ignore[arg-type]  # see above
        while (event := await sink.queue.get()) is not None:
            yield event
            # A daemon tool's call (MCP) runs on in the daemon: only the app's calls detach.
            if (
                detach
                and event.type == TOOL_CALL
                and event.tool_call.executor != pb.TOOL_EXECUTOR_DAEMON
                and not run.control.interrupted
            ):
                run.control.interrupt(DETACHED)
        if sink.failure_notice is not None:
            # The caller hears of the failure once its run.failed notification is in the
            # outbox (bounded: a store that cannot take it does not hold the answer back).
            await asyncio.wait({sink.failure_notice}, timeout=FAILURE_NOTICE_WAIT_S)
        try:
            outcome = task.result()
        except RunInterrupted as e:
            if e.reason == SHUTDOWN:
                raise ShuttingDown(
                    "the daemon is shutting down; the run was checkpointed and can be resumed",
                    session_id=session_id,
                ) from None
        else:
            if isinstance(outcome, Replay):
                async for event in self.replay(outcome):
                    yield event

    async def replay(self, replay: Replay) -> AsyncIterator[pb.Event]:
        """A retry of a request whose run ended (R74): the run's events from the request's
        ``run.start`` that the log still keeps, ending with the run's ``run.done`` (rebuilt
        from the checkpoint's record when the log no longer keeps it)."""
        sid, end, last = replay.session_id, replay.end, 0
        after = replay.first_seq - 1
        while Capability.EVENT_LOG in self.store.capabilities:
            page = await self.store.read_events(sid, after_seq=after, limit=REPLAY_PAGE)
            for stored in page.events:
                if stored.seq > end.seq:
                    break
                last = stored.seq
                event = stored_events.decode(stored.data, sid, stored.seq)
                event.replayed = True
                yield event
            if len(page.events) < REPLAY_PAGE or last >= end.seq or not page.events:
                break
            after = page.events[-1].seq
        if last != end.seq:
            event = convert.event_pb(end)
            event.replayed = True
            yield event
