"""``luosho.v1.AgentService``: requests checked, handed to the engine, events streamed back.

A run belongs to the daemon, not to the RPC: the :class:`~.runner.Runner` starts it as a
task of its own and streams its events (runner.py, which the input queue uses too). When
the caller's stream goes away the run is *interrupted* (it stops at the next boundary, a
model call in flight is finished and checkpointed) and the session stays busy until it has
stopped.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, cast

import grpc

from luosho.v1 import agent_pb2 as pb
from luosho.v1 import agent_pb2_grpc as pb_grpc

from ..domain import Lease, Role
from ..engine import (
    RECONCILE_NOT_STARTED,
    RECONCILE_UNKNOWN,
    RESUME,
    Engine,
    ForkPatch,
    ResolveRequest,
    RunObserver,
    RunRequest,
    ToolOutcome,
    compare,
    fork,
    locate,
    wait_first,
)
from ..errors import (
    ApprovalNotFound,
    CheckpointNotFound,
    EventsOutOfRange,
    InvalidArgument,
    ReconcileNotAsked,
    ShuttingDown,
    ToolCallNotFound,
    ToolCallNotPending,
)
from ..store import Store
from . import audit, convert, mcp_convert, stored_events
from .hub import END, SHUTDOWN_MARK, EventHub
from .peers import Peers, forwarded, held_elsewhere, unreachable
from .queueing import InputQueue, check_if_busy, run_request
from .retention import Retention
from .runner import Runner
from .runs import ActiveRun, Delivery, RunRegistry
from .schedules import Scheduler
from .status import streaming, unary
from .validation import (
    check_agent,
    check_json,
    check_messages,
    check_page_size,
    check_request_id,
    check_session_id,
    check_size,
    check_tool_result_patch,
    decode_offset,
    encode_offset,
)

log = logging.getLogger("luoshod.server")

DEFAULT_MAX_PAYLOAD_BYTES = 4 * 1024 * 1024
WATCH_PAGE = 500
#: How often a ``Watch`` following a session no run of this daemon drives looks whether
#: another daemon has taken it up (R89), and how long it waits before looking again at a
#: holder it could not follow.
WATCH_LOOK_S = 1.0


@dataclass(frozen=True, slots=True)
class Limits:
    max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES


def _read(saved: asyncio.Future[None]) -> None:
    if not saved.cancelled():
        saved.exception()


async def _durable(run: ActiveRun, saved: asyncio.Future[None], sid: str, call_id: str) -> None:
    """R54: return once the result is saved with the checkpoint; raise the save's error,
    or ``ToolCallNotPending`` when the run stopped before it recorded the result (the call
    then has no result and runs again on resume, R24). One future waited on, no task of
    its own: the run cancels ``saved`` when it ends without settling it."""
    saved.add_done_callback(_read)  # its exception read, even if we go
    if not saved.done():
        run.hold_ack(saved)
        await wait_first(saved)
    if not saved.cancelled():
        saved.result()
        return
    raise ToolCallNotPending(
        f"the run of session {sid!r} stopped before the result of tool call {call_id!r} was "
        "saved; it was not recorded: resume the session and the call runs again",
        session_id=sid,
        tool_call_id=call_id,
    )


def _outcome(request: pb.SubmitToolResultRequest, reconcile: str, no_result: bool) -> ToolOutcome:
    """The outcome a ``SubmitToolResult`` hands to a run; ``no_result``: a NOT_STARTED or
    UNKNOWN reconcile answer (R77), which carries none."""
    return ToolOutcome(
        request.result_json if not no_result else "null",
        request.is_error and not no_result,
        asyncio.get_running_loop().create_future(),
        reconcile,
        [],
    )


async def _answer(
    run: ActiveRun, delivered: Delivery, outcome: ToolOutcome, sid: str, call_id: str
) -> pb.SubmitToolResultResponse:
    """``ACCEPTED`` once the delivered result is durable (R54); ``DUPLICATE`` at once."""
    if delivered is not Delivery.ACCEPTED:
        return pb.SubmitToolResultResponse(outcome=pb.SUBMIT_OUTCOME_DUPLICATE)
    assert outcome.saved is not None and outcome.attempt is not None
    await _durable(run, outcome.saved, sid, call_id)
    attempt = outcome.attempt
    return pb.SubmitToolResultResponse(
        outcome=pb.SUBMIT_OUTCOME_ACCEPTED, attempt=attempt[0] if attempt else 0
    )


class AgentService(pb_grpc.AgentServiceServicer):
    def __init__(
        self,
        engine: Engine,
        store: Store,
        runs: RunRegistry,
        limits: Limits,
        hub: EventHub,
        observer: RunObserver | None = None,
        *,
        log_contents: bool = False,
    ) -> None:
        self.engine = engine
        self.store = store
        self.runs = runs
        self.limits = limits
        self.hub = hub
        # An event recorded outside a run (a resume refused for drift) reaches watchers too.
        engine.recorded = lambda event, wire: hub.publish(
            event.session_id, stored_events.wire_of(event, wire)
        )
        #: Starts runs and streams their events; its ``notifier`` (webhooks) is set by the
        #: daemon when configured.
        self.runner = Runner(engine, store, runs, hub, observer, log_contents=log_contents)
        #: Inputs queued on busy sessions (``ExecuteRequest.if_busy``, R68, R69): each
        #: run's end gives the session's queue its turn.
        self.inputs = InputQueue(self.runner)
        self.runner.after_run = self.inputs.kick
        #: Schedules (R87): the RPCs below and the loop that fires them (started by the
        #: daemon, which sets its settings).
        self.schedules = Scheduler(self.inputs)
        #: Retention (set by the daemon): told of a session's own retention.
        self.retention: Retention | None = None
        #: The other daemons sharing the store (set by the daemon): a request for a
        #: session one of them holds is forwarded there (R89).
        self.peers: Peers | None = None

    # -- forwarding to the session's holder (R89) -------------------------------------------

    def _forwards(self, context: grpc.aio.ServicerContext) -> bool:
        """Whether a request for a session another daemon holds goes there from here:
        peers known, and the call not forwarded to this daemon already."""
        return self.peers is not None and not forwarded(context)

    async def _holder(self, sid: str, context: grpc.aio.ServicerContext) -> Lease | None:
        """The lease of the daemon to forward a request for ``sid`` to, or ``None`` to
        answer here: no peers, a call forwarded already, or nobody else holds ``sid``."""
        if self.peers is None:
            return None
        if forwarded(context):
            self.peers.check_arrival(context, sid)
            return None
        return await self.peers.holder(sid)

    async def _forward(
        self, lease: Lease, method: str, request: Any, context: grpc.aio.ServicerContext
    ) -> Any:
        """The holder's answer to the unary ``method``; its error passed on as it is.
        ``None`` when the holder was not reached and its lease has ended since: the caller
        answers here. Raises ``HolderUnreachable`` while the lease is live."""
        assert self.peers is not None
        call = getattr(self.peers.stub(lease.address), method)
        try:
            return await call(
                request,
                metadata=self.peers.metadata(context, lease),
                timeout=self.peers.timeout(context),
            )
        except grpc.aio.AioRpcError as e:
            if not unreachable(e):
                await self.peers.pass_on(context, e)
            if await self.peers.holder(lease.session_id) != lease:
                return None
            raise await self.peers.refused(lease, e) from None

    async def _forward_stream(
        self,
        lease: Lease,
        method: str,
        request: Any,
        context: grpc.aio.ServicerContext,
        answered_here: list[bool],
    ) -> AsyncIterator[Any]:
        """The holder's stream of the streaming ``method``, its error passed on as it is.
        Nothing sent and the holder not reached with its lease ended since: sets
        ``answered_here`` and ends, for the caller to answer here."""
        assert self.peers is not None
        sent = False
        call = getattr(self.peers.stub(lease.address), method)(
            request, metadata=self.peers.metadata(context, lease), timeout=context.time_remaining()
        )
        try:
            async for response in call:
                sent = True
                yield response
        except grpc.aio.AioRpcError as e:
            if not unreachable(e):
                await self.peers.pass_on(context, e)
            if not sent and await self.peers.holder(lease.session_id) != lease:
                answered_here.append(True)
                return
            raise await self.peers.refused(lease, e) from None

    # -- streams ----------------------------------------------------------------------------

    @streaming
    async def Execute(
        self, request: pb.ExecuteRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.ExecuteResponse]:
        check_size(request, self.limits.max_payload_bytes)
        req = run_request(request)
        if req.retention_s is not None and self.retention is not None:
            await self.retention.note(req.session_id, req.retention_s)
        if check_if_busy(request.if_busy) != pb.IF_BUSY_REJECT:
            async for event in self.inputs.execute(request, req, context):
                yield pb.ExecuteResponse(event=event)
            return
        async for event in self.runner.stream(req.session_id, self.engine.run, req, context):
            yield pb.ExecuteResponse(event=event)

    @streaming
    async def Resume(
        self, request: pb.ResumeRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.ResumeResponse]:
        check_size(request, self.limits.max_payload_bytes)
        req = RunRequest(
            session_id=check_session_id(request.session_id),
            agent=check_agent(request.agent) if request.HasField("agent") else None,
            request_id=check_request_id(request.request_id),
            resume_only=True,
            wake=RESUME if request.wake else "",  # R86: wakes a sleeping session now
        )
        async for event in self.runner.stream(req.session_id, self.engine.run, req, context):
            yield pb.ResumeResponse(event=event)

    @streaming
    async def Resolve(
        self, request: pb.ResolveRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.ResolveResponse]:
        check_size(request, self.limits.max_payload_bytes)
        if not request.approval_id:
            raise InvalidArgument("approval_id is required", reason="INVALID_APPROVAL_ID")
        req = ResolveRequest(
            approval_id=request.approval_id,
            approved=request.approved,
            note=request.note,
            agent=check_agent(request.agent) if request.HasField("agent") else None,
            request_id=check_request_id(request.request_id),
            session_id=check_session_id(request.session_id) if request.session_id else "",
            decided_by=audit.caller(context),
            answer=request.answer,
        )
        approval = await self.store.get_approval(req.approval_id)
        sid = approval.session_id if approval is not None else req.session_id
        if sid and (lease := await self._holder(sid, context)) is not None:
            here: list[bool] = []
            async for response in self._forward_stream(lease, "Resolve", request, context, here):
                yield response
            if not here:
                return
        if approval is None and req.request_id and req.session_id:
            # Perhaps a retry whose first attempt claimed the approval (R74): the engine
            # resumes or replays that run, or answers APPROVAL_NOT_FOUND.
            async for event in self.runner.stream(
                req.session_id, self.engine.resolve, req, context
            ):
                yield pb.ResolveResponse(event=event)
            return
        if approval is None:
            raise ApprovalNotFound(
                f"approval {req.approval_id!r} is unknown or already resolved",
                approval_id=req.approval_id,
            )
        with self.runs.resolving(req.approval_id):
            audit.record(
                "answer" if req.answer else "approve" if req.approved else "reject",
                context,
                approval=req.approval_id,
                session=approval.session_id,
            )
            detach = request.detach_on_tool_call
            async for event in self.runner.stream(
                approval.session_id, self.engine.resolve, req, context, detach=detach
            ):
                yield pb.ResolveResponse(event=event)

    # -- unary ------------------------------------------------------------------------------

    @unary
    async def SubmitToolResult(
        self, request: pb.SubmitToolResultRequest, context: grpc.aio.ServicerContext
    ) -> pb.SubmitToolResultResponse:
        check_size(request, self.limits.max_payload_bytes)
        sid = check_session_id(request.session_id)
        if not request.tool_call_id:
            raise InvalidArgument("tool_call_id is required", reason="INVALID_TOOL_CALL_ID")
        reconcile = convert.RECONCILE_FROM_PB.get(request.reconcile)
        if reconcile is None:
            raise InvalidArgument(
                f"unknown reconcile outcome {request.reconcile}",
                reason="INVALID_RECONCILE_OUTCOME",
            )
        no_result = reconcile in (RECONCILE_NOT_STARTED, RECONCILE_UNKNOWN)
        if not no_result:  # NOT_STARTED and UNKNOWN carry no result (R77)
            check_json(request.result_json, "result_json")
        run = self.runs.get(sid)
        if run is not None:
            outcome = _outcome(request, reconcile, no_result)
            delivered = run.deliver(request.tool_call_id, outcome)
            if delivered is not None and delivered is not Delivery.NOT_ASKED:
                return await _answer(run, delivered, outcome, sid, request.tool_call_id)
            if delivered is Delivery.NOT_ASKED:
                raise ReconcileNotAsked(
                    f"tool call {request.tool_call_id!r} of session {sid!r} is not being "
                    "reconciled (no tool.reconcile of it waits for an answer): submit its "
                    "result instead",
                    session_id=sid,
                    tool_call_id=request.tool_call_id,
                )
        if run is None and (lease := await self._holder(sid, context)) is not None:
            answer = await self._forward(lease, "SubmitToolResult", request, context)
            if answer is not None:
                return cast(pb.SubmitToolResultResponse, answer)
        return await self._submit_without_waiter(sid, request, reconcile, context)

    async def _submit_without_waiter(
        self,
        sid: str,
        request: pb.SubmitToolResultRequest,
        reconcile: str,
        context: grpc.aio.ServicerContext,
    ) -> pb.SubmitToolResultResponse:
        """No run waits for this call: tell a duplicate (R26) from a call nobody awaits,
        hand a result to the run that resumes it but has not handed it out yet, and
        forward it to a daemon that started driving the session since it was looked for."""
        call_id = request.tool_call_id
        cp = await self.store.load(sid)
        run = self.runs.get(sid)
        # The lead's call, or a sub-agent's by its qualified id (R58), finished or not.
        found = locate(cp, call_id) if cp else None
        messages, own = (found[1], found[2]) if found else ([], call_id)
        if any(m.role is Role.TOOL and m.tool_call_id == own for m in messages) or (
            cp is not None and call_id in cp.early_results  # saved ahead of its turn (R76)
        ):
            return pb.SubmitToolResultResponse(outcome=pb.SUBMIT_OUTCOME_DUPLICATE)
        if any(c.id == own for m in messages for c in m.tool_calls):
            mcp_convert.refuse_daemon_call(cp, sid, call_id)  # R71: not the app's to answer
            if run is not None and reconcile not in (RECONCILE_NOT_STARTED, RECONCILE_UNKNOWN):
                # The run resumes this call and has not handed it out yet: a client that
                # answers the ``tool.call`` replayed from the run before it (R74) is kept
                # for it, rather than told to resume a session that is resuming.
                outcome = _outcome(request, reconcile, False)
                delivered = run.deliver(call_id, outcome) or run.park(call_id, outcome)
                return await _answer(run, delivered, outcome, sid, call_id)
            holder = await self._driven_elsewhere(sid) if run is None else None
            if holder is not None and holder.address and self._forwards(context):
                # Another daemon took the session after this call looked for its holder
                # (R89: a run started or resumed there meanwhile): forwarded there, as it
                # would have been a moment later.
                answer = await self._forward(holder, "SubmitToolResult", request, context)
                if answer is not None:
                    return cast(pb.SubmitToolResultResponse, answer)
                holder = None  # not reached, and its lease has ended since
            if holder is not None:
                # A run takes results only through the daemon that drives it (its waiter
                # lives in that process): say which one (``holder``, as SESSION_BUSY
                # does), rather than "resume it".
                raise ToolCallNotPending(
                    f"tool call {call_id!r} of session {sid!r} waits in a run that daemon "
                    f"{holder.owner!r} drives; submit its result to that daemon",
                    session_id=sid,
                    tool_call_id=call_id,
                    holder=holder.owner,
                    expires_at=convert.timestamp(holder.expires_at).ToJsonString(),
                )
            raise ToolCallNotPending(
                f"tool call {call_id!r} of session {sid!r} has no result and no run is waiting "
                "for it" + ("" if run else "; resume the session to run it again"),
                session_id=sid,
                tool_call_id=call_id,
            )
        raise ToolCallNotFound(
            f"session {sid!r} has no tool call {call_id!r}", session_id=sid, tool_call_id=call_id
        )

    async def _driven_elsewhere(self, sid: str) -> Lease | None:
        """The live lease another daemon holds on ``sid`` (read only), or ``None``."""
        return await held_elsewhere(self.store, self.engine.leases.owner, sid)

    @unary
    async def Cancel(
        self, request: pb.CancelRequest, context: grpc.aio.ServicerContext
    ) -> pb.CancelResponse:
        sid = check_session_id(request.session_id)
        run = self.runs.get(sid)
        if run is None and (lease := await self._holder(sid, context)) is not None:
            answer = await self._forward(lease, "Cancel", request, context)
            if answer is not None:
                return cast(pb.CancelResponse, answer)
        if run is None:
            return pb.CancelResponse(cancelled=False)
        run.control.abort()
        return pb.CancelResponse(cancelled=True)

    @unary
    async def GetSession(
        self, request: pb.GetSessionRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetSessionResponse:
        sid = check_session_id(request.session_id)
        cp, queue = await self.inputs.session(sid)  # one moment's (R69)
        if cp is None and not queue:
            raise CheckpointNotFound(f"session {sid!r} has no checkpoint", session_id=sid)
        failure = self.engine.providers.guard.last_failure(sid)
        return pb.GetSessionResponse(
            checkpoint=convert.checkpoint_pb(cp) if cp is not None else None,
            queue=queue,
            last_model_failure=convert.model_failure_pb(failure) if failure is not None else None,
            usage_by_model={
                model: convert.usage_pb(u)
                for model, u in (cp.usage_by_model() if cp is not None else {}).items()
            },
        )

    @unary
    async def DequeueInput(
        self, request: pb.DequeueInputRequest, context: grpc.aio.ServicerContext
    ) -> pb.DequeueInputResponse:
        sid = check_session_id(request.session_id)
        rid = check_request_id(request.request_id)
        if rid and (lease := await self._holder(sid, context)) is not None:
            answer = await self._forward(lease, "DequeueInput", request, context)
            if answer is not None:
                return cast(pb.DequeueInputResponse, answer)
        removed = await self.inputs.dequeue(sid, rid)
        if removed:
            audit.record("dequeue", context, session=sid, request_id=request.request_id)
        return pb.DequeueInputResponse(removed=removed)

    # -- schedules (R87) ---------------------------------------------------------------

    @unary
    async def CreateSchedule(
        self, request: pb.CreateScheduleRequest, context: grpc.aio.ServicerContext
    ) -> pb.CreateScheduleResponse:
        check_size(request, self.limits.max_payload_bytes)
        made = await self.schedules.create(request.spec)
        audit.record("create_schedule", context, schedule=made.spec.name)
        return pb.CreateScheduleResponse(schedule=made)

    @unary
    async def ListSchedules(
        self, request: pb.ListSchedulesRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListSchedulesResponse:
        return pb.ListSchedulesResponse(schedules=await self.schedules.every())

    @unary
    async def PauseSchedule(
        self, request: pb.PauseScheduleRequest, context: grpc.aio.ServicerContext
    ) -> pb.PauseScheduleResponse:
        paused = await self.schedules.pause(request.name)
        audit.record("pause_schedule", context, schedule=request.name)
        return pb.PauseScheduleResponse(schedule=paused)

    @unary
    async def ResumeSchedule(
        self, request: pb.ResumeScheduleRequest, context: grpc.aio.ServicerContext
    ) -> pb.ResumeScheduleResponse:
        resumed = await self.schedules.resume(request.name)
        audit.record("resume_schedule", context, schedule=request.name)
        return pb.ResumeScheduleResponse(schedule=resumed)

    @unary
    async def DeleteSchedule(
        self, request: pb.DeleteScheduleRequest, context: grpc.aio.ServicerContext
    ) -> pb.DeleteScheduleResponse:
        await self.schedules.delete(request.name)
        audit.record("delete_schedule", context, schedule=request.name)
        return pb.DeleteScheduleResponse()

    @unary
    async def TriggerSchedule(
        self, request: pb.TriggerScheduleRequest, context: grpc.aio.ServicerContext
    ) -> pb.TriggerScheduleResponse:
        fire = await self.schedules.trigger(request.name)
        audit.record("trigger_schedule", context, schedule=request.name)
        return pb.TriggerScheduleResponse(session_id=fire.session_id, request_id=fire.request_id)

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
        # A prefix of a valid id is a valid id: the same check, naming its own field.
        prefix = request.session_id_prefix and check_session_id(
            request.session_id_prefix, "session_id_prefix"
        )
        if request.newest_first and request.costliest_first:
            raise InvalidArgument(
                "newest_first and costliest_first are two orders: ask for one",
                reason="INVALID_REQUEST",
            )
        total: int | None = None
        try:
            if request.include_total_size:  # one read of the sessions for both
                page, token, total = await self.store.list_sessions_counted(
                    status=status,
                    page_size=page_size,
                    page_token=request.page_token,
                    prefix=prefix,
                    newest_first=request.newest_first,
                    costliest_first=request.costliest_first,
                )
            else:
                page, token = await self.store.list_sessions(
                    status=status,
                    page_size=page_size,
                    page_token=request.page_token,
                    prefix=prefix,
                    newest_first=request.newest_first,
                    costliest_first=request.costliest_first,
                )
        except ValueError as e:
            raise InvalidArgument(str(e), reason="INVALID_PAGE_TOKEN") from None
        return pb.ListSessionsResponse(
            sessions=[convert.summary_pb(s) for s in page],
            next_page_token=token,
            total_size=total,
        )

    @unary
    async def DeleteSession(
        self, request: pb.DeleteSessionRequest, context: grpc.aio.ServicerContext
    ) -> pb.DeleteSessionResponse:
        sid = check_session_id(request.session_id)
        claim = await self.runs.begin(sid)  # SESSION_BUSY while a run holds it
        try:
            # Under the session's lease: SESSION_BUSY while another daemon runs it.
            deleted = await self.engine.delete(sid, keep_history=request.keep_history)
        finally:
            self.runs.end(claim)
        if deleted:
            audit.record("delete", context, session=sid, keep_history=request.keep_history)
        return pb.DeleteSessionResponse(deleted=deleted)

    @unary
    async def Compact(
        self, request: pb.CompactRequest, context: grpc.aio.ServicerContext
    ) -> pb.CompactResponse:
        """R85: compact a session by hand; SESSION_BUSY while a run holds it (here or, by
        its lease, on another daemon)."""
        sid = check_session_id(request.session_id)
        strategy = (
            convert.COMPACTION_STRATEGY_FROM_PB[request.strategy]
            if request.strategy != pb.COMPACTION_STRATEGY_UNSPECIFIED
            else None
        )
        claim = await self.runs.begin(sid)  # SESSION_BUSY while a run holds it
        try:
            cp = await self.engine.compact(sid, strategy)
        finally:
            self.runs.end(claim)
        if cp is None:
            loaded = await self.store.load(sid)
            return pb.CompactResponse(
                compacted=False, checkpoint=convert.checkpoint_pb(loaded) if loaded else None
            )
        audit.record("compact", context, session=sid)
        return pb.CompactResponse(compacted=True, checkpoint=convert.checkpoint_pb(cp))

    @unary
    async def ListApprovals(
        self, request: pb.ListApprovalsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListApprovalsResponse:
        sid = check_session_id(request.session_id) if request.session_id else None
        page_size = check_page_size(request.page_size)
        try:
            page, token = await self.store.list_approvals(
                session_id=sid, page_size=page_size, page_token=request.page_token
            )
        except ValueError as e:
            raise InvalidArgument(str(e), reason="INVALID_PAGE_TOKEN") from None
        return pb.ListApprovalsResponse(
            approvals=[convert.approval_pb(a) for a in page], next_page_token=token
        )

    @unary
    async def ListMcpServers(
        self, request: pb.ListMcpServersRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListMcpServersResponse:
        return await mcp_convert.list_servers(self.engine.daemon_tools, request.refresh)

    @unary
    async def History(
        self, request: pb.HistoryRequest, context: grpc.aio.ServicerContext
    ) -> pb.HistoryResponse:
        sid = check_session_id(request.session_id)
        page_size = check_page_size(request.page_size)
        offset = decode_offset(request.page_token)
        entries = await self.store.history(sid, limit=offset + page_size + 1)
        page = entries[offset : offset + page_size]
        more = len(entries) > offset + page_size
        return pb.HistoryResponse(
            entries=[
                convert.history_entry_pb(e, include_checkpoint=request.include_checkpoint)
                for e in page
            ],
            next_page_token=encode_offset(offset + page_size) if more else "",
        )

    @unary
    async def Fork(
        self, request: pb.ForkRequest, context: grpc.aio.ServicerContext
    ) -> pb.ForkResponse:
        check_size(request, self.limits.max_payload_bytes)
        sid = check_session_id(request.session_id)
        new_id = (
            check_session_id(request.new_session_id, "new_session_id")
            if request.new_session_id
            else ""
        )
        p = request.patch
        patch = ForkPatch(
            messages=check_messages(list(p.messages), "patch.messages")
            if p.replace_messages
            else None,
            business_state_json=check_json(p.business_state_json, "patch.business_state_json")
            if p.HasField("business_state_json")
            else None,
            tool_result=check_tool_result_patch(p.tool_result)
            if p.HasField("tool_result")
            else None,
            append_input=p.append_input,
        )
        claim = await self.runs.begin(new_id) if new_id else None  # nobody runs it while it is made
        try:
            forked = await fork(
                self.store,
                sid,
                request.from_step,
                new_session_id=new_id,
                patch=patch,
                clock=self.engine.clock,
            )
        finally:
            if claim is not None:
                self.runs.end(claim)
        audit.record("fork", context, session=sid, step=forked.step, new_session=forked.session_id)
        return pb.ForkResponse(
            session_id=forked.session_id,
            step=forked.step,
            checkpoint=convert.checkpoint_pb(forked.checkpoint),
        )

    @unary
    async def Compare(
        self, request: pb.CompareRequest, context: grpc.aio.ServicerContext
    ) -> pb.CompareResponse:
        loaded = []
        for field in ("session_id_a", "session_id_b"):
            sid = check_session_id(getattr(request, field), field)
            cp = await self.store.load(sid)
            if cp is None:
                raise CheckpointNotFound(f"session {sid!r} has no checkpoint", session_id=sid)
            loaded.append(cp)
        return convert.comparison_pb(compare(*loaded))

    @streaming
    async def Watch(
        self, request: pb.WatchRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.WatchResponse]:
        """Replay what the event log keeps after the cursor, then follow live events until
        the run ends (or forever with ``follow``). A cursor older than the log is refused
        with the oldest kept seq, never silently skipped.

        Live events come from the run of this daemon, or (R89) from the ``Watch`` of the
        daemon holding the session, followed from the cursor reached: each switch starts
        with a replay from the log after the last seq sent, and only events past it are
        sent, so a change of holder neither skips nor repeats one."""
        sid = check_session_id(request.session_id)
        last = request.after_seq
        with self.hub.subscribe(sid) as live:
            # Subscribed first: an event written after the read below still arrives live.
            while True:
                while True:
                    page = await self.store.read_events(sid, after_seq=last, limit=WATCH_PAGE)
                    if last and page.first_kept and last + 1 < page.first_kept:
                        raise EventsOutOfRange(
                            f"events after {last} are no longer kept; the oldest kept is "
                            f"{page.first_kept}",
                            session_id=sid,
                            after_seq=last,
                            oldest_kept_seq=page.first_kept,
                        )
                    for stored in page.events:
                        event = stored_events.decode(stored.data, sid, stored.seq)
                        last = event.seq
                        yield pb.WatchResponse(event=event)
                    if len(page.events) < WATCH_PAGE:
                        break
                lease = None if self.runs.get(sid) else await self._holder(sid, context)
                if lease is not None:
                    assert self.peers is not None
                    ended, before = True, last
                    try:
                        async for resp in self.peers.stub(lease.address).Watch(
                            pb.WatchRequest(session_id=sid, after_seq=last),
                            metadata=self.peers.metadata(context, lease),
                        ):
                            news = resp.event
                            if news.seq == 0 or news.seq > last:
                                last = news.seq or last
                                yield resp
                    except grpc.aio.AioRpcError as e:
                        if not unreachable(e) and e.code() != grpc.StatusCode.UNAVAILABLE:
                            await self.peers.pass_on(context, e)
                        # The holder went away (stopped, killed, shutting down): whoever
                        # takes the session over next is found by the next look.
                        ended = False
                        await asyncio.sleep(WATCH_LOOK_S)
                    if ended and not request.follow:
                        # That run has ended: what it wrote last is sent from the log,
                        # and there is nothing more to wait for.
                        lease = await self._holder(sid, context)
                        if lease is None and self.runs.get(sid) is None:
                            async for resp in self._rest(sid, last):
                                yield resp
                            return
                    if ended and last == before:
                        # The holder had no run to follow (its lease just taken, or
                        # about to be released): look again in a moment, not at once.
                        await asyncio.sleep(WATCH_LOOK_S / 5)
                    continue
                if self.runs.get(sid) is None and not request.follow:
                    return
                moved = False
                while not moved:
                    looking = self._forwards(context)
                    try:
                        news = await asyncio.wait_for(live.get(), WATCH_LOOK_S if looking else None)
                    except TimeoutError:
                        # Nothing here: has another daemon taken the session up, or run it
                        # start to end between two looks? Either way the log has moved: a
                        # run's first events (run.start, step.start) are written before
                        # anything of it is sent live, so one read a look tells both.
                        moved = self.runs.get(sid) is None and bool(
                            (await self.store.read_events(sid, after_seq=last, limit=1)).events
                        )
                        continue
                    if news is SHUTDOWN_MARK:
                        raise ShuttingDown(
                            "the daemon is shutting down; reconnect with your cursor",
                            session_id=sid,
                        )
                    if news is END or news is None:  # END is None: the narrowing needs it said
                        if request.follow:
                            continue
                        return
                    if news.seq == 0:  # text.delta: progress only, never replayed
                        yield pb.WatchResponse(event=news)
                    elif news.seq > last:  # else already replayed
                        last = news.seq
                        yield pb.WatchResponse(event=news)

    async def _rest(self, sid: str, last: int) -> AsyncIterator[pb.WatchResponse]:
        """The events of the log after ``last`` (a run's last ones, written as it ended)."""
        while True:
            page = await self.store.read_events(sid, after_seq=last, limit=WATCH_PAGE)
            for stored in page.events:
                event = stored_events.decode(stored.data, sid, stored.seq)
                last = event.seq
                yield pb.WatchResponse(event=event)
            if len(page.events) < WATCH_PAGE:
                return
