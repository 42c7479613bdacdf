"""``AsyncClient``: the asyncio client; ``AsyncRun``, one Execute/Resume/Resolve stream;
``AsyncWatch``, one Watch stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator
from types import TracebackType
from typing import Any

import grpc

from luosho.v1 import agent_pb2, agent_pb2_grpc

from ._agent import AgentLike, dumps
from ._errors import LuoshoError, ToolCallNotPendingError, UnavailableError, translate_errors
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
from ._result import RunResult, build_result, submit_outcome_name
from ._retry import (
    NO_RETRY,
    Delivered,
    Refusals,
    RetryPolicy,
    attempt_starter,
    channel_options,
    wait_until_ready_async,
)
from ._tools import ReconcileLike, ToolBox, ToolOutcome, ToolsLike, done_outcome
from ._watch import WatchCursor

__all__ = ["AsyncClient", "AsyncRun", "AsyncWatch"]

_StreamCall = Any  # grpc.aio.UnaryStreamCall of Execute/Resume/Resolve/WatchResponse


class AsyncRun(Delivered):
    """One run's event stream: ``async for event in run`` and/or ``result = await run``.

    ``session_id`` is the run's session; for a ``resolve`` run it is "" until the first
    event names it.

    The RPC starts on first iteration (or await). While the stream is read, every
    ``tool.call`` event is answered: its tool runs in a task of its own (so calls handed
    out together run concurrently) and the result goes back with SubmitToolResult. Events
    are yielded as ``agent_pb2.Event``, every type passed through, known or not.

    ``request_id`` is the call's idempotency key, the same on every attempt: a stream that
    fails with ``UNAVAILABLE`` (or a transport failure before its first event) is sent
    again after a backoff, as ``retry`` says, and the daemon applies the request once
    (R74): the retry resumes the run or replays it. Events already delivered are not
    delivered again, and a call's tool runs once per run object (a call asked again after
    a retry gets the result already computed). ``attempts`` counts the streams opened.

    ``await run`` reads what is left of the stream and returns the ``RunResult``. Leaving
    ``async with run:`` early (or ``await run.aclose()``) cancels the stream, which the
    daemon treats like a crashed caller: the run stops at the next step boundary and can
    be resumed.
    """

    def __init__(
        self,
        session_id: str,
        start: Callable[[], _StreamCall],
        submit: Callable[[str, str, ToolOutcome], Any],
        toolbox: ToolBox,
        *,
        empty_means_finished: bool,
        request_id: str = "",
        retry: RetryPolicy = NO_RETRY,
        channel: grpc.aio.Channel | None = None,
    ) -> None:
        self.session_id = session_id
        self._channel = channel
        self.request_id = request_id
        self.attempts = 0
        self._retry = retry
        self._seen = 0  # the highest seq delivered: a retry skips what came before
        self._outcomes: dict[str, asyncio.Future[ToolOutcome]] = {}
        self._start = start
        self._submit = submit
        self._toolbox = toolbox
        self._empty_means_finished = empty_means_finished
        self._call: _StreamCall | None = None
        self._events: list[agent_pb2.Event] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._failure: BaseException | None = None
        self._result: RunResult | None = None
        self._stream = self._read()

    @property
    def events(self) -> list[agent_pb2.Event]:
        """The events received so far."""
        return self._events

    @property
    def result(self) -> RunResult | None:
        """The result once the stream has ended, else None."""
        return self._result

    def __aiter__(self) -> AsyncRun:
        return self

    async def __anext__(self) -> agent_pb2.Event:
        return await self._stream.__anext__()

    def __await__(self) -> Generator[Any, None, RunResult]:
        return self._finish().__await__()

    async def __aenter__(self) -> AsyncRun:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop reading: cancel the stream and any tool still running. Idempotent."""
        if self._call is not None and not self._call.done():
            self._call.cancel()
        for task in list(self._tasks):
            task.cancel()
        await self._stream.aclose()

    async def _finish(self) -> RunResult:
        async for _ in self._stream:
            pass
        if self._result is None:
            raise RuntimeError("the run has no result: it failed or was closed")
        return self._result

    async def _read(self) -> AsyncGenerator[agent_pb2.Event, None]:
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
                            async for response in call:
                                got += 1
                                event = response.event
                                if not self._take(event):
                                    continue  # delivered by an earlier attempt
                                if self._progress(event):
                                    fruitless = 0  # the run got further
                                if self._asks_for_a_tool(event):
                                    self._spawn(event)
                                yield event
                        except asyncio.CancelledError:
                            # A failed submission cancels the call; anything else is a real cancel.
                            task = asyncio.current_task()
                            if self._failure is None or (task is not None and task.cancelling()):
                                raise
                        if self._failure is not None:
                            raise self._failure
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
                await asyncio.sleep(wait)
                if self._channel is not None:
                    await wait_until_ready_async(self._channel, self._retry.max_backoff)
            await self._drain()
        finally:
            for task in list(self._tasks):
                task.cancel()
        self._result = build_result(
            self.session_id,
            self._events,
            empty_means_finished=self._empty_means_finished,
            attempts=self.attempts,
        )

    def _spawn(self, event: agent_pb2.Event) -> None:
        task = asyncio.create_task(self._answer(event))
        self._tasks.add(task)
        task.add_done_callback(self._on_answered)

    async def _answer(self, event: agent_pb2.Event) -> None:
        if event.type == "tool.reconcile":  # R77
            call_id = event.tool_reconcile.call.id
            ran = self._outcomes.get(call_id)
            if ran is not None:  # the tool ran in this run object: that is its result
                result = done_outcome(await asyncio.shield(ran))
            else:
                result = await self._toolbox.reconcile_async(self.session_id, event)
        else:
            call_id = event.tool_call.call.id
            outcome = self._outcomes.get(call_id)
            if outcome is None:  # the tool runs once; a call asked again gets the same result
                outcome = self._outcomes[call_id] = asyncio.ensure_future(
                    self._toolbox.run_async(self.session_id, event)
                )
            result = await asyncio.shield(outcome)
        try:
            await self._submit(event.session_id or self.session_id, call_id, result)
        except (UnavailableError, ToolCallNotPendingError):
            # The daemon went away with the run: the stream fails too, and its retry asks
            # for this call again. Without retries this is the run's failure.
            if self._retry.max_attempts == 1:
                raise

    def _on_answered(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if task.cancelled() or task.exception() is None or self._failure is not None:
            return
        # The run would wait for this result until its timeout: fail fast instead.
        self._failure = task.exception()
        if self._call is not None:
            self._call.cancel()

    async def _drain(self) -> None:
        outcomes = await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._failure is not None:
            raise self._failure
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome


class AsyncWatch(WatchCursor):
    """One Watch stream: ``async for event in watch`` (``agent_pb2.Event``, every type).

    The stream ends when the session's current run ends (at once, after the replay, when
    none is running); with ``follow=True`` it goes on across runs until closed. Use
    ``async with client.watch(...) as watch:`` (or ``await watch.aclose()``, also from
    another task: the loop then just ends) to stop it. ``last_seq`` is where to resume::

        watch = client.watch("chat-42", after_seq=cursor, follow=True)
        try:
            async for event in watch:
                handle(event)
        finally:
            cursor = watch.last_seq   # e.g. after UnavailableError: watch again from here
            await watch.aclose()
    """

    def __init__(self, session_id: str, after_seq: int, start: Callable[[], _StreamCall]) -> None:
        super().__init__(session_id, after_seq)
        self._start = start
        self._call: _StreamCall | None = None
        self._stream = self._read()

    def __aiter__(self) -> AsyncWatch:
        return self

    async def __anext__(self) -> agent_pb2.Event:
        return await self._stream.__anext__()

    async def __aenter__(self) -> AsyncWatch:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop watching: cancel the stream. Idempotent."""
        self._closed = True
        if self._call is not None and not self._call.done():
            self._call.cancel()
        if not self._stream.ag_running:  # else the reading task ends its loop itself
            await self._stream.aclose()

    async def _read(self) -> AsyncGenerator[agent_pb2.Event, None]:
        call = self._call = self._start()
        with translate_errors():
            try:
                async for response in call:
                    yield self._advance(response.event)
            except asyncio.CancelledError:
                # aclose() from another task cancels the call: end quietly. Anything
                # else (the reading task itself cancelled) is a real cancellation.
                task = asyncio.current_task()
                if not self._closed or (task is not None and task.cancelling()):
                    raise


class AsyncClient:
    """The asyncio client of a luoshod daemon.

    ``target`` is ``"host:port"`` or ``"unix:/path/to.sock"``; pass ``channel`` instead to
    use a channel of your own (TLS, options, interceptors), which ``aclose`` leaves open.
    ``metadata`` is sent with every call; ``token`` adds ``authorization: Bearer <token>``
    to it (a daemon with ``auth_tokens`` wants one). ``credentials`` (e.g.
    ``grpc.ssl_channel_credentials(ca, key, cert)``) makes the channel TLS (mTLS with a
    client key and certificate).

    ``retry`` is how runs (execute, resume, resolve) retry a stream the daemon or the
    network broke (see ``AsyncRun``): ``RetryPolicy()`` by default, ``NO_RETRY`` (or
    ``None``) for one attempt only.
    """

    def __init__(
        self,
        target: str | None = None,
        *,
        channel: grpc.aio.Channel | None = None,
        metadata: MetadataLike | None = None,
        token: str | None = None,
        credentials: grpc.ChannelCredentials | None = None,
        retry: RetryPolicy | None = RetryPolicy(),
    ) -> None:
        self._retry = retry or NO_RETRY
        if channel is None and not target:
            raise ValueError("give a target (host:port or unix:/path) or a channel")
        self._owns_channel = channel is None
        if channel is None:
            options = channel_options(self._retry)
            channel = (
                grpc.aio.secure_channel(target, credentials, options)
                if credentials is not None
                else grpc.aio.insecure_channel(target, options)
            )
        self._channel = channel
        self._stub = agent_pb2_grpc.AgentServiceStub(self._channel)
        self._metadata = normalize_metadata(metadata, token)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the channel if this client created it."""
        if self._owns_channel:
            await self._channel.close()

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
    ) -> AsyncRun:
        """Start, continue or resume the run of ``session_id`` (the Execute RPC).

        ``input``: a str (one user message), a message dict, a proto Message, or a list of
        those. ``tools`` maps tool names to the callables that answer ``tool.call``.
        ``business_state``: any JSON value; left out, the stored one is kept; None is JSON
        null. ``history_limit``: history entries kept for this session (None: the
        daemon's default; 0 keeps none). ``request_id``: the call's idempotency key (a new
        UUIDv7 when empty), sent again unchanged on every retry. Raises (while iterating or
        awaiting) a
        ``LuoshoError`` subclass on failure.
        """
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
    ) -> AsyncRun:
        """Finish an interrupted run (the Resume RPC); no agent means the saved one.

        A session with nothing to run gives ``RunResult(ran=False, status="finished")``.
        ``wake``: wake a sleeping session now (R86); without it, Resume of a sleeping
        session fails with ``SESSION_SLEEPING``.
        """
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
    ) -> AsyncRun:
        """Decide a pending approval and continue its run (the Resolve RPC).

        Returns a run like ``execute``'s: approved, the gated call is handed out as a
        ``tool.call`` (answered by ``tools``) and runs once; rejected, it gets an error
        result with ``note`` that the model reads. Either way the turn's remaining calls
        run, then the loop goes on (it may pause again on another approval). ``agent``:
        omitted, the saved one; given, it is checked for drift like a resume. An unknown
        or already decided approval raises ``ApprovalNotFoundError``. ``session_id`` (the
        approval's session) lets a retry be recognised even when the first attempt's
        stream broke before its first event, after the approval was claimed.

        A question (an approval of kind ``APPROVAL_KIND_QUESTION``) is answered with
        ``answer``: the text becomes the call's result ``{"answer": TEXT}`` (``approved``
        is then implied); ``approved=False`` without an answer declines it.
        """
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
    ) -> AsyncRun:
        run: AsyncRun
        start = attempt_starter(
            getattr(self._stub, rpc), request, self._metadata, lambda: run.session_id
        )
        run = AsyncRun(
            session_id,
            start,
            self._submit_outcome,
            ToolBox(tools, reconcile),
            empty_means_finished=empty_means_finished,
            request_id=request.request_id,
            retry=self._retry,
            channel=self._channel,
        )
        return run

    async def _unary(self, rpc: str, request: Any) -> Any:
        with translate_errors():
            return await getattr(self._stub, rpc)(request, metadata=self._metadata)

    async def _pages(self, query: PageQuery) -> AsyncIterator[Any]:
        token = ""
        while True:
            response = await self._unary(query.rpc, query.request(token))
            for item in getattr(response, query.items):
                yield item
            token = response.next_page_token
            if not token:
                return

    async def _submit_outcome(
        self, session_id: str, tool_call_id: str, outcome: ToolOutcome
    ) -> str:
        request = agent_pb2.SubmitToolResultRequest(
            session_id=session_id,
            tool_call_id=tool_call_id,
            result_json=outcome.result_json,
            is_error=outcome.is_error,
            reconcile=outcome.reconcile,  # type: ignore[arg-type]  # the proto enum's int
        )
        response = await self._unary("SubmitToolResult", request)
        return submit_outcome_name(response.outcome)

    async def submit_tool_result(
        self, session_id: str, tool_call_id: str, result: Any, *, is_error: bool = False
    ) -> str:
        """Answer a tool call by hand; ``result`` is JSON-encoded.

        Returns "accepted", or "duplicate" when the call already had a result. A call
        that no run waits for raises ``ToolCallNotPendingError`` (resume the session).
        """
        return await self._submit_outcome(
            session_id, tool_call_id, ToolOutcome(dumps(result), is_error)
        )

    async def cancel(self, session_id: str) -> bool:
        """Abort the session's running run; False when none was running in the daemon."""
        response = await self._unary("Cancel", agent_pb2.CancelRequest(session_id=session_id))
        return bool(response.cancelled)

    async def queue(self, session_id: str) -> list[agent_pb2.QueuedInput]:
        """The inputs queued on the session (``if_busy``), in the order they will run."""
        response = await self._unary(
            "GetSession", agent_pb2.GetSessionRequest(session_id=session_id)
        )
        return list(response.queue)

    async def last_model_failure(self, session_id: str) -> agent_pb2.ModelFailure | None:
        """Why the session's last model call failed (reason, message, the provider's status
        and message in ``metadata``, when the daemon calls that model again), as the daemon
        that made the call remembers it; None when its last call succeeded or it knows none."""
        response = await self._unary(
            "GetSession", agent_pb2.GetSessionRequest(session_id=session_id)
        )
        return response.last_model_failure if response.HasField("last_model_failure") else None

    # -- schedules (R87) --------------------------------------------------------------------

    async def create_schedule(
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
        """A new schedule: the daemon runs ``agent`` with ``input`` at each fire, by
        ``cron`` in ``time_zone`` (IANA, default UTC) or every ``interval_s``. ``overlap``
        "skip" (default), "enqueue" or "allow"; ``catch_up`` "latest" (default), "all" or
        "none"; ``session`` "each_fire" (default: ``schedule:NAME:FIRE``) or "one"
        (``schedule:NAME``). Raises ``InvalidArgument`` (``INVALID_SCHEDULE``,
        ``UNKNOWN_TIME_ZONE``) or ``AlreadyExists`` (``SCHEDULE_EXISTS``)."""
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
        return (await self._unary("CreateSchedule", request)).schedule

    async def schedules(self) -> list[agent_pb2.Schedule]:
        """Every schedule, ordered by name."""
        return list(
            (await self._unary("ListSchedules", agent_pb2.ListSchedulesRequest())).schedules
        )

    async def pause_schedule(self, name: str) -> agent_pb2.Schedule:
        """Stop the schedule's fires until ``resume_schedule``."""
        return (
            await self._unary("PauseSchedule", agent_pb2.PauseScheduleRequest(name=name))
        ).schedule

    async def resume_schedule(self, name: str) -> agent_pb2.Schedule:
        """Let a paused schedule fire again, from its next time after now."""
        return (
            await self._unary("ResumeSchedule", agent_pb2.ResumeScheduleRequest(name=name))
        ).schedule

    async def delete_schedule(self, name: str) -> None:
        """Delete the schedule (the runs it started go on); ``NotFound`` if none."""
        await self._unary("DeleteSchedule", agent_pb2.DeleteScheduleRequest(name=name))

    async def trigger_schedule(self, name: str) -> agent_pb2.TriggerScheduleResponse:
        """Fire the schedule once now; the fire's session and request id."""
        return await self._unary("TriggerSchedule", agent_pb2.TriggerScheduleRequest(name=name))

    async def dequeue_input(self, session_id: str, request_id: str) -> bool:
        """Remove a queued input; False when none of that request id is queued."""
        response = await self._unary(
            "DequeueInput",
            agent_pb2.DequeueInputRequest(session_id=session_id, request_id=request_id),
        )
        return bool(response.removed)

    async def get_session(self, session_id: str) -> agent_pb2.Checkpoint:
        """The session's latest checkpoint, as the proto (see ``message_to_dict``)."""
        return (await self.session(session_id)).checkpoint

    async def session(self, session_id: str) -> agent_pb2.GetSessionResponse:
        """Everything ``GetSession`` answers in one call: the checkpoint, the queue and the
        last model failure of one moment (``get_session``, ``queue`` and
        ``last_model_failure`` each take one part of it)."""
        return await self._unary("GetSession", agent_pb2.GetSessionRequest(session_id=session_id))

    def list_sessions(
        self,
        status: StatusLike = None,
        *,
        page_size: int = 100,
        prefix: str = "",
        costliest_first: bool = False,
    ) -> AsyncIterator[agent_pb2.SessionSummary]:
        """Every session (optionally of one status, and whose id starts with ``prefix``),
        following the pages as it goes; by id, or with ``costliest_first`` by the
        session's total cost (``total_usage.cost_usd``), the costliest first."""
        return self._pages(list_sessions_query(status, page_size, prefix, costliest_first))

    async def compact(
        self, session_id: str, *, strategy: str | None = None
    ) -> agent_pb2.CompactResponse:
        """Compact the session's transcript by hand (R85): ``strategy`` ``"prune"``,
        ``"summarize"`` or ``"both"`` (default: the agent's). ``compacted`` is False when
        nothing outside the protected tail was left to compact; ``SessionBusyError`` while
        a run holds the session."""
        return await self._unary(
            "Compact",
            agent_pb2.CompactRequest(session_id=session_id, strategy=compaction_strategy(strategy)),
        )

    async def delete_session(self, session_id: str, *, keep_history: bool = False) -> bool:
        """Delete the session's checkpoint; False when it had none."""
        response = await self._unary(
            "DeleteSession",
            agent_pb2.DeleteSessionRequest(session_id=session_id, keep_history=keep_history),
        )
        return bool(response.deleted)

    def approvals(
        self, session_id: str | None = None, *, page_size: int = 100
    ) -> AsyncIterator[agent_pb2.Approval]:
        """Every pending approval (of one session, or of all), oldest first, every page."""
        return self._pages(approvals_query(session_id, page_size))

    def history(
        self, session_id: str, *, include_checkpoint: bool = False, page_size: int = 50
    ) -> AsyncIterator[agent_pb2.HistoryEntry]:
        """The session's saved checkpoints, newest first, every page (``HistoryEntry``).

        ``include_checkpoint`` fills each entry's full ``checkpoint``; keep ``page_size``
        small then, as every page is one response. An unknown session has no entries.
        """
        return self._pages(history_query(session_id, include_checkpoint, page_size))

    async def fork(
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
        """A new in-progress session from the newest history entry of ``from_step``.

        The patch is applied in this order: ``messages`` (not None) replace the
        transcript; ``business_state`` replaces the state; ``tool_result``
        (``ToolResultPatch(tool_call_id, result, is_error=False)`` or a tuple of those)
        replaces or records one call's result in place; ``append_input`` is a user
        message sent after any calls still pending. ``new_session_id`` defaults to
        ``"<session_id>.fork-<n>"``; one that exists raises ``SessionExistsError``. Returns
        the ``ForkResponse`` (``session_id``, ``step``, ``checkpoint``); run the fork with
        ``resume(response.session_id)``.
        """
        request = fork_request(
            session_id,
            from_step,
            new_session_id=new_session_id,
            messages=messages,
            business_state=business_state,
            tool_result=tool_result,
            append_input=append_input,
        )
        return await self._unary("Fork", request)

    async def compare(self, session_id_a: str, session_id_b: str) -> agent_pb2.CompareResponse:
        """Two sessions' trajectories side by side: ``a``, ``b``, ``diverged_at``, ``drift``."""
        return await self._unary("Compare", compare_request(session_id_a, session_id_b))

    def watch(self, session_id: str, after_seq: int = 0, *, follow: bool = False) -> AsyncWatch:
        """The session's events with ``seq > after_seq`` (0: all the daemon keeps), then
        live ones; see ``AsyncWatch``. Resume with ``after_seq=watch.last_seq``. A cursor
        older than the kept log raises ``EventsOutOfRangeError`` (``.oldest_kept_seq``)."""
        request = watch_request(session_id, after_seq, follow)
        return AsyncWatch(
            session_id, after_seq, lambda: self._stub.Watch(request, metadata=self._metadata)
        )
