"""``luosho.v1.AgentService``: requests checked, handed to the engine, events streamed back.

A run belongs to the daemon, not to the RPC: it runs as its own task. When the caller's
stream goes away the run is *interrupted* (it stops at the next boundary, a model call in
flight is finished and checkpointed) and the session stays busy until it has stopped.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc
from luosho.v1 import agent_pb2 as pb
from luosho.v1 import agent_pb2_grpc as pb_grpc

from ..domain import Role
from ..engine.events import Event
from ..engine.run import Engine, RunInterrupted, RunRequest, ToolOutcome
from ..errors import (
    CheckpointNotFound,
    InvalidArgument,
    ShuttingDown,
    ToolCallNotFound,
    ToolCallNotPending,
)
from ..store import Store
from . import convert
from .runs import CLIENT_GONE, SHUTDOWN, ActiveRun, Delivery, RunRegistry
from .status import streaming, unary
from .validation import (
    check_agent,
    check_json,
    check_messages,
    check_page_size,
    check_session_id,
    check_size,
)

log = logging.getLogger("luoshod.server")

DEFAULT_MAX_PAYLOAD_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES


class _QueueSink:
    """Events from the run task to the RPC handler; ``None`` marks the end."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Event | None] = asyncio.Queue()

    async def emit(self, event: Event) -> None:
        self.queue.put_nowait(event)


class AgentService(pb_grpc.AgentServiceServicer):
    def __init__(self, engine: Engine, store: Store, runs: RunRegistry, limits: Limits) -> None:
        self.engine = engine
        self.store = store
        self.runs = runs
        self.limits = limits

    # -- streams ----------------------------------------------------------------------------

    @streaming
    async def Execute(
        self, request: pb.ExecuteRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.ExecuteResponse]:
        check_size(request, self.limits.max_payload_bytes)
        req = RunRequest(
            session_id=check_session_id(request.session_id),
            input=check_messages(list(request.input)),
            agent=check_agent(request.agent) if request.HasField("agent") else None,
            business_state_json=check_json(request.business_state_json, "business_state_json")
            if request.HasField("business_state_json")
            else None,
            request_id=request.request_id,
        )
        async for event in self._run(req, context):
            yield pb.ExecuteResponse(event=event)

    @streaming
    async def Resume(
        self, request: pb.ResumeRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.ResumeResponse]:
        check_size(request, self.limits.max_payload_bytes)
        req = RunRequest(
            session_id=check_session_id(request.session_id),
            agent=check_agent(request.agent) if request.HasField("agent") else None,
            request_id=request.request_id,
            resume_only=True,
        )
        async for event in self._run(req, context):
            yield pb.ResumeResponse(event=event)

    async def _run(
        self, req: RunRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.Event]:
        run = self.runs.begin(req.session_id)
        sink = _QueueSink()
        task = asyncio.create_task(self.engine.run(req, sink, run, run.control))

        def finished(t: asyncio.Task[object]) -> None:
            self.runs.end(run)
            sink.queue.put_nowait(None)
            if not t.cancelled() and (e := t.exception()) is not None and not isinstance(e, RunInterrupted):
                # Also reported to the caller when it is still there; logged for when it is not.
                log.info("run ended with error session=%s: %s", req.session_id, e)

        task.add_done_callback(finished)
        # The caller going away (cancel, disconnect, deadline) ends the RPC; the run then
        # stops at its next boundary. grpc may cancel the handler outside this generator,
        # so the RPC's own completion is what we watch, not a CancelledError here.
        context.add_done_callback(lambda _: run.done.is_set() or run.control.interrupt(CLIENT_GONE))
        while (event := await sink.queue.get()) is not None:
            yield convert.event_pb(event)
        try:
            task.result()
        except RunInterrupted as e:
            if e.reason == SHUTDOWN:
                raise ShuttingDown(
                    "the daemon is shutting down; the run was checkpointed and can be resumed",
                    session_id=req.session_id,
                ) from None

    # -- unary ------------------------------------------------------------------------------

    @unary
    async def SubmitToolResult(
        self, request: pb.SubmitToolResultRequest, context: grpc.aio.ServicerContext
    ) -> pb.SubmitToolResultResponse:
        check_size(request, self.limits.max_payload_bytes)
        sid = check_session_id(request.session_id)
        if not request.tool_call_id:
            raise InvalidArgument("tool_call_id is required", reason="INVALID_TOOL_CALL_ID")
        check_json(request.result_json, "result_json")
        run = self.runs.get(sid)
        if run is not None:
            delivered = run.deliver(request.tool_call_id, ToolOutcome(request.result_json, request.is_error))
            if delivered is Delivery.ACCEPTED:
                return pb.SubmitToolResultResponse(outcome=pb.SUBMIT_OUTCOME_ACCEPTED)
            if delivered is Delivery.DUPLICATE:
                return pb.SubmitToolResultResponse(outcome=pb.SUBMIT_OUTCOME_DUPLICATE)
        return await self._submit_without_waiter(sid, request.tool_call_id, run)

    async def _submit_without_waiter(
        self, sid: str, call_id: str, run: ActiveRun | None
    ) -> pb.SubmitToolResultResponse:
        """No run waits for this call: tell a duplicate (R26) from a call nobody awaits."""
        cp = await self.store.load(sid)
        messages = cp.messages if cp else []
        if any(m.role is Role.TOOL and m.tool_call_id == call_id for m in messages):
            return pb.SubmitToolResultResponse(outcome=pb.SUBMIT_OUTCOME_DUPLICATE)
        if any(c.id == call_id for m in messages for c in m.tool_calls):
            raise ToolCallNotPending(
                f"tool call {call_id!r} of session {sid!r} has no result and no run is waiting for it"
                + ("" if run else "; resume the session to run it again"),
                session_id=sid,
                tool_call_id=call_id,
            )
        raise ToolCallNotFound(
            f"session {sid!r} has no tool call {call_id!r}", session_id=sid, tool_call_id=call_id
        )

    @unary
    async def Cancel(self, request: pb.CancelRequest, context: grpc.aio.ServicerContext) -> pb.CancelResponse:
        run = self.runs.get(check_session_id(request.session_id))
        if run is None:
            return pb.CancelResponse(cancelled=False)
        run.control.abort()
        return pb.CancelResponse(cancelled=True)

    @unary
    async def GetSession(
        self, request: pb.GetSessionRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetSessionResponse:
        sid = check_session_id(request.session_id)
        cp = await self.store.load(sid)
        if cp is None:
            raise CheckpointNotFound(f"session {sid!r} has no checkpoint", session_id=sid)
        return pb.GetSessionResponse(checkpoint=convert.checkpoint_pb(cp))

    @unary
    async def ListSessions(
        self, request: pb.ListSessionsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListSessionsResponse:
        page_size = check_page_size(request.page_size)
        if request.status == pb.CHECKPOINT_STATUS_UNSPECIFIED:
            status = None
        elif request.status in convert.STATUS_FROM_PB:
            status = convert.STATUS_FROM_PB[request.status]
        else:
            raise InvalidArgument(f"unknown status {request.status}", reason="INVALID_STATUS")
        try:
            page, token = await self.store.list_sessions(
                status=status, page_size=page_size, page_token=request.page_token
            )
        except ValueError as e:
            raise InvalidArgument(str(e), reason="INVALID_PAGE_TOKEN") from None
        return pb.ListSessionsResponse(
            sessions=[convert.summary_pb(s) for s in page], next_page_token=token
        )

    @unary
    async def DeleteSession(
        self, request: pb.DeleteSessionRequest, context: grpc.aio.ServicerContext
    ) -> pb.DeleteSessionResponse:
        sid = check_session_id(request.session_id)
        claim = self.runs.begin(sid)  # SESSION_BUSY while a run holds it
        try:
            deleted = await self.store.delete(sid, keep_history=request.keep_history)
        finally:
            self.runs.end(claim)
        return pb.DeleteSessionResponse(deleted=deleted)
