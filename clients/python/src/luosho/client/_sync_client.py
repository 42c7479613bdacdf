"""``Client``: the blocking client; ``Run``, one Execute/Resume/Resolve stream; ``Watch``,
one Watch stream."""

from __future__ import annotations

import concurrent.futures
import inspect
import threading
import time
from collections.abc import Callable, Generator, Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Any

import grpc

from luosho.v1 import agent_pb2, agent_pb2_grpc

from ._errors import LuoshoError, ToolCallNotPendingError, UnavailableError, translate_errors
from ._json import dumps
from ._messages import InputLike
from ._requests import (
    UNSET,
    IfBusyLike,
    MetadataLike,
    PageQuery,
    StatusLike,
    ToolResultLike,
    approvals_query,
    compaction_strategy,
    compare_request,
    execute_request,
    fork_request,
    history_query,
    list_sessions_query,
    mark_reconciled,
    normalize_metadata,
    resolve_request,
    resume_request,
    schedule_spec,
    watch_request,
)
from ._retry import (
    NO_RETRY,
    Delivered,
    Refusals,
    RetryPolicy,
    attempt_starter,
    channel_options,
    wait_until_ready,
)
from ._watch import WatchCursor

if TYPE_CHECKING:  # the tool machinery is imported by the first run (not by Client())
    from ._agent import AgentLike
    from ._result import RunResult
    from ._tools import ReconcileLike, ToolBox, ToolOutcome, ToolsLike

__all__ = ["Client", "Run", "Watch"]

_StreamCall = Any  # grpc's _MultiThreadedRendezvous: an iterator and a grpc.Call


class Run(Delivered):
    """One run's event stream: ``for event in run`` and/or ``result = run.result()``.

    The blocking twin of ``AsyncRun``: the RPC starts on first iteration; each
    ``tool.call`` is answered from the client's tool thread pool (calls handed out
    together run concurrently, up to ``max_tool_workers``). ``with run:`` or
    ``run.close()`` cancels the stream. Retries with ``request_id`` as ``AsyncRun``
    does; ``attempts`` counts the streams opened.
    """

    def __init__(
        self,
        session_id: str,
        start: Callable[[], _StreamCall],
        submit: Callable[[str, str, ToolOutcome], Any],
        toolbox: ToolBox,
        pool: Callable[[], concurrent.futures.Executor],
        *,
        empty_means_finished: bool,
        request_id: str = "",
        retry: RetryPolicy = NO_RETRY,
        channel: grpc.Channel | None = None,
    ) -> None:
        self.session_id = session_id
        self._channel = channel
        self.request_id = request_id
        self.attempts = 0
        self._retry = retry
        self._seen = 0  # the highest seq delivered: a retry skips what came before
        self._outcomes: dict[str, concurrent.futures.Future[ToolOutcome]] = {}
        self._start = start
        self._submit = submit
        self._toolbox = toolbox
        self._pool = pool
        self._empty_means_finished = empty_means_finished
        self._call: _StreamCall | None = None
        self._events: list[agent_pb2.Event] = []
        self._pending: set[concurrent.futures.Future[None]] = set()
        self._lock = threading.Lock()
        self._failure: BaseException | None = None
        self._result: RunResult | None = None
        self._stream = self._read()

    @property
    def events(self) -> list[agent_pb2.Event]:
        """The events received so far."""
        return self._events

    def __iter__(self) -> Iterator[agent_pb2.Event]:
        return self

    def __next__(self) -> agent_pb2.Event:
        return next(self._stream)

    def __enter__(self) -> Run:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def result(self) -> RunResult:
        """Read what is left of the stream; the run's result."""
        for _ in self._stream:
            pass
        if self._result is None:
            raise RuntimeError("the run has no result: it failed or was closed")
        return self._result

    def close(self) -> None:
        """Stop reading: cancel the stream and tools not started yet. Idempotent.

        From another thread while ``for event in run`` is reading, the loop then raises
        a ``LuoshoError`` with code CANCELLED.
        """
        if self._call is not None:
            self._call.cancel()
        self._cancel_pending()
        if inspect.getgeneratorstate(self._stream) != inspect.GEN_RUNNING:
            self._stream.close()

    def _read(self) -> Generator[agent_pb2.Event, None, None]:
        fruitless = 0  # attempts in a row that made no progress (RetryPolicy)
        refusals = Refusals()  # attempts the daemon's admission refused (RetryPolicy)
        try:
            while True:
                self.attempts += 1
                fruitless += 1
                got = 0
                try:
                    with translate_errors():
                        call = self._call = self._start()
                        try:
                            for response in call:
                                got += 1
                                event = response.event
                                if not self._take(event):
                                    continue  # delivered by an earlier attempt
                                if self._progress(event):
                                    fruitless = 0  # the run got further
                                if self._asks_for_a_tool(event):
                                    self._spawn(event)
                                yield event
                        except grpc.RpcError:
                            # A failed submission cancels the call: report that failure instead.
                            if self._failure is not None:
                                raise self._failure from None
                            raise
                    break
                except LuoshoError as e:
                    if e is self._failure:
                        raise
                    before = refusals.count
                    wait = self._retry.next_wait(
                        self.session_id, e, max(1, fruitless), got, refusals
                    )
                    if wait is None:
                        raise
                    if refusals.count > before:
                        fruitless -= 1  # refused before it started: not a row's attempt
                time.sleep(wait)
                if self._channel is not None:
                    wait_until_ready(self._channel, self._retry.max_backoff)
            self._drain()
        finally:
            self._cancel_pending()
        from ._result import build_result

        self._result = build_result(
            self.session_id,
            self._events,
            empty_means_finished=self._empty_means_finished,
            attempts=self.attempts,
        )

    def _spawn(self, event: agent_pb2.Event) -> None:
        future = self._pool().submit(self._answer, event)
        with self._lock:
            self._pending.add(future)
        future.add_done_callback(self._on_answered)

    def _answer(self, event: agent_pb2.Event) -> None:
        if event.type == "tool.reconcile":  # R77
            self._reconcile(event)
            return
        call_id = event.tool_call.call.id
        with self._lock:
            mine = call_id not in self._outcomes
            if mine:  # the tool runs once; a call asked again gets the same result
                self._outcomes[call_id] = concurrent.futures.Future()
            computed = self._outcomes[call_id]
        if mine:
            try:
                computed.set_result(self._toolbox.run_sync(self.session_id, event))
            except BaseException as e:
                computed.set_exception(e)
                raise
        outcome = computed.result()
        try:
            self._submit(event.session_id or self.session_id, call_id, outcome)
        except (UnavailableError, ToolCallNotPendingError):
            # The daemon went away with the run: the stream fails too, and its retry asks
            # for this call again. Without retries this is the run's failure.
            if self._retry.max_attempts == 1:
                raise

    def _reconcile(self, event: agent_pb2.Event) -> None:
        call_id = event.tool_reconcile.call.id
        with self._lock:
            ran = self._outcomes.get(call_id)
        if ran is not None:  # the tool ran in this run object: that is its result
            from ._tools import done_outcome

            outcome = done_outcome(ran.result())
        else:
            outcome = self._toolbox.reconcile_sync(self.session_id, event)
        try:
            self._submit(event.session_id or self.session_id, call_id, outcome)
        except (UnavailableError, ToolCallNotPendingError):
            if self._retry.max_attempts == 1:
                raise

    def _on_answered(self, future: concurrent.futures.Future[None]) -> None:
        with self._lock:
            self._pending.discard(future)
            if future.cancelled() or future.exception() is None or self._failure is not None:
                return
            self._failure = future.exception()
        # The run would wait for this result until its timeout: fail fast instead.
        if self._call is not None:
            self._call.cancel()

    def _drain(self) -> None:
        with self._lock:
            pending = list(self._pending)
        concurrent.futures.wait(pending)
        # A done callback may still be on its way: read the futures themselves.
        failures = [f.exception() for f in pending if not f.cancelled() and f.exception()]
        if self._failure is not None:
            raise self._failure
        if failures:
            raise failures[0]  # type: ignore[misc]

    def _cancel_pending(self) -> None:
        with self._lock:
            pending = list(self._pending)
        for future in pending:
            future.cancel()


class Watch(WatchCursor):
    """One Watch stream: ``for event in watch``; the blocking twin of ``AsyncWatch``.

    Use ``with client.watch(...) as watch:`` or ``watch.close()`` to stop it; from another
    thread while ``for event in watch`` is reading, the loop then just ends. Resume a
    watch that broke off with ``client.watch(session_id, after_seq=watch.last_seq)``.
    """

    def __init__(self, session_id: str, after_seq: int, start: Callable[[], _StreamCall]) -> None:
        super().__init__(session_id, after_seq)
        self._start = start
        self._call: _StreamCall | None = None
        self._stream = self._read()

    def __iter__(self) -> Iterator[agent_pb2.Event]:
        return self

    def __next__(self) -> agent_pb2.Event:
        return next(self._stream)

    def __enter__(self) -> Watch:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop watching: cancel the stream. Idempotent."""
        self._closed = True
        if self._call is not None:
            self._call.cancel()
        if inspect.getgeneratorstate(self._stream) != inspect.GEN_RUNNING:
            self._stream.close()

    def _read(self) -> Generator[agent_pb2.Event, None, None]:
        call = self._call = self._start()
        if self._closed:  # closed from another thread while the call was starting
            call.cancel()
        with translate_errors():
            try:
                for response in call:
                    yield self._advance(response.event)
            except grpc.RpcError as error:
                if self._closed and error.code() == grpc.StatusCode.CANCELLED:
                    return
                raise


class Client:
    """The blocking client of a luoshod daemon (see ``AsyncClient`` for the arguments).

    Tools run in a thread pool of ``max_tool_workers`` threads owned by the client and
    shut down by ``close()``; an async tool runs in a fresh event loop in its thread.
    """

    def __init__(
        self,
        target: str | None = None,
        *,
        channel: grpc.Channel | None = None,
        metadata: MetadataLike | None = None,
        token: str | None = None,
        credentials: grpc.ChannelCredentials | None = None,
        max_tool_workers: int = 8,
        retry: RetryPolicy | None = RetryPolicy(),
    ) -> None:
        self._retry = retry or NO_RETRY
        if channel is None and not target:
            raise ValueError("give a target (host:port or unix:/path) or a channel")
        self._owns_channel = channel is None
        if channel is None:
            options = channel_options(self._retry)
            channel = (
                grpc.secure_channel(target, credentials, options)
                if credentials is not None
                else grpc.insecure_channel(target, options)
            )
        self._channel = channel
        self._stub = agent_pb2_grpc.AgentServiceStub(self._channel)
        self._metadata = normalize_metadata(metadata, token)
        self._max_tool_workers = max_tool_workers
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._executor_lock = threading.Lock()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop the tool threads, and close the channel if this client created it."""
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
        if self._owns_channel:
            self._channel.close()

    def _tool_pool(self) -> concurrent.futures.Executor:
        with self._executor_lock:
            if self._executor is None:
                self._executor = concurrent.futures.ThreadPoolExecutor(
                    max_workers=self._max_tool_workers, thread_name_prefix="luosho-tool"
                )
            return self._executor

    def execute(
        self,
        session_id: str,
        input: InputLike = None,
        *,
        agent: AgentLike | None = None,
        tools: ToolsLike | None = None,
        reconcile: ReconcileLike | None = None,
        business_state: Any = UNSET,
        request_id: str = "",
        history_limit: int | None = None,
        if_busy: IfBusyLike = None,
        retention_ms: int | None = None,
    ) -> Run:
        """Start, continue or resume the run of ``session_id``; see ``AsyncClient.execute``."""
        request = execute_request(
            session_id,
            input,
            agent=agent,
            business_state=business_state,
            request_id=request_id,
            history_limit=history_limit,
            if_busy=if_busy,
            retention_ms=retention_ms,
        )
        if reconcile and request.HasField("agent"):
            mark_reconciled(request.agent, reconcile)
        return self._run(session_id, "Execute", request, tools, reconcile)

    def resume(
        self,
        session_id: str,
        *,
        agent: AgentLike | None = None,
        tools: ToolsLike | None = None,
        reconcile: ReconcileLike | None = None,
        request_id: str = "",
        wake: bool = False,
    ) -> Run:
        """Finish an interrupted run; see ``AsyncClient.resume``."""
        request = resume_request(session_id, agent=agent, request_id=request_id, wake=wake)
        if reconcile and request.HasField("agent"):
            mark_reconciled(request.agent, reconcile)
        return self._run(session_id, "Resume", request, tools, reconcile, empty_means_finished=True)

    def resolve(
        self,
        approval_id: str,
        approved: bool,
        *,
        note: str = "",
        agent: AgentLike | None = None,
        tools: ToolsLike | None = None,
        reconcile: ReconcileLike | None = None,
        request_id: str = "",
        session_id: str = "",
        answer: str = "",
    ) -> Run:
        """Decide a pending approval and continue its run; see ``AsyncClient.resolve``."""
        request = resolve_request(
            approval_id,
            approved,
            note=note,
            agent=agent,
            request_id=request_id,
            session_id=session_id,
            answer=answer,
        )
        if reconcile and request.HasField("agent"):
            mark_reconciled(request.agent, reconcile)
        return self._run(session_id, "Resolve", request, tools, reconcile)

    def _run(
        self,
        session_id: str,
        rpc: str,
        request: Any,
        tools: ToolsLike | None,
        reconcile: ReconcileLike | None = None,
        *,
        empty_means_finished: bool = False,
    ) -> Run:
        from ._tools import ToolBox

        run: Run
        start = attempt_starter(
            getattr(self._stub, rpc), request, self._metadata, lambda: run.session_id
        )
        run = Run(
            session_id,
            start,
            self._submit_outcome,
            ToolBox(tools, reconcile),
            self._tool_pool,
            empty_means_finished=empty_means_finished,
            request_id=request.request_id,
            retry=self._retry,
            channel=self._channel,
        )
        return run

    def _unary(self, rpc: str, request: Any) -> Any:
        with translate_errors():
            return getattr(self._stub, rpc)(request, metadata=self._metadata)

    def _pages(self, query: PageQuery) -> Iterator[Any]:
        token = ""
        while True:
            response = self._unary(query.rpc, query.request(token))
            yield from getattr(response, query.items)
            token = response.next_page_token
            if not token:
                return

    def _submit_outcome(self, session_id: str, tool_call_id: str, outcome: ToolOutcome) -> str:
        request = agent_pb2.SubmitToolResultRequest(
            session_id=session_id,
            tool_call_id=tool_call_id,
            result_json=outcome.result_json,
            is_error=outcome.is_error,
            reconcile=outcome.reconcile,  # type: ignore[arg-type]  # the proto enum's int
        )
        from ._result import submit_outcome_name

        return submit_outcome_name(self._unary("SubmitToolResult", request).outcome)

    def submit_tool_result(
        self, session_id: str, tool_call_id: str, result: Any, *, is_error: bool = False
    ) -> str:
        """Answer a tool call by hand; "accepted" or "duplicate"."""
        from ._tools import ToolOutcome

        return self._submit_outcome(session_id, tool_call_id, ToolOutcome(dumps(result), is_error))

    def cancel(self, session_id: str) -> bool:
        """Abort the session's running run; False when none was running in the daemon."""
        return bool(self._unary("Cancel", agent_pb2.CancelRequest(session_id=session_id)).cancelled)

    def queue(self, session_id: str) -> list[agent_pb2.QueuedInput]:
        """The inputs queued on the session (``if_busy``), in the order they will run."""
        response = self._unary("GetSession", agent_pb2.GetSessionRequest(session_id=session_id))
        return list(response.queue)

    def last_model_failure(self, session_id: str) -> agent_pb2.ModelFailure | None:
        """Why the session's last model call failed (see ``AsyncClient.last_model_failure``)."""
        response = self._unary("GetSession", agent_pb2.GetSessionRequest(session_id=session_id))
        return response.last_model_failure if response.HasField("last_model_failure") else None

    # -- schedules (R87) --------------------------------------------------------------------

    def create_schedule(
        self,
        name: str,
        agent: AgentLike,
        input: InputLike,
        *,
        cron: str = "",
        time_zone: str = "",
        interval_s: float = 0,
        overlap: str | int | None = None,
        catch_up: str | int | None = None,
        session: str | int | None = None,
    ) -> agent_pb2.Schedule:
        """A new schedule (see ``AsyncClient.create_schedule``)."""
        spec = schedule_spec(
            name,
            agent,
            input,
            cron=cron,
            time_zone=time_zone,
            interval_s=interval_s,
            overlap=overlap,
            catch_up=catch_up,
            session=session,
        )
        request = agent_pb2.CreateScheduleRequest(spec=spec)
        return self._unary("CreateSchedule", request).schedule

    def schedules(self) -> list[agent_pb2.Schedule]:
        """Every schedule, ordered by name."""
        return list(self._unary("ListSchedules", agent_pb2.ListSchedulesRequest()).schedules)

    def pause_schedule(self, name: str) -> agent_pb2.Schedule:
        """Stop the schedule's fires until ``resume_schedule``."""
        return self._unary("PauseSchedule", agent_pb2.PauseScheduleRequest(name=name)).schedule

    def resume_schedule(self, name: str) -> agent_pb2.Schedule:
        """Let a paused schedule fire again, from its next time after now."""
        return self._unary("ResumeSchedule", agent_pb2.ResumeScheduleRequest(name=name)).schedule

    def delete_schedule(self, name: str) -> None:
        """Delete the schedule (the runs it started go on); ``NotFound`` if none."""
        self._unary("DeleteSchedule", agent_pb2.DeleteScheduleRequest(name=name))

    def trigger_schedule(self, name: str) -> agent_pb2.TriggerScheduleResponse:
        """Fire the schedule once now; the fire's session and request id."""
        return self._unary("TriggerSchedule", agent_pb2.TriggerScheduleRequest(name=name))

    def dequeue_input(self, session_id: str, request_id: str) -> bool:
        """Remove a queued input; False when none of that request id is queued."""
        response = self._unary(
            "DequeueInput",
            agent_pb2.DequeueInputRequest(session_id=session_id, request_id=request_id),
        )
        return bool(response.removed)

    def get_session(self, session_id: str) -> agent_pb2.Checkpoint:
        """The session's latest checkpoint, as the proto (see ``message_to_dict``)."""
        return self.session(session_id).checkpoint

    def session(self, session_id: str) -> agent_pb2.GetSessionResponse:
        """Everything ``GetSession`` answers in one call: the checkpoint, the queue and the
        last model failure of one moment (``get_session``, ``queue`` and
        ``last_model_failure`` each take one part of it)."""
        return self._unary("GetSession", agent_pb2.GetSessionRequest(session_id=session_id))

    def list_sessions(
        self,
        status: StatusLike = None,
        *,
        page_size: int = 100,
        prefix: str = "",
        costliest_first: bool = False,
    ) -> Iterator[agent_pb2.SessionSummary]:
        """Every session (optionally of one status, and whose id starts with ``prefix``),
        following the pages as it goes; by id, or with ``costliest_first`` by the
        session's total cost (``total_usage.cost_usd``), the costliest first."""
        return self._pages(list_sessions_query(status, page_size, prefix, costliest_first))

    def compact(self, session_id: str, *, strategy: str | None = None) -> agent_pb2.CompactResponse:
        """Compact the session's transcript by hand (R85): ``strategy`` ``"prune"``,
        ``"summarize"`` or ``"both"`` (default: the agent's). ``compacted`` is False when
        nothing outside the protected tail was left to compact; ``SessionBusyError`` while
        a run holds the session."""
        return self._unary(
            "Compact",
            agent_pb2.CompactRequest(session_id=session_id, strategy=compaction_strategy(strategy)),
        )

    def delete_session(self, session_id: str, *, keep_history: bool = False) -> bool:
        """Delete the session's checkpoint; False when it had none."""
        response = self._unary(
            "DeleteSession",
            agent_pb2.DeleteSessionRequest(session_id=session_id, keep_history=keep_history),
        )
        return bool(response.deleted)

    def approvals(
        self, session_id: str | None = None, *, page_size: int = 100
    ) -> Iterator[agent_pb2.Approval]:
        """Every pending approval (of one session, or of all), oldest first, every page."""
        return self._pages(approvals_query(session_id, page_size))

    def history(
        self, session_id: str, *, include_checkpoint: bool = False, page_size: int = 50
    ) -> Iterator[agent_pb2.HistoryEntry]:
        """The session's saved checkpoints, newest first; see ``AsyncClient.history``."""
        return self._pages(history_query(session_id, include_checkpoint, page_size))

    def fork(
        self,
        session_id: str,
        from_step: int,
        *,
        new_session_id: str = "",
        messages: InputLike = None,
        business_state: Any = UNSET,
        tool_result: ToolResultLike | None = None,
        append_input: str = "",
    ) -> agent_pb2.ForkResponse:
        """A new in-progress session from a step of another's history; see
        ``AsyncClient.fork``."""
        request = fork_request(
            session_id,
            from_step,
            new_session_id=new_session_id,
            messages=messages,
            business_state=business_state,
            tool_result=tool_result,
            append_input=append_input,
        )
        return self._unary("Fork", request)

    def compare(self, session_id_a: str, session_id_b: str) -> agent_pb2.CompareResponse:
        """Two sessions' trajectories side by side; see ``AsyncClient.compare``."""
        return self._unary("Compare", compare_request(session_id_a, session_id_b))

    def watch(self, session_id: str, after_seq: int = 0, *, follow: bool = False) -> Watch:
        """The session's events after ``after_seq``, then live ones; see ``Watch`` and
        ``AsyncClient.watch``."""
        request = watch_request(session_id, after_seq, follow)
        return Watch(
            session_id, after_seq, lambda: self._stub.Watch(request, metadata=self._metadata)
        )
