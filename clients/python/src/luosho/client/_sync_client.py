"""``Client``: the blocking client, and ``Run``, one Execute/Resume stream."""

from __future__ import annotations

import concurrent.futures
import inspect
import threading
from collections.abc import Callable, Generator, Iterator
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

__all__ = ["Client", "Run"]

_StreamCall = Any  # grpc's _MultiThreadedRendezvous: an iterator and a grpc.Call


class Run:
    """One run's event stream: ``for event in run`` and/or ``result = run.result()``.

    The blocking twin of ``AsyncRun``: the RPC starts on first iteration; each
    ``tool.call`` is answered from the client's tool thread pool (calls handed out
    together run concurrently, up to ``max_tool_workers``). ``with run:`` or
    ``run.close()`` cancels the stream.
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
    ) -> None:
        self.session_id = session_id
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
        call = self._call = self._start()
        try:
            with translate_errors():
                try:
                    for response in call:
                        event = response.event
                        self._events.append(event)
                        if event.type == "tool.call" and event.HasField("tool_call"):
                            self._spawn(event)
                        yield event
                except grpc.RpcError:
                    # A failed submission cancels the call: report that failure instead.
                    if self._failure is not None:
                        raise self._failure from None
                    raise
                self._drain()
        finally:
            self._cancel_pending()
        self._result = build_result(
            self.session_id, self._events, empty_means_finished=self._empty_means_finished
        )

    def _spawn(self, event: agent_pb2.Event) -> None:
        future = self._pool().submit(self._answer, event)
        with self._lock:
            self._pending.add(future)
        future.add_done_callback(self._on_answered)

    def _answer(self, event: agent_pb2.Event) -> None:
        outcome = self._toolbox.run_sync(self.session_id, event)
        self._submit(event.session_id or self.session_id, event.tool_call.call.id, outcome)

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
        max_tool_workers: int = 8,
    ) -> None:
        if channel is None and not target:
            raise ValueError("give a target (host:port or unix:/path) or a channel")
        self._owns_channel = channel is None
        self._channel = channel if channel is not None else grpc.insecure_channel(target)
        self._stub = agent_pb2_grpc.AgentServiceStub(self._channel)
        self._metadata = normalize_metadata(metadata)
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
        business_state: Any = UNSET,
        request_id: str = "",
    ) -> Run:
        """Start, continue or resume the run of ``session_id``; see ``AsyncClient.execute``."""
        request = execute_request(
            session_id, input, agent=agent, business_state=business_state, request_id=request_id
        )
        return Run(
            session_id,
            lambda: self._stub.Execute(request, metadata=self._metadata),
            self._submit_outcome,
            ToolBox(tools),
            self._tool_pool,
            empty_means_finished=False,
        )

    def resume(
        self,
        session_id: str,
        *,
        agent: AgentLike | None = None,
        tools: ToolsLike | None = None,
        request_id: str = "",
    ) -> Run:
        """Finish an interrupted run; see ``AsyncClient.resume``."""
        request = resume_request(session_id, agent=agent, request_id=request_id)
        return Run(
            session_id,
            lambda: self._stub.Resume(request, metadata=self._metadata),
            self._submit_outcome,
            ToolBox(tools),
            self._tool_pool,
            empty_means_finished=True,
        )

    def _submit_outcome(self, session_id: str, tool_call_id: str, outcome: ToolOutcome) -> str:
        request = agent_pb2.SubmitToolResultRequest(
            session_id=session_id,
            tool_call_id=tool_call_id,
            result_json=outcome.result_json,
            is_error=outcome.is_error,
        )
        with translate_errors():
            response = self._stub.SubmitToolResult(request, metadata=self._metadata)
        return submit_outcome_name(response.outcome)

    def submit_tool_result(
        self, session_id: str, tool_call_id: str, result: Any, *, is_error: bool = False
    ) -> str:
        """Answer a tool call by hand; "accepted" or "duplicate"."""
        return self._submit_outcome(session_id, tool_call_id, ToolOutcome(dumps(result), is_error))

    def cancel(self, session_id: str) -> bool:
        """Abort the session's running run; False when none was running in the daemon."""
        with translate_errors():
            response = self._stub.Cancel(
                agent_pb2.CancelRequest(session_id=session_id), metadata=self._metadata
            )
        return bool(response.cancelled)

    def get_session(self, session_id: str) -> agent_pb2.Checkpoint:
        """The session's latest checkpoint, as the proto (see ``message_to_dict``)."""
        with translate_errors():
            response = self._stub.GetSession(
                agent_pb2.GetSessionRequest(session_id=session_id), metadata=self._metadata
            )
        return response.checkpoint

    def list_sessions(
        self, status: StatusLike = None, *, page_size: int = 100
    ) -> Iterator[agent_pb2.SessionSummary]:
        """Every session (optionally of one status), following the pages as it goes."""
        token = ""
        while True:
            request = list_sessions_request(status, page_size, token)
            with translate_errors():
                response = self._stub.ListSessions(request, metadata=self._metadata)
            yield from response.sessions
            token = response.next_page_token
            if not token:
                return

    def delete_session(self, session_id: str, *, keep_history: bool = False) -> bool:
        """Delete the session's checkpoint; False when it had none."""
        with translate_errors():
            response = self._stub.DeleteSession(
                agent_pb2.DeleteSessionRequest(session_id=session_id, keep_history=keep_history),
                metadata=self._metadata,
            )
        return bool(response.deleted)
