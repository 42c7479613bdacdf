"""The agent loop (SEMANTICS.md R1–R26): model call → tool calls → results → next call,
checkpointed at every step through the store it is handed.

The engine imports neither gRPC nor any driver. The caller gives it:

- a :class:`Sink` for events,
- a :class:`ToolPort` through which client-executed tools are awaited,
- a :class:`RunControl` through which the run is aborted (``Cancel``, R3) or interrupted
  (client gone, daemon shutting down: the run stops at the next boundary, a model call in
  flight is finished and checkpointed first, R6).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from ..domain import (
    AgentSpec,
    Checkpoint,
    DriftPolicy,
    FinishReason,
    Message,
    Role,
    Status,
    ToolCall,
    Usage,
)
from ..errors import (
    AgentDrift,
    CheckpointNotFound,
    InvalidArgument,
    ResumeToolMissing,
    SessionAwaitingApproval,
    Unsupported,
)
from ..providers import ModelRequest, ModelResponse, ProviderRegistry
from ..store import Store
from . import events as ev
from .events import Event
from .fingerprint import Drift, drift, fingerprint
from .merge import merge_input
from .tools import check_call, error_result

log = logging.getLogger("luoshod.engine")

DEFAULT_TOOL_TIMEOUT_S = 300.0
CANCELLED_ERROR = "cancelled before it ran because the run was aborted"


class Sink(Protocol):
    async def emit(self, event: Event) -> None: ...


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    result_json: str
    is_error: bool = False


class ToolPort(Protocol):
    """Where client-executed tool calls are awaited (the service layer's bridge)."""

    def expect(self, call_id: str) -> asyncio.Future[ToolOutcome]:
        """Register interest in ``call_id``'s result before the tool.call event goes out."""

    def forget(self, call_id: str) -> None:
        """The run no longer waits for ``call_id``."""


class RunInterrupted(Exception):
    """The run stopped at a boundary without finishing; its checkpoint is intact (R6)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class RunControl:
    """Abort (R3) or interrupt a run from outside. Both are sticky."""

    def __init__(self) -> None:
        self.interrupted: str | None = None
        self._abort = asyncio.Event()
        self._stop = asyncio.Event()  # set by abort and by interrupt

    @property
    def aborted(self) -> bool:
        return self._abort.is_set()

    def abort(self) -> None:
        self._abort.set()
        self._stop.set()

    def interrupt(self, reason: str) -> None:
        if self.interrupted is None:
            self.interrupted = reason
        self._stop.set()

    async def wait_abort(self) -> None:
        await self._abort.wait()

    async def wait(self) -> None:
        """Until the run is aborted or interrupted."""
        await self._stop.wait()


@dataclass(slots=True)
class RunRequest:
    session_id: str
    input: list[Message] = field(default_factory=list)
    agent: AgentSpec | None = None
    business_state_json: str | None = None  # None: inherit (R18)
    request_id: str = ""
    resume_only: bool = False  # the Resume RPC: no input, no new run on a finished session


@dataclass(frozen=True, slots=True)
class RunOutcome:
    finish_reason: FinishReason
    status: Status
    final_text: str
    step_index: int
    usage: Usage
    approval_id: str
    message_count: int


class Engine:
    def __init__(
        self,
        store: Store,
        providers: ProviderRegistry,
        *,
        default_tool_timeout_s: float = DEFAULT_TOOL_TIMEOUT_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.providers = providers
        self.default_tool_timeout_s = default_tool_timeout_s
        self.clock = clock

    async def run(
        self, req: RunRequest, sink: Sink, tools: ToolPort, control: RunControl
    ) -> RunOutcome | None:
        """Run (or resume) the session's agent loop until it finishes, pauses, is aborted,
        or is interrupted (``RunInterrupted``). Returns ``None`` when there is nothing to
        run (a finished session and no new input). Errors before the first event change
        nothing in the store."""
        run = await self._prepare(req)
        if run is None:
            return None
        return await _Run(self, run, sink, tools, control).go()

    async def _prepare(self, req: RunRequest) -> _Prepared | None:
        cp = await self.store.load(req.session_id)
        if cp is None and req.resume_only:
            raise CheckpointNotFound(
                f"session {req.session_id!r} has no checkpoint", session_id=req.session_id
            )
        if cp is not None and cp.status is Status.AWAITING_APPROVAL:
            raise SessionAwaitingApproval(
                f"session {req.session_id!r} is paused on approval {cp.approval_id!r}; resolve it first",
                session_id=req.session_id,
                approval_id=cp.approval_id,
            )
        spec = req.agent or (cp.agent if cp else None)
        if spec is None:
            raise InvalidArgument(
                f"session {req.session_id!r} has no checkpoint: an agent is required",
                reason="AGENT_REQUIRED",
                session_id=req.session_id,
            )
        if any(t.needs_approval for t in spec.tools):
            raise Unsupported(
                "tools with needs_approval are not supported by this daemon version",
                tools=",".join(t.name for t in spec.tools if t.needs_approval),
            )
        self.providers.resolve(spec.model, spec.model_settings_json)
        fp = fingerprint(spec)

        if cp is None:
            if not req.input and not spec.instructions:
                raise InvalidArgument(
                    f"session {req.session_id!r} is new: input (or instructions) is required",
                    reason="INPUT_REQUIRED",
                    session_id=req.session_id,
                )
            mode = "new"
            cp = Checkpoint(req.session_id, run_id=_new_run_id())
            if spec.instructions:
                cp.messages.append(Message(Role.SYSTEM, spec.instructions))
            cp.messages.extend(req.input)
            queued: list[Message] = []
            stored = 0
        elif cp.status is Status.FINISHED:
            appended = [] if req.resume_only else merge_input(cp.messages, req.input, finished=True)
            if not appended:
                return None
            mode = "continue"
            stored = len(cp.messages)
            cp.run_start, cp.run_id = len(cp.messages), _new_run_id()
            cp.step_index, cp.usage = 0, Usage()
            cp.messages.extend(appended)
            queued = []
        else:
            mode = "resume"
            stored = len(cp.messages)
            queued = merge_input(cp.messages, req.input, finished=False)
            pending = _pending_calls(cp)
            missing = sorted({c.name for c in pending if spec.tool(c.name) is None})
            if missing:  # R49: whatever the drift policy
                raise ResumeToolMissing(
                    f"pending tool calls use tools the agent no longer declares: {', '.join(missing)}",
                    session_id=req.session_id,
                    tools=",".join(missing),
                )
        found = drift(cp.fingerprint, fp) if mode == "resume" and req.agent else None
        if found and spec.on_agent_drift is DriftPolicy.ERROR:
            raise AgentDrift(
                f"session {req.session_id!r} was saved by a different agent",
                session_id=req.session_id,
                model_from=found.model_from,
                model_to=found.model_to,
                tools_added=",".join(found.tools_added),
                tools_removed=",".join(found.tools_removed),
                tools_changed=",".join(found.tools_changed),
                instructions_changed=str(found.instructions_changed).lower(),
            )
        if found and spec.on_agent_drift is DriftPolicy.IGNORE:
            found = None
        if req.business_state_json is not None:
            cp.business_state_json = req.business_state_json
        cp.status, cp.finish_reason, cp.approval_id = Status.IN_PROGRESS, FinishReason.NONE, ""
        cp.agent, cp.fingerprint = spec, fp
        return _Prepared(cp, stored, spec, mode, queued, found, req.request_id)


@dataclass(slots=True)
class _Prepared:
    cp: Checkpoint
    stored: int
    spec: AgentSpec
    mode: str
    queued: list[Message]
    drift: Drift | None
    request_id: str


def _new_run_id() -> str:
    return uuid.uuid4().hex[:16]


def _pending_calls(cp: Checkpoint) -> list[ToolCall]:
    """Calls of the last assistant turn that have no recorded result."""
    for i in range(len(cp.messages) - 1, -1, -1):
        m = cp.messages[i]
        if m.role is Role.ASSISTANT:
            done = {r.tool_call_id for r in cp.messages[i + 1 :] if r.role is Role.TOOL}
            return [c for c in m.tool_calls if c.id not in done]
    return []


class _Run:
    """One run's mutable state; lives for one ``Engine.run`` call."""

    def __init__(
        self, engine: Engine, p: _Prepared, sink: Sink, tools: ToolPort, control: RunControl
    ) -> None:
        self.e, self.p, self.cp, self.spec = engine, p, p.cp, p.spec
        self.sink, self.tools, self.control = sink, tools, control
        self.stored = p.stored
        self.unannounced: list[tuple[Message, int]] = []  # results recorded by an abort
        provider, model, settings = engine.providers.resolve(self.spec.model, self.spec.model_settings_json)
        self.provider, self.model, self.settings = provider, model, settings
        timeout_ms = self.spec.tool_timeout_ms
        self.tool_timeout_s = timeout_ms / 1000 if timeout_ms else engine.default_tool_timeout_s

    # -- plumbing -------------------------------------------------------------------------

    async def emit(self, type_: str, **data: object) -> None:
        self.cp.last_seq += 1
        await self.sink.emit(
            Event(self.cp.session_id, self.cp.run_id, self.cp.last_seq, self.e.clock(), type_, data)
        )

    async def save(self) -> None:
        cp = self.cp
        cp.version += 1
        cp.updated_at = self.e.clock()
        try:
            await self.e.store.save(cp, stored_messages=self.stored)
        except BaseException:
            cp.version -= 1
            raise
        self.stored = len(cp.messages)

    # -- the loop -------------------------------------------------------------------------

    async def go(self) -> RunOutcome:
        cp, spec = self.cp, self.spec
        log.info(
            "run start session=%s run=%s mode=%s step=%d",
            cp.session_id, cp.run_id, self.p.mode, cp.step_index,
        )
        await self.emit(
            ev.RUN_START,
            mode=self.p.mode,
            step_index=cp.step_index,
            fingerprint=cp.fingerprint,
            request_id=self.p.request_id,
        )
        if self.p.drift is not None:
            log.warning("agent drift session=%s %s", cp.session_id, self.p.drift)
            await self.emit(ev.AGENT_DRIFT, drift=self.p.drift)

        pending = _pending_calls(cp)
        if pending:  # R10/R22: run exactly the unanswered calls, no model call for that turn
            if await self.run_tools(pending, cp.step_index) is FinishReason.ABORTED:
                return await self.finish(FinishReason.ABORTED)
        if self.p.queued:  # R12: new input goes after the pending results
            cp.messages.extend(self.p.queued)

        while True:
            if self.control.aborted:
                return await self.finish(FinishReason.ABORTED)
            if self.control.interrupted:
                raise RunInterrupted(self.control.interrupted)
            if cp.step_index >= spec.max_steps:
                return await self.finish(FinishReason.MAX_STEPS)
            step = cp.step_index + 1
            await self.emit(ev.STEP_START, step=step)
            resp = await self.call_model()
            if resp is None:  # aborted while the model was answering
                return await self.finish(FinishReason.ABORTED)
            cp.step_index = step
            usage = resp.usage.copy()
            usage.model_calls = 1
            cp.usage.add(usage)
            cp.total_usage.add(usage)
            turn = Message(Role.ASSISTANT, resp.text, resp.tool_calls)
            cp.messages.append(turn)
            if not turn.tool_calls:
                return await self.finish(FinishReason.STOP, turn_usage=usage)
            await self.save()  # R1: the turn is durable before any tool runs
            await self.emit(ev.MODEL_TURN, step=step, message=turn, usage=usage)
            if await self.run_tools(list(turn.tool_calls), step) is FinishReason.ABORTED:
                return await self.finish(FinishReason.ABORTED)
            await self.emit(ev.STEP_DONE, step=step)

    async def call_model(self) -> ModelResponse | None:
        """One model call. An abort cancels it; an interrupt lets it finish (R6: a model
        call in flight is finished and checkpointed, never thrown away)."""
        request = ModelRequest(
            self.cp.session_id, self.model, list(self.cp.messages), self.spec, self.settings
        )
        task = asyncio.create_task(self.provider.complete(request))
        aborted = asyncio.create_task(self.control.wait_abort())
        try:
            await asyncio.wait({task, aborted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            aborted.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            return None
        return task.result()

    async def run_tools(self, calls: list[ToolCall], step: int) -> FinishReason | None:
        """Run ``calls`` (each answered by the client or by a check), record results in
        call order as the in-order prefix of finished calls grows (R2), saving each.

        Returns ``FinishReason.ABORTED`` after recording "cancelled" results for what did
        not finish (R3); raises ``RunInterrupted`` when interrupted (no result recorded
        for unfinished calls, R24)."""
        if self.control.interrupted:
            raise RunInterrupted(self.control.interrupted)
        limit = asyncio.Semaphore(max(1, self.spec.tool_concurrency))
        tasks = [asyncio.create_task(self._one_call(c, step, limit)) for c in calls]
        stop = asyncio.create_task(self.control.wait())
        recorded = 0
        try:
            for task in tasks:
                if not task.done():
                    await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
                if not task.done():
                    break
                await self.record(task.result(), step)
                recorded += 1
        finally:
            stop.cancel()
            for t in tasks:
                t.cancel()
        if recorded == len(calls):
            return None
        if not self.control.aborted:
            raise RunInterrupted(self.control.interrupted or "interrupted")
        for call, task in zip(calls[recorded:], tasks[recorded:]):
            finished = task.done() and not task.cancelled() and task.exception() is None
            msg = task.result() if finished else error_result(call, CANCELLED_ERROR, cancelled=True)
            self.cp.messages.append(msg)
            self.unannounced.append((msg, step))
        return FinishReason.ABORTED

    async def _one_call(self, call: ToolCall, step: int, limit: asyncio.Semaphore) -> Message:
        refused = check_call(self.spec, call)  # R25: never sent to the client
        if refused is not None:
            return refused
        async with limit:
            fut = self.tools.expect(call.id)
            try:
                await self.emit(
                    ev.TOOL_CALL, step=step, call=call, timeout_ms=int(self.tool_timeout_s * 1000)
                )
                try:
                    out = await asyncio.wait_for(fut, self.tool_timeout_s)
                except TimeoutError:
                    return error_result(
                        call, f"no result within {self.tool_timeout_s:g}s (tool timeout)", timeout=True
                    )
            finally:
                self.tools.forget(call.id)
        return Message(Role.TOOL, out.result_json, (), call.id, call.name, out.is_error)

    async def record(self, result: Message, step: int) -> None:
        self.cp.messages.append(result)
        await self.save()
        await self.announce(result, step)

    async def announce(self, result: Message, step: int) -> None:
        await self.emit(
            ev.TOOL_RESULT,
            step=step,
            tool_call_id=result.tool_call_id,
            tool_name=result.tool_name,
            result_json=result.content,
            is_error=result.is_error,
        )

    async def finish(self, reason: FinishReason, *, turn_usage: Usage | None = None) -> RunOutcome:
        cp = self.cp
        cp.finish_reason = reason
        cp.status = Status.IN_PROGRESS if reason is FinishReason.ABORTED else Status.FINISHED
        await self.save()  # R3 (aborted, still in-progress) or R5 (finished)
        for msg, step in self.unannounced:
            await self.announce(msg, step)
        if turn_usage is not None:
            await self.emit(ev.MODEL_TURN, step=cp.step_index, message=cp.messages[-1], usage=turn_usage)
            await self.emit(ev.STEP_DONE, step=cp.step_index)
        final_text = next(
            (m.content for m in reversed(cp.messages[cp.run_start :]) if m.role is Role.ASSISTANT), ""
        )
        out = RunOutcome(
            reason, cp.status, final_text, cp.step_index, cp.usage.copy(), cp.approval_id, len(cp.messages)
        )
        await self.emit(
            ev.RUN_DONE,
            finish_reason=reason,
            status=cp.status,
            final_text=final_text,
            step_index=cp.step_index,
            usage=out.usage,
            approval_id=cp.approval_id,
            message_count=len(cp.messages),
        )
        log.info(
            "run done session=%s run=%s reason=%s steps=%d",
            cp.session_id, cp.run_id, reason.value, cp.step_index,
        )
        return out
