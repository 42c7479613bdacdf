"""``AsyncClient``: the asyncio client, and ``AsyncRun``, one Execute/Resume stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator
from types import TracebackType
from typing import Any

import grpc

from luosho.v1 import agent_pb2, agent_pb2_grpc

from ._agent import AgentLike, dumps
from ._errors import translate_errors
from ._messages import InputLike
from ._requests import (
    UNSET,
    MetadataLike,
    StatusLike,
    execute_request,
    list_sessions_request,
    normalize_metadata,
    resume_request,
)
from ._result import RunResult, build_result, submit_outcome_name
from ._tools import ToolBox, ToolOutcome, ToolsLike

__all__ = ["AsyncClient", "AsyncRun"]

_StreamCall = Any  # grpc.aio.UnaryStreamCall of ExecuteResponse or ResumeResponse


class AsyncRun:
    """One run's event stream: ``async for event in run`` and/or ``result = await run``.

    The RPC starts on first iteration (or await). While the stream is read, every
    ``tool.call`` event is answered: its tool runs in a task of its own (so calls handed
    out together run concurrently) and the result goes back with SubmitToolResult. Events
    are yielded as ``agent_pb2.Event``, every type passed through, known or not.

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
    ) -> None:
        self.session_id = session_id
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
        call = self._call = self._start()
        try:
            with translate_errors():
                try:
                    async for response in call:
                        event = response.event
                        self._events.append(event)
                        if event.type == "tool.call" and event.HasField("tool_call"):
                            self._spawn(event)
                        yield event
                except asyncio.CancelledError:
                    # A failed submission cancels the call; anything else is a real cancel.
                    task = asyncio.current_task()
                    if self._failure is None or (task is not None and task.cancelling()):
                        raise
                if self._failure is not None:
                    raise self._failure
                await self._drain()
        finally:
            for task in list(self._tasks):
                task.cancel()
        self._result = build_result(
            self.session_id, self._events, empty_means_finished=self._empty_means_finished
        )

    def _spawn(self, event: agent_pb2.Event) -> None:
        task = asyncio.create_task(self._answer(event))
        self._tasks.add(task)
        task.add_done_callback(self._on_answered)

    async def _answer(self, event: agent_pb2.Event) -> None:
        outcome = await self._toolbox.run_async(self.session_id, event)
        await self._submit(event.session_id or self.session_id, event.tool_call.call.id, outcome)

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


class AsyncClient:
    """The asyncio client of a luoshod daemon.

    ``target`` is ``"host:port"`` or ``"unix:/path/to.sock"``; pass ``channel`` instead to
    use a channel of your own (TLS, options, interceptors), which ``aclose`` leaves open.
    ``metadata`` is sent with every call (e.g. ``{"authorization": "Bearer …"}``).
    """

    def __init__(
        self,
        target: str | None = None,
        *,
        channel: grpc.aio.Channel | None = None,
        metadata: MetadataLike | None = None,
    ) -> None:
        if channel is None and not target:
            raise ValueError("give a target (host:port or unix:/path) or a channel")
        self._owns_channel = channel is None
        self._channel = channel if channel is not None else grpc.aio.insecure_channel(target)
        self._stub = agent_pb2_grpc.AgentServiceStub(self._channel)
        self._metadata = normalize_metadata(metadata)

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
        business_state: Any = UNSET,
        request_id: str = "",
    ) -> AsyncRun:
        """Start, continue or resume the run of ``session_id`` (the Execute RPC).

        ``input``: a str (one user message), a message dict, a proto Message, or a list of
        those. ``tools`` maps tool names to the callables that answer ``tool.call``.
        ``business_state``: any JSON value; left out, the stored one is kept; None is JSON
        null. Raises (while iterating or awaiting) a ``LuoshoError`` subclass on failure.
        """
        request = execute_request(
            session_id, input, agent=agent, business_state=business_state, request_id=request_id
        )
        return AsyncRun(
            session_id,
            lambda: self._stub.Execute(request, metadata=self._metadata),
            self._submit_outcome,
            ToolBox(tools),
            empty_means_finished=False,
        )

    def resume(
        self,
        session_id: str,
        *,
        agent: AgentLike | None = None,
        tools: ToolsLike | None = None,
        request_id: str = "",
    ) -> AsyncRun:
        """Finish an interrupted run (the Resume RPC); no agent means the saved one.

        A session with nothing to run gives ``RunResult(ran=False, status="finished")``.
        """
        request = resume_request(session_id, agent=agent, request_id=request_id)
        return AsyncRun(
            session_id,
            lambda: self._stub.Resume(request, metadata=self._metadata),
            self._submit_outcome,
            ToolBox(tools),
            empty_means_finished=True,
        )

    async def _submit_outcome(
        self, session_id: str, tool_call_id: str, outcome: ToolOutcome
    ) -> str:
        request = agent_pb2.SubmitToolResultRequest(
            session_id=session_id,
            tool_call_id=tool_call_id,
            result_json=outcome.result_json,
            is_error=outcome.is_error,
        )
        with translate_errors():
            response = await self._stub.SubmitToolResult(request, metadata=self._metadata)
        return submit_outcome_name(response.outcome)

    async def submit_tool_result(
        self, session_id: str, tool_call_id: str, result: Any, *, is_error: bool = False
    ) -> str:
        """Answer a tool call by hand; ``result`` is JSON-encoded.

        Returns "accepted", or "duplicate" when the call already had a result.
        """
        return await self._submit_outcome(
            session_id, tool_call_id, ToolOutcome(dumps(result), is_error)
        )

    async def cancel(self, session_id: str) -> bool:
        """Abort the session's running run; False when none was running in the daemon."""
        with translate_errors():
            response = await self._stub.Cancel(
                agent_pb2.CancelRequest(session_id=session_id), metadata=self._metadata
            )
        return bool(response.cancelled)

    async def get_session(self, session_id: str) -> agent_pb2.Checkpoint:
        """The session's latest checkpoint, as the proto (see ``message_to_dict``)."""
        with translate_errors():
            response = await self._stub.GetSession(
                agent_pb2.GetSessionRequest(session_id=session_id), metadata=self._metadata
            )
        return response.checkpoint

    async def list_sessions(
        self, status: StatusLike = None, *, page_size: int = 100
    ) -> AsyncIterator[agent_pb2.SessionSummary]:
        """Every session (optionally of one status), following the pages as it goes."""
        token = ""
        while True:
            request = list_sessions_request(status, page_size, token)
            with translate_errors():
                response = await self._stub.ListSessions(request, metadata=self._metadata)
            for summary in response.sessions:
                yield summary
            token = response.next_page_token
            if not token:
                return

    async def delete_session(self, session_id: str, *, keep_history: bool = False) -> bool:
        """Delete the session's checkpoint; False when it had none."""
        with translate_errors():
            response = await self._stub.DeleteSession(
                agent_pb2.DeleteSessionRequest(session_id=session_id, keep_history=keep_history),
                metadata=self._metadata,
            )
        return bool(response.deleted)
