"""One run's loop (docs/reference/rules.md R1–R8, R10–R12, R20–R32): model call → tool calls →
results → next call, checkpointed at every step.

Events are durable before anyone sees them: :meth:`_Run.emit` only queues an event; a
save writes the queued events in its own transaction, and :meth:`_Run.flush` writes them
before the run waits on anything (a model call, a tool result), so a ``Watch`` cursor can
never point at an event that a crash lost and a later run numbered again. The inputs an
event queues (:attr:`LoopSettings.notifications`: the webhooks' outbox entries) are
written in that same transaction: durable exactly when the event is.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..domain import (
    DEFAULT_REQUEST_ID_LIMIT,
    AgentSpec,
    AppliedRequest,
    Approval,
    Checkpoint,
    Enqueue,
    FinishReason,
    Lease,
    Message,
    Role,
    RunEnd,
    Sleep,
    Status,
    StoredEvent,
    SubTask,
    ToolCall,
    ToolSpec,
    Usage,
)
from ..providers import ModelRequest, ModelResponse, Provider, ProviderRegistry
from ..store import Capability, SaveOptions, Store
from . import (
    budget,
    compaction,
    daemon_tools,
    fallback,
    handout,
    output,
    requests,
    subagents,
    timers,
)
from . import events as ev
from .control import RunControl, RunInterrupted, Sink, ToolPort, settle_acks, wait_first
from .daemon_tools import DaemonTools
from .events import Event, SubagentTag
from .fingerprint import Drift
from .runport import Caller
from .tools import asked, check_call, decided_result, error_result

log = logging.getLogger("luoshod.engine")

CANCELLED_ERROR = "cancelled before it ran because the run was aborted"


@dataclass(frozen=True, slots=True)
class RunOutcome:
    finish_reason: FinishReason
    status: Status
    final_text: str
    step_index: int
    usage: Usage
    approval_id: str
    message_count: int
    #: R86: when the session wakes, when the run ended with it sleeping.
    wake_at: float | None = None


@dataclass(slots=True)
class Prepared:
    """A run ready to go: the working checkpoint and what the loop needs to know."""

    cp: Checkpoint
    stored: int  # messages the store already holds
    spec: AgentSpec
    provider: Provider
    model: str
    settings: dict[str, Any]
    mode: str  # "new" | "continue" | "resume"
    queued: list[Message]  # input to append after the pending tool results (R12)
    drift: Drift | None
    request_id: str
    claim: str | None = None  # an approval this run's first save claims (Resolve)
    lease: Lease | None = None  # every write of the run is fenced by it (R51, R52)
    #: Results the input gave for pending calls (R53): recorded without asking the client.
    answers: dict[str, Message] = field(default_factory=dict)
    #: Applied request records (R74) the run's next save writes, by id; the store keeps
    #: the newest ``request_limit`` of the session.
    requests: list[AppliedRequest] = field(default_factory=list)
    request_limit: int = DEFAULT_REQUEST_ID_LIMIT
    #: R64: (sub-agent state, drift) of each drifted level this resume warns about.
    level_drifts: list[tuple[SubTask, Drift]] = field(default_factory=list)
    #: The decision a Resolve run records (``approval.resolved``'s data, R92), with the
    #: save that claims the approval.
    resolved: dict[str, object] | None = None


@dataclass(frozen=True, slots=True)
class LoopSettings:
    store: Store
    clock: Callable[[], float]
    #: An event's stored form (the bytes its event log keeps) and its wire form, built
    #: with it and handed to the sink with the event (opaque here; ``None``: none).
    encode_event: Callable[[Event], tuple[bytes, object]]
    default_tool_timeout_s: float
    #: The daemon's MCP servers (R70–R73); ``None``: no daemon tools.
    daemon_tools: DaemonTools | None = None
    #: Where sub-agents' models are resolved (R55); ``None``: no sub-agents.
    providers: ProviderRegistry | None = None
    #: The inputs an event queues with it (the webhooks' outbox entries of the event),
    #: written by the save or append that writes the event; ``None``: none.
    notifications: Callable[[Event], Sequence[Enqueue]] | None = None


def pending_calls(cp: Checkpoint) -> list[ToolCall]:
    """Calls of the last assistant turn that have no recorded result."""
    for i in range(len(cp.messages) - 1, -1, -1):
        m = cp.messages[i]
        if m.role is Role.ASSISTANT:
            done = {r.tool_call_id for r in cp.messages[i + 1 :] if r.role is Role.TOOL}
            return [c for c in m.tool_calls if c.id not in done]
    return []


class Run:
    """One run's mutable state; lives for one engine call. The sub-agents and daemon
    tools inside it see it as a :class:`~.runport.RunPort`."""

    def __init__(
        self, s: LoopSettings, p: Prepared, sink: Sink, tools: ToolPort, control: RunControl
    ) -> None:
        self.s, self.p, self.cp, self.spec = s, p, p.cp, p.spec
        self.sink, self.tools, self.control = sink, tools, control
        self.stored = p.stored
        self.outbox: list[Event] = []
        self.unannounced: list[tuple[Message, int]] = []  # results recorded by an abort
        self.logs_events = Capability.EVENT_LOG in s.store.capabilities
        self.write_lock = asyncio.Lock()  # store writes of this run, in order
        #: The checkpoint holds a change whose save is deferred to the next ``flush``,
        #: which writes it in one transaction with the events it delivers — one synced
        #: write a step fewer each time:
        #:
        #: - a model turn with tool calls (R1 wants it durable before any of its tools
        #:   runs, and a tool runs only once its client has the ``tool.call`` event, which
        #:   the flush delivers with the turn saved);
        #: - the last result of a turn whose loop goes on to the next model call (R2: saved
        #:   by the flush that sends ``step.start``, before that call, with ``step.done``).
        #:
        #: Every other way out saves first (a pause, an abort, the step limit, queued
        #: input, and ``go``'s final flush for an interrupt), so the checkpoints written
        #: are the same ones, each with the same content.
        self.unsaved = False
        #: Submitted results recorded but not saved yet: each ``ToolOutcome.saved`` is
        #: settled by the save that writes its result (R54).
        self.acks: dict[str, asyncio.Future[None]] = {}
        #: The call of the turn whose result the transcript takes next (``run_tools``); a
        #: submitted result of another call is saved at once outside it (R76).
        self.next_in_order: str | None = None
        timeout_ms = self.spec.tool_timeout_ms
        self.tool_timeout_s = timeout_ms / 1000 if timeout_ms else s.default_tool_timeout_s
        #: The checks of the limits (R79–R81); ``None`` when no agent of the run has any.
        self.budgets = budget.Budgets(self.cp, s.clock) if budget.any_limits(p.spec) else None
        self.estimate = budget.InputEstimate(budget.spec_chars(p.spec))
        #: The lead agent as the one level of the limits its own calls count toward (R80).
        self._levels = (budget.level(p.spec.limits, p.cp.usage, p.cp.total_usage, (), id(p.cp)),)
        self.price = p.provider.price(p.model, p.settings) if self.budgets is not None else None
        self.max_output = budget.max_output_tokens(p.settings)
        #: R82: the agent's model, then its fallbacks; the worst case reserved for the
        #: model call in flight (R79), which a fallback replaces with its own.
        self.models = fallback.chain(s.providers, p.spec, (p.provider, p.model, p.settings))
        self.reserved = fallback.Reservation(self.budgets, self._levels)
        #: The model that answered the last model call ("provider:model", R82).
        self.answered_by = p.spec.model

    # -- what the sub-agents see (runport.RunPort) -------------------------------------------

    @property
    def providers(self) -> ProviderRegistry | None:
        return self.s.providers

    def defer_save(self) -> None:
        self.unsaved = True

    async def call_daemon_tool(
        self, call: ToolCall, tool: ToolSpec, step: int, caller: Caller
    ) -> Message:
        attempt = handout.note_daemon_hand_out(self, caller.key)  # R77
        return await daemon_tools.execute(
            self.s.daemon_tools,
            call,
            tool,
            step,
            caller,
            session_id=self.cp.session_id,
            default_timeout_s=self.s.default_tool_timeout_s,
            hand_out=attempt,
        )

    # -- events and saves -----------------------------------------------------------------

    def queue_event(
        self, type_: str, data: dict[str, object], tag: SubagentTag | None = None
    ) -> None:
        """Number an event and queue it; it reaches the sink once written (``save`` or
        ``flush``)."""
        self.cp.last_seq += 1
        self.outbox.append(
            Event(
                self.cp.session_id,
                self.cp.run_id,
                self.cp.last_seq,
                self.s.clock(),
                type_,
                data,
                tag,
            )
        )

    async def emit(self, type_: str, **data: object) -> None:
        """Queue an event; it reaches the sink once written (``save`` or ``flush``)."""
        if type_ in (ev.TEXT_DELTA, ev.REASONING_DELTA):  # progress only: not numbered, not kept
            await self.sink.emit(
                Event(self.cp.session_id, self.cp.run_id, 0, self.s.clock(), type_, data)
            )
            return
        self.queue_event(type_, data)

    def _take(self) -> tuple[list[Event], list[StoredEvent], list[object]]:
        """The queued events, their stored forms and their wire forms (none without a
        log)."""
        batch, self.outbox = self.outbox, []
        if not self.logs_events:
            return batch, [], []
        encode = self.s.encode_event
        stored, wires = [], []
        for e in batch:
            data, wire = encode(e)
            stored.append(StoredEvent(e.seq, data))
            wires.append(wire)
        return batch, stored, wires

    def _queued_with(self, batch: list[Event]) -> list[Enqueue]:
        """The inputs ``batch`` queues with it (the webhooks' outbox entries)."""
        notifications = self.s.notifications
        if notifications is None:
            return []
        return [q for e in batch for q in notifications(e)]

    async def _deliver(self, batch: list[Event], wires: list[object]) -> None:
        if wires:
            for e, wire in zip(batch, wires):
                await self.sink.emit(e, wire)
        else:
            for e in batch:
                await self.sink.emit(e)

    async def flush(self) -> None:
        """Write queued events to the event log, then hand them to the sink. A model turn
        not saved yet is saved instead, with them (see :attr:`unsaved`)."""
        async with self.write_lock:
            if self.unsaved:
                batch, wires = await self._save()
            elif not self.outbox:
                return
            else:
                batch, stored, wires = self._take()
                enqueue = self._queued_with(batch)
                if stored or enqueue:
                    extra = {"enqueue": enqueue} if enqueue else {}
                    await self.s.store.append_events(
                        self.cp.session_id, stored, lease=self.p.lease, **extra
                    )
        await self._deliver(batch, wires)

    async def save(self, *, approval: Approval | None = None) -> None:
        """Save the checkpoint with the queued events (and an approval to store or claim)."""
        async with self.write_lock:
            batch, wires = await self._save(approval)
        await self._deliver(batch, wires)

    async def _save(self, approval: Approval | None = None) -> tuple[list[Event], list[object]]:
        """The save itself, under ``write_lock``; returns the events to deliver and their
        wire forms."""
        cp = self.cp
        batch, stored, wires = self._take()
        cp.version += 1
        cp.updated_at = self.s.clock()
        extra: SaveOptions = {"lease": self.p.lease} if self.p.lease else {}
        if stored:
            extra["events"] = stored
        if approval is not None:
            extra["approval"] = approval
        if self.p.claim is not None:
            extra["claim"] = self.p.claim
        if self.p.requests:
            extra["requests"] = self.p.requests
            extra["request_limit"] = self.p.request_limit
        if enqueue := self._queued_with(batch):
            extra["enqueue"] = enqueue
        acks = [
            self.acks.pop(m.tool_call_id)
            for m in cp.messages[self.stored :]
            if m.role is Role.TOOL and m.tool_call_id in self.acks
        ]
        if cp.early_results and self.acks:  # results saved ahead of their turn (R76)
            acks += [self.acks.pop(k) for k in cp.early_results if k in self.acks]
        # What this save writes, counted now: a durable store encodes the checkpoint before
        # its first await, and a sibling sub-agent may add messages while the save waits
        # (those are the next save's to write).
        written = len(cp.messages)
        written_tasks = [(task, len(task.messages)) for task in cp.all_tasks()]
        try:
            await self.s.store.save(cp, stored_messages=self.stored, **extra)
        except BaseException as e:
            # The checkpoint did not change, so the events that described the change
            # did not happen: they are dropped (their seqs stay unused).
            cp.version -= 1
            settle_acks(acks, e)
            raise
        settle_acks(acks, None)
        self.p.claim = None
        self.p.requests = []
        self.stored = written
        for task, n in written_tasks:  # each level's stored_messages (O(new) saves, R59)
            task.stored = n
        self.unsaved = False
        return batch, wires

    # -- the loop -------------------------------------------------------------------------

    async def go(self) -> RunOutcome:
        try:
            return await self._go()
        finally:
            # Whatever ended the run, what was said is written before the stream ends.
            with contextlib.suppress(Exception):
                await self.flush()

    async def _go(self) -> RunOutcome:
        cp, spec = self.cp, self.spec
        if self.p.claim is None and cp.step_index < spec.max_steps and not pending_calls(cp):
            # The run's first act is a model call: one its provider would refuse now (the
            # session's backoff, an open circuit) refuses the run before it writes anything,
            # so a client retrying in a loop adds no run.start and step.start to the log.
            fallback.ready(self.models, cp.session_id)  # R82: refused if no model would be
        if cp.attempts:  # R77: the counts of this run's calls only (sub-agents' under theirs)
            ours = {c.id for m in cp.messages[cp.run_start :] for c in m.tool_calls}
            cp.attempts = {
                k: n for k, n in cp.attempts.items() if k.split(subagents.ID_SEPARATOR)[0] in ours
            }
            cp.handed_out_at = {k: t for k, t in cp.handed_out_at.items() if k in cp.attempts}
        if not cp.attempts_once and not cp.attempts:
            # R77: a run none of whose calls was handed out or has a result counts the
            # settled ones by exception (a header older than attempts_once keeps its way
            # until then).
            cp.attempts_once = not any(m.role is Role.TOOL for m in cp.messages[cp.run_start :])
        log.info(
            "run start session=%s run=%s mode=%s step=%d",
            cp.session_id,
            cp.run_id,
            self.p.mode,
            cp.step_index,
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
        for state, found in self.p.level_drifts:  # R64: one per drifted sub-agent level
            log.warning(
                "agent drift session=%s subagent=%s %s", cp.session_id, "/".join(state.path), found
            )
            self.queue_event(ev.AGENT_DRIFT, {"drift": found}, subagents.tag(state))
        if self.p.resolved is not None:
            await self.emit(ev.APPROVAL_RESOLVED, **self.p.resolved)
        if self.p.claim is not None:
            await self.save()  # claims the approval: exactly one resolution wins (R33)
        if self.budgets is not None and (late := self.budgets.deadline(self._levels)):
            return await self.stop(late, pending_calls(cp))  # R81: past its deadline

        pending = pending_calls(cp)
        if pending:  # R10/R22: run exactly the unanswered calls, no model call for that turn
            if (stop := await self.run_tools(pending, cp.step_index)) is not None:
                return stop
            await self.emit(ev.STEP_DONE, step=cp.step_index)
        if cp.queued_input or self.p.queued:  # R12: new input goes after the pending results
            await self.flush()  # the last result's save (R2) holds the results only
            cp.messages.extend(cp.queued_input)
            cp.messages.extend(self.p.queued)
            cp.queued_input = []

        while True:
            if self.unsaved and (
                self.control.aborted or self.control.interrupted or cp.step_index >= spec.max_steps
            ):
                await self.flush()  # the last result's save (R2), before the run ends
            if self.control.aborted:
                return await self.finish(FinishReason.ABORTED)
            if self.control.interrupted:
                raise RunInterrupted(self.control.interrupted)
            if cp.step_index >= spec.max_steps:
                return await self.finish(FinishReason.MAX_STEPS)
            if spec.compaction is not None:  # R85: a step of its own, before the call
                await compaction.compact(
                    self, cp.step_index + 1, trigger=compaction.TRIGGER_THRESHOLD
                )
                if self.control.aborted or self.control.interrupted:
                    continue
            if self.budgets is not None:  # R79: the call's worst case must fit every limit
                worst = budget.worst_case(
                    self.request_tokens(),
                    self.max_output,
                    self.price,
                )
                if (trip := self.budgets.admit(self._levels, worst)) is not None:
                    return await self.stop(trip, [])
                self.reserved.hold(worst)
            step = cp.step_index + 1
            await self.emit(ev.STEP_START, step=step)
            await self.flush()
            try:
                resp = await self.call_model(step)
            finally:
                self.reserved.release()
            if isinstance(resp, budget.Trip):  # R79: a fallback's worst case would cross it
                return await self.stop(resp, [])
            if resp is None:  # aborted while the model was answering
                return await self.finish(FinishReason.ABORTED)
            cp.step_index = step
            usage = resp.usage.copy()
            usage.model_calls = 1
            cp.usage.add(usage)
            cp.total_usage.add(usage)
            turn = Message(
                Role.ASSISTANT,
                resp.text,
                resp.tool_calls,
                model=self.answered_by,
                usage=usage,
                reasoning=resp.reasoning,  # R84: kept with the turn, sent back with it
            )
            cp.messages.append(turn)
            await self.emit(ev.MODEL_TURN, step=step, message=turn, usage=usage)
            if not turn.tool_calls:
                if not spec.output_schema_json:
                    return await self.finish(FinishReason.STOP, step_done=True)
                verdict = output.judge(spec.output_schema_json, turn.content)
                if not verdict.errors:
                    return await self.finish(
                        FinishReason.STOP, step_done=True, output_json=verdict.output_json
                    )
                if output.repaired(cp.messages[cp.run_start :]):
                    return await self.finish(
                        FinishReason.OUTPUT_INVALID, step_done=True, output_errors=verdict.errors
                    )
                # R83: one repair turn, its message saved before the call that answers it.
                cp.messages.append(output.repair_message(verdict.errors))
                await self.emit(ev.STEP_DONE, step=step)
                await self.save()
                continue
            self.unsaved = True  # R1: saved by the flush that sends its first tool.call
            if (stop := await self.run_tools(list(turn.tool_calls), step)) is not None:
                return stop
            await self.emit(ev.STEP_DONE, step=step)

    def now(self) -> float:
        return self.s.clock()

    def context_window(self) -> int | None:
        """The agent's model's context window, from the configuration (R85)."""
        return self.p.provider.context_window(self.p.model, self.p.settings)

    def request_tokens(self) -> int:
        """The estimate of the next model call's input: of the transcript's compacted
        view when compaction recorded one (R85)."""
        if self.cp.compaction is None:
            return self.estimate.tokens(self.cp.messages)
        return compaction.estimate(
            self.spec, compaction.view(self.cp.messages, self.cp.compaction)[0]
        )

    def admit(
        self, worst: budget.Worst, scopes: Collection[str] = budget.SCOPES
    ) -> budget.Trip | None:
        """R79 for a model call of the run besides its turns (compaction's summary, R85):
        the limit of ``scopes`` that a call whose worst case is ``worst`` could cross, or
        ``None`` when it may be made (nothing is reserved: the lead's calls never run
        beside another)."""
        if self.budgets is None:
            return None
        if set(budget.SCOPES) <= set(scopes):
            return self.budgets.admit(self._levels, worst)
        return self.budgets.admit([lv.within(scopes) for lv in self._levels], worst)

    async def call_model(self, step: int) -> ModelResponse | budget.Trip | None:
        """One model call, by the agent's model or, failing that, its fallbacks (R82). An
        abort cancels it; an interrupt lets it finish (R6: a model call in flight is
        finished and checkpointed, never thrown away). Returns the limit a fallback's
        worst case would cross (R79) instead of calling it."""

        async def on_text(text: str) -> None:
            await self.emit(ev.TEXT_DELTA, step=step, text=text)

        async def on_reasoning(text: str) -> None:
            await self.emit(ev.REASONING_DELTA, step=step, text=text)

        sent, hidden = compaction.view(self.cp.messages, self.cp.compaction)  # R85
        shown, messages = subagents.model_view(self.spec, sent)  # R55

        async def call(
            model: fallback.Candidate, on_retry: fallback.OnRetry
        ) -> ModelResponse | None:
            request = ModelRequest(
                self.cp.session_id,
                model.model,
                messages,
                shown,
                model.settings,
                on_text,
                on_retry=on_retry,
                on_reasoning=on_reasoning,
                compacted_turns=hidden,
            )
            return await self._answer(model.provider.complete(request))

        def admit(to: fallback.Candidate) -> budget.Worst | budget.Trip | None:
            worst = budget.worst_case(
                self.request_tokens(),
                budget.max_output_tokens(to.settings),
                to.provider.price(to.model, to.settings),
            )
            return self.admit(worst) or worst

        got = await fallback.answer(
            self.models,
            step,
            call,
            session_id=self.cp.session_id,
            note=self.queue_event,
            write=lambda: asyncio.shield(self.flush()),
            reserved=self.reserved,
            admit=admit,
        )
        if isinstance(got, budget.Trip):
            return got
        answer, model = got
        self.answered_by = model.model_id
        return answer

    async def _answer(self, work: Awaitable[ModelResponse]) -> ModelResponse | None:
        answer, answered = await self.control.unless_stopped(work)
        if not answered:
            if self.control.aborted:
                return None
            # Halted (the daemon must stop now): the answer is given up, what came before
            # it is kept, so a new session's input survives and Resume asks again.
            if len(self.cp.messages) > self.stored:
                await self.save()
            raise RunInterrupted(self.control.interrupted or "halted")
        return answer

    # -- tools ----------------------------------------------------------------------------

    def _gate(self, calls: list[ToolCall]) -> int:
        """Index of the first call that must wait for a human (R27), or len(calls).

        A call with a recorded decision is not gated again; a call that fails its checks
        gets its error result instead of an approval (R25, R32)."""
        for i, call in enumerate(calls):
            if call.id in self.cp.decisions:
                continue
            tool = self.spec.tool(call.name)
            # R86: the run may end at a sleep; R27, R88: a gated call waits. Its checks
            # only then (each call is checked once more when it runs).
            waits = self.spec.is_sleep(call.name) or (tool is not None and tool.gated)
            if waits and check_call(self.spec, call) is None:
                return i
        return len(calls)

    async def run_tools(self, calls: list[ToolCall], step: int) -> RunOutcome | None:
        """Run ``calls`` up to the first gated one, recording results in call order as the
        in-order prefix of finished calls grows (R2), saving each; then pause on the gated
        call (R28) with the rest remembered. Returns the run's outcome when it stops here
        (aborted, paused), ``None`` to go on; raises ``RunInterrupted``."""
        if self.control.interrupted:
            raise RunInterrupted(self.control.interrupted)
        gate = self._gate(calls)
        now, later = calls[:gate], calls[gate:]
        limit = asyncio.Semaphore(max(1, self.spec.tool_concurrency))
        tasks = [asyncio.create_task(self._one_call(c, step, limit)) for c in now]
        stop = self.control.stopped_signal()
        recorded = 0
        paused: subagents.SubagentPaused | None = None
        tripped: budget.Trip | None = None
        try:
            for call, task in zip(now, tasks):
                self.next_in_order = call.id
                if not task.done():
                    await wait_first(task, stop)
                if not task.done():
                    break
                if isinstance(e := task.exception(), subagents.SubagentPaused):
                    paused = e  # R60/R63: the first in call order pauses the whole run
                    break
                if isinstance(e, subagents.BudgetStop):
                    tripped = e.trip  # R80: a sub-agent's call would cross the lead's limit
                    break
                recorded += 1
                # The turn's last result with no call left for a human: the loop goes on
                # to step.start, whose flush saves it (see ``unsaved``).
                last = recorded == len(tasks) and not later
                await self.record(task.result(), step, save=not last)
        finally:
            self.next_in_order = None
            for t in tasks:
                t.cancel()
        if paused is not None:
            return await self.pause(
                paused.call,
                list(paused.remaining),
                step,
                subagent_path=paused.path,
                question=paused.question,
            )
        if tripped is not None:
            self._end_turn(now[recorded:], tasks[recorded:], later, step, tripped.describe())
            return await self.finish(_trip_reason(tripped))
        if recorded < len(now):
            if not self.control.aborted:
                raise RunInterrupted(self.control.interrupted or "interrupted")
            self._end_turn(now[recorded:], tasks[recorded:], later, step, CANCELLED_ERROR)
            return await self.finish(FinishReason.ABORTED)
        if later and self.spec.is_sleep(later[0].name):
            return await self.sleep(later[0], later[1:], step)
        if later:
            tool = self.spec.tool(later[0].name)
            return await self.pause(later[0], later[1:], step, question=asked(tool, later[0]))
        return None

    async def sleep(self, call: ToolCall, rest: list[ToolCall], step: int) -> RunOutcome | None:
        """R86: the turn's ``sleep`` call. Woken (or due already): its result is recorded
        and the turn's calls after it run. Otherwise the run ends with the session
        sleeping until its wake time; the calls after it wait with it."""
        cp = self.cp
        slept = cp.sleep if cp.sleep is not None and cp.sleep.call_id == call.id else None
        if slept is None:
            try:
                now = self.now()
                slept = Sleep(call.id, timers.wake_time(call, now), since=now)
            except ValueError as e:
                await self.record(error_result(call, str(e)), step)
                return await self.run_tools(rest, step) if rest else None
        woken = slept.woken or (timers.TIME if slept.wake_at <= self.now() else "")
        if woken:
            cp.sleep = None
            await self.record(timers.result(call, slept, woken), step)
            return await self.run_tools(rest, step) if rest else None
        cp.sleep = slept
        log.info("session=%s sleeps until %s", cp.session_id, timers.rfc3339(slept.wake_at))
        return await self.finish(FinishReason.SLEEPING)

    def _end_turn(
        self,
        calls: list[ToolCall],
        tasks: list[asyncio.Task[Message]],
        later: list[ToolCall],
        step: int,
        why: str,
    ) -> None:
        """R3: the turn's calls without a recorded result each get one — a finished
        call's own, else an error result saying ``why`` — announced by ``finish``."""
        for call, task in zip(calls, tasks):
            done = task.done() and not task.cancelled() and task.exception() is None
            if not done:  # R66: a cancelled task's sub-agents get their results too
                subagents.cancel_nested(self, call.id, why)
            self.cp.early_results.pop(call.id, None)
            self.cp.messages.append(
                task.result() if done else error_result(call, why, cancelled=True)
            )
            self.unannounced.append((self.cp.messages[-1], step))
        for call in later:  # R3: every call of the turn ends with one result
            self.cp.messages.append(error_result(call, why, cancelled=True))
            self.unannounced.append((self.cp.messages[-1], step))

    async def _one_call(self, call: ToolCall, step: int, limit: asyncio.Semaphore) -> Message:
        decision = self.cp.decisions.get(call.id)
        if decision is not None:  # R30 rejected, R88 answered or declined
            decided = decided_result(call, self.spec.tool(call.name), decision)
            if decided is not None:
                return decided
        refused = check_call(self.spec, call)  # R25: never sent to the client
        if refused is not None:
            return refused
        if subagents.is_task(self.spec, call):  # R56: runs a sub-agent here
            async with limit:
                return await subagents.run_task(
                    self,
                    self.spec,
                    self.cp.subtasks,
                    call,
                    depth=1,
                    path=(),
                    prefix="",
                    above=self._levels,
                )
        given = self.p.answers.pop(call.id, None)
        if given is not None:  # R53: answered by the input, recorded as a submitted result
            return given
        early = self.cp.early_results.get(call.id)
        if early is not None:  # R76: saved before a crash, never asked again
            return early
        tool = self.spec.tool(call.name)
        if tool is not None and tool.server:  # R71: a daemon tool, run here
            async with limit:
                return await self.call_daemon_tool(
                    call, tool, step, Caller(self.spec, self.emit, self.flush, call.id)
                )
        assert tool is not None  # check_call refused undeclared tools
        async with limit:  # R77: its attempt, and a reconcile first when handed out before
            out = await handout.hand_out(self, call, tool, step, self.tool_timeout_s)
        if out is None:
            return error_result(
                call, f"no result within {self.tool_timeout_s:g}s (tool timeout)", timeout=True
            )
        result = Message(Role.TOOL, out.result_json, (), call.id, call.name, out.is_error)
        if out.saved is not None:
            self.acks[call.id] = out.saved
            if self.next_in_order not in (None, call.id):
                # R76: an earlier call of the turn has no result yet. This one is made
                # durable now, outside the transcript, and acknowledged by that save: its
                # submitter does not wait on the other calls.
                self.cp.early_results[call.id] = result
                await self.save()
        return result

    async def record(self, result: Message, step: int, *, save: bool = True) -> None:
        """Append a tool result and its ``tool.result`` event; save them (R2), or leave
        the save to the next flush (``save=False``, see :attr:`unsaved`)."""
        self.cp.messages.append(result)
        await self.announce(result, step)
        if save:
            await self.save()
        else:
            self.unsaved = True

    async def announce(self, result: Message, step: int) -> None:
        self.cp.decisions.pop(result.tool_call_id, None)
        self.cp.early_results.pop(result.tool_call_id, None)  # in the transcript now (R76)
        # Its tool timeout is over (R81): a header keeps the hand-out times of the calls
        # still waiting only, not one more for every call of a long run.
        self.cp.handed_out_at.pop(result.tool_call_id, None)
        self.cp.settle_attempts(result.tool_call_id)  # its count is final (R77)
        subagents.retire(
            self.cp, self.cp.subtasks.pop(result.tool_call_id, None)
        )  # with its result
        await self.emit(
            ev.TOOL_RESULT,
            step=step,
            tool_call_id=result.tool_call_id,
            tool_name=result.tool_name,
            result_json=result.content,
            is_error=result.is_error,
        )

    # -- endings --------------------------------------------------------------------------

    async def stop(self, trip: budget.Trip, unanswered: list[ToolCall]) -> RunOutcome:
        """R79/R81: a limit stops the run before a model call, as ``Cancel`` would: the
        ``budget.exceeded`` event, an error result naming the limit for each call without
        one (R3), and an unfinished checkpoint that ``Resume`` continues once the limit
        allows."""
        log.info("limit reached session=%s %s", self.cp.session_id, trip.describe())
        await self.emit(ev.BUDGET_EXCEEDED, **trip.event_data())
        why = trip.describe()
        for call in unanswered:
            subagents.cancel_nested(self, call.id, why)
            self.cp.early_results.pop(call.id, None)
            self.cp.messages.append(error_result(call, why, limit=trip.limit))
            self.unannounced.append((self.cp.messages[-1], self.cp.step_index))
        return await self.finish(_trip_reason(trip))

    async def pause(
        self,
        call: ToolCall,
        remaining: list[ToolCall],
        step: int,
        *,
        subagent_path: tuple[str, ...] = (),
        question: str | None = None,
    ) -> RunOutcome:
        """R4/R27: store the approval (R88: a question when ``question`` is the text
        asked) with an awaiting-approval checkpoint and stop."""
        cp = self.cp
        now = self.s.clock()
        timeout_ms = self.spec.approval_timeout_ms
        approval = Approval(
            approval_id=f"ap-{int(now * 1000):013d}-{uuid.uuid4().hex[:8]}",
            session_id=cp.session_id,
            call=call,
            remaining=tuple(remaining),
            step=step,
            fingerprint=cp.fingerprint,
            created_at=now,
            expires_at=now + timeout_ms / 1000 if timeout_ms else None,
            subagent_path=subagent_path,
            question=question,
        )
        cp.approval_id = approval.approval_id
        await self.emit(ev.APPROVAL_REQUESTED, approval=approval)
        return await self.finish(FinishReason.AWAITING_APPROVAL, approval=approval)

    async def finish(
        self,
        reason: FinishReason,
        *,
        step_done: bool = False,
        approval: Approval | None = None,
        output_json: str = "",
        output_errors: tuple[str, ...] = (),
    ) -> RunOutcome:
        cp = self.cp
        cp.finish_reason = reason
        cp.status = {
            FinishReason.ABORTED: Status.IN_PROGRESS,
            FinishReason.BUDGET_EXCEEDED: Status.IN_PROGRESS,  # as Cancel: Resume goes on
            FinishReason.DEADLINE_EXCEEDED: Status.IN_PROGRESS,
            FinishReason.AWAITING_APPROVAL: Status.AWAITING_APPROVAL,
            FinishReason.SLEEPING: Status.SLEEPING,
        }.get(reason, Status.FINISHED)
        for msg, step in self.unannounced:
            await self.announce(msg, step)
        if step_done:
            await self.emit(ev.STEP_DONE, step=cp.step_index)
        final_text = next(
            (m.content for m in reversed(cp.messages[cp.run_start :]) if m.role is Role.ASSISTANT),
            "",
        )
        out = RunOutcome(
            reason,
            cp.status,
            final_text,
            cp.step_index,
            cp.usage.copy(),
            cp.approval_id,
            len(cp.messages),
            cp.wake_at,
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
            output_json=output_json,
            output_errors=list(output_errors),
        )
        done = self.outbox[-1]  # the run.done just queued
        ended = requests.ended(
            cp,
            RunEnd(
                done.seq,
                done.time,
                reason,
                cp.status,
                cp.step_index,
                out.usage.copy(),
                cp.approval_id,
                len(cp.messages),
                cp.run_start,
            ),
        )  # R74: a retry of the run's requests now replays it
        if ended:  # written by the save below; one not saved yet is written ended
            self.p.requests = list({r.id: r for r in [*self.p.requests, *ended]}.values())
        await self.save(approval=approval)  # R3 aborted / R4 paused / R5 finished
        log.info(
            "run done session=%s run=%s reason=%s steps=%d",
            cp.session_id,
            cp.run_id,
            reason.value,
            cp.step_index,
        )
        return out


def _trip_reason(trip: budget.Trip) -> FinishReason:
    return FinishReason.DEADLINE_EXCEEDED if trip.deadline else FinishReason.BUDGET_EXCEEDED
