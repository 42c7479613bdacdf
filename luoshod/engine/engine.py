"""The engine: decides what a request means for the stored session (docs/reference/rules.md R9–R19,
R29–R34, R46–R50) and runs the loop of :mod:`.loop`.

The engine imports neither gRPC nor any driver. The caller gives it a store and a provider
registry, and per run a :class:`~.control.Sink` for events, a :class:`~.control.ToolPort`
through which client-executed tools are awaited, and a :class:`~.control.RunControl`
through which the run is aborted (``Cancel``, R3) or interrupted (client gone, daemon
shutting down: the run stops at the next boundary, a model call in flight is finished and
checkpointed first, R6).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .. import logs
from ..domain import (
    AgentSpec,
    Approval,
    Checkpoint,
    CompactionStrategy,
    Decision,
    DriftPolicy,
    Enqueue,
    FinishReason,
    Message,
    Role,
    Status,
    StoredEvent,
    SubTask,
    ToolCall,
    Usage,
)
from ..errors import (
    AgentDrift,
    ApprovalNotFound,
    CheckpointNotFound,
    InvalidArgument,
    LeaseLost,
    NotSleeping,
    ResumeToolMissing,
    SessionAwaitingApproval,
    SessionBusy,
    SessionSleeping,
    StoreError,
)
from ..providers import Provider, ProviderRegistry
from ..providers.pricing import priced
from ..store import Capability, SaveOptions, Store
from . import compaction, fallback, requests, subagents, timers
from . import events as ev
from .control import RunControl, RunInterrupted, Sink, ToolOutcome, ToolPort
from .daemon_tools import DaemonTools, expand
from .events import Event
from .fingerprint import Drift, drift, fingerprint
from .lease import Held, LeaseKeeper, LeasePolicy
from .loop import LoopSettings, Prepared, Run, RunOutcome, pending_calls
from .merge import merge_input, take_answers
from .requests import DEFAULT_REQUEST_ID_LIMIT, Replay
from .tools import check_call

__all__ = [
    "DEFAULT_REQUEST_ID_LIMIT",
    "DEFAULT_TOOL_TIMEOUT_S",
    "Engine",
    "ResolveRequest",
    "RunControl",
    "RunInterrupted",
    "Replay",
    "RunOutcome",
    "RunRequest",
    "Sink",
    "run_digest",
    "ToolOutcome",
    "ToolPort",
]

log = logging.getLogger("luoshod.engine")

DEFAULT_TOOL_TIMEOUT_S = 300.0
EXPIRED_NOTE = "the approval expired before a decision"
#: Why a run whose lease was taken over stopped (it then fails with ``LeaseLost``).
LEASE_LOST = "the session's lease was taken over by another daemon"


@dataclass(slots=True)
class RunRequest:
    session_id: str
    input: list[Message] = field(default_factory=list)
    agent: AgentSpec | None = None
    business_state_json: str | None = None  # None: inherit (R18)
    request_id: str = ""
    resume_only: bool = False  # the Resume RPC: no input, no new run on a finished session
    history_limit: int | None = None  # this session's own history limit (R35)
    retention_s: float | None = None  # how long the session is kept once finished (0: forever)
    #: ``ExecuteRequest.if_busy`` (R68; 0 is REJECT): part of the body a retry must repeat
    #: (R74), though the engine itself never reads it.
    if_busy: int = 0
    #: R86: what wakes a sleeping session with this run: ``time`` (the waker: only once
    #: it is due), ``resume`` (Resume with wake) or ``input`` (if_busy INTERRUPT); "": it
    #: does not, and a sleeping session refuses the run (``SessionSleeping``).
    wake: str = ""


@dataclass(slots=True)
class ResolveRequest:
    approval_id: str
    approved: bool
    note: str = ""
    agent: AgentSpec | None = None
    request_id: str = ""
    # The approval's session: lets a retry (R74) be recognised once the approval is claimed.
    session_id: str = ""
    #: Who decides (R92), recorded with the decision; not part of the request's body.
    decided_by: str = ""
    #: R88: the answer to a question; "" when none is given.
    answer: str = ""

    def digest(self) -> str:
        extra = {"answer": self.answer} if self.answer else {}
        return requests.digest(
            "resolve",
            approval_id=self.approval_id,
            approved=self.approved,
            note=self.note,
            agent=self.agent,
            **extra,
        )


def run_digest(req: RunRequest) -> str:
    """The digest of a run request's body (R74): a retry under the same request id must
    bring the same body (:func:`.requests.check_same_body`); the queue checks it too."""
    if req.resume_only:
        return requests.digest("resume", agent=req.agent)
    # if_busy only when set: the digests of the requests recorded before it counted stay.
    busy = {"if_busy": req.if_busy} if req.if_busy else {}
    return requests.digest(
        "execute",
        input=req.input,
        agent=req.agent,
        business_state_json=req.business_state_json,
        history_limit=req.history_limit,
        **busy,
    )


def _drift_error(session_id: str, found: Drift) -> AgentDrift:
    return AgentDrift(
        f"session {session_id!r} was saved by a different agent "
        f"(model {found.model_from} → {found.model_to}, tools added {list(found.tools_added)}, "
        f"removed {list(found.tools_removed)}, changed {list(found.tools_changed)}, "
        f"instructions changed: {found.instructions_changed})",
        session_id=session_id,
        model_from=found.model_from,
        model_to=found.model_to,
        tools_added=",".join(found.tools_added),
        tools_removed=",".join(found.tools_removed),
        tools_changed=",".join(found.tools_changed),
        instructions_changed=str(found.instructions_changed).lower(),
    )


def _missing_tools(session_id: str, spec: AgentSpec, calls: list[ToolCall]) -> None:
    """R49: whatever the drift policy, a call to run needs its tool declared."""
    missing = sorted({c.name for c in calls if spec.tool(c.name) is None})
    if missing:
        raise ResumeToolMissing(
            f"pending tool calls use tools the agent no longer declares: {', '.join(missing)}",
            session_id=session_id,
            tools=",".join(missing),
        )


class Engine:
    def __init__(
        self,
        store: Store,
        providers: ProviderRegistry,
        *,
        default_tool_timeout_s: float = DEFAULT_TOOL_TIMEOUT_S,
        clock: Callable[[], float] = time.time,
        encode_event: Callable[[Event], tuple[bytes, object]] = lambda e: (repr(e).encode(), None),
        leases: LeasePolicy | None = None,
        request_id_limit: int = DEFAULT_REQUEST_ID_LIMIT,
        daemon_tools: DaemonTools | None = None,
    ) -> None:
        self.store = store
        self.daemon_tools = daemon_tools
        self.request_id_limit = request_id_limit
        self.providers = providers
        self._clock = clock
        self.leases = leases or LeasePolicy()
        #: Told of each event recorded outside a run (a resume refused for drift) once it
        #: is in the log, with its wire form (``encode_event``'s): the daemon hands it to
        #: the session's watchers, as a run's sink does with the run's events.
        self.recorded: Callable[[Event, object], None] | None = None
        #: Renews every lease this daemon holds, in one write each interval.
        self.keeper = LeaseKeeper(store, self.leases)
        self._loop = LoopSettings(
            store, clock, encode_event, default_tool_timeout_s, daemon_tools, providers
        )
        #: The inputs an expired approval queues with the save that resolves it.
        self._of_expiry: Callable[[Approval], Sequence[Enqueue]] | None = None

    @property
    def clock(self) -> Callable[[], float]:
        """The engine's one clock (seconds since the epoch): event times, saves, approvals'
        expiry and the limits' time (R81) all read it."""
        return self._clock

    @clock.setter
    def clock(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._loop = replace(self._loop, clock=clock)

    def notify_with(
        self,
        of_event: Callable[[Event], Sequence[Enqueue]],
        of_expiry: Callable[[Approval], Sequence[Enqueue]],
    ) -> None:
        """Write the inputs (the webhooks' outbox entries) that each run event and each
        expired approval queue, in the same store transaction as that event or expiry:
        no crash falls between the two."""
        self._loop = replace(self._loop, notifications=of_event)
        self._of_expiry = of_expiry

    def hold(
        self,
        session_id: str,
        control: RunControl | None = None,
        *,
        busy: Callable[[SessionBusy], Exception] | None = None,
    ) -> Held:
        """The session's lease for one piece of work: ``SessionBusy`` (or what ``busy``
        makes of it) when another daemon holds it; losing it interrupts ``control``'s run."""
        on_lost = (lambda e: control.interrupt(LEASE_LOST)) if control else (lambda e: None)
        return Held(self.store, self.leases, session_id, on_lost, self.keeper, busy)

    def leases_held(self) -> int:
        """Session leases this daemon holds now (0 on a store without leases)."""
        return len(self.keeper)

    async def run(
        self, req: RunRequest, sink: Sink, tools: ToolPort, control: RunControl
    ) -> RunOutcome | Replay | None:
        """Run (or resume) the session's agent loop until it finishes, pauses, is aborted,
        or is interrupted (``RunInterrupted``). Returns ``None`` when there is nothing to
        run (a finished session and no new input), a ``Replay`` when the request's id was
        applied by a run that ended (R74). Errors before the first event change
        nothing in the store but one: a resume refused for drift (``AgentDrift``) is
        recorded in the session's event log (:meth:`_refused`). The whole run holds the
        session's lease (``SessionBusy`` when another daemon holds it; ``LeaseLost`` when
        it is taken over meanwhile)."""
        async with self.hold(req.session_id, control) as held:
            prepared = await self._prepare(req, held=held)
            if prepared is None or isinstance(prepared, Replay):
                return prepared
            return await self._go(held, prepared, sink, tools, control)

    async def _refused(self, held: Held | None, cp: Checkpoint, found: Drift) -> None:
        """Record a resume that ``on_agent_drift = ERROR`` refused: one ``agent.drift``
        event (``refused``, the diff) appended to the session's event log, numbered after
        everything the log held, with the run that was not resumed. The checkpoint, its
        history and its approvals stay as they were (R48); a store without an event log
        keeps nothing (the log line and the AGENT_DRIFT error remain), and neither does a
        store that fails to append: the caller is still told ``AGENT_DRIFT``, its answer."""
        log.warning("agent drift refused session=%s %s", cp.session_id, found)
        if Capability.EVENT_LOG not in self.store.capabilities:
            return
        seq = await self._last_seq(cp) + 1
        event = Event(
            cp.session_id,
            cp.run_id,
            seq,
            self.clock(),
            ev.AGENT_DRIFT,
            {"drift": found, "refused": True},
        )
        data, wire = self._loop.encode_event(event)
        stored = StoredEvent(seq, data)
        try:
            await self.store.append_events(
                cp.session_id, [stored], lease=held.lease if held else None
            )
        except (StoreError, LeaseLost) as e:
            log.warning("refused drift of session %s not recorded: %s", cp.session_id, e)
            return
        if self.recorded is not None:
            self.recorded(event, wire)

    async def _go(
        self, held: Held, prepared: Prepared, sink: Sink, tools: ToolPort, control: RunControl
    ) -> RunOutcome:
        prepared.lease = held.lease
        logs.run_id.set(prepared.cp.run_id)
        try:
            return await Run(self._loop, prepared, _StepInLogs(sink), tools, control).go()
        except RunInterrupted:
            if held.lost is not None:
                raise held.lost from None
            raise

    async def delete(self, session_id: str, *, keep_history: bool = False) -> bool:
        """``Store.delete`` under the session's lease: refused with ``SessionBusy`` while
        a run of another daemon holds the session."""
        async with self.hold(session_id):
            return await self.store.delete(session_id, keep_history=keep_history)

    async def compact(
        self, session_id: str, strategy: CompactionStrategy | None = None
    ) -> Checkpoint | None:
        """R85: compact the session's transcript by hand, as far as its protected tail
        allows (``strategy``: the agent's unless given), under the session's lease
        (``SessionBusy`` while another daemon runs it). The events go to the session's
        log and watchers like a run's. Returns the checkpoint when a compaction was
        saved, ``None`` when there was nothing to compact."""
        async with self.hold(session_id) as held:
            cp = await self.store.load(session_id)
            if cp is None:
                raise CheckpointNotFound(
                    f"session {session_id!r} has no checkpoint", session_id=session_id
                )
            spec = cp.agent
            if spec is None:
                raise InvalidArgument(
                    f"session {session_id!r} has no agent to compact with",
                    reason="AGENT_REQUIRED",
                    session_id=session_id,
                )
            provider, model, settings = self.providers.resolve(spec.model, spec.model_settings_json)
            compaction.summarizer(self.providers, spec)
            cp.last_seq = await self._last_seq(cp)
            prepared = Prepared(
                cp,
                len(cp.messages),
                spec,
                provider,
                model,
                settings,
                "compact",
                [],
                None,
                "",
                lease=held.lease,
            )
            run = Run(self._loop, prepared, _Recorded(self), _NoTools(), RunControl())
            changed = await compaction.compact(
                run, cp.step_index + 1, trigger=compaction.TRIGGER_MANUAL, strategy=strategy
            )
            return cp if changed else None

    async def resolve(
        self, req: ResolveRequest, sink: Sink, tools: ToolPort, control: RunControl
    ) -> RunOutcome | Replay | None:
        """Decide a pending approval and continue its run (R29–R34). The decision is
        recorded by the run's first save, which claims the approval: of two concurrent
        resolutions exactly one wins, the other gets ``ApprovalNotFound`` (R33). A retry
        (R74: the request id applied in ``req.session_id``) resumes or replays the run
        instead."""
        approval = await self.store.get_approval(req.approval_id)
        if approval is None and req.request_id and req.session_id:
            async with self.hold(req.session_id, control) as held:
                cp = await self.store.load(req.session_id)
                if await requests.find(self.store, cp, req.request_id) is not None:
                    retry = RunRequest(
                        req.session_id, agent=req.agent, request_id=req.request_id, resume_only=True
                    )
                    prepared = await self._prepare(retry, digest=req.digest(), held=held)
                    if prepared is None or isinstance(prepared, Replay):
                        return prepared
                    return await self._go(held, prepared, sink, tools, control)
        if approval is None:
            raise _unknown_approval(req.approval_id)

        def being_resolved(e: SessionBusy) -> ApprovalNotFound:
            # Another daemon holds the session: it is resolving this approval, and the
            # loser of R33 gets the same answer as in one daemon.
            return ApprovalNotFound(
                f"approval {req.approval_id!r} is being resolved by another daemon",
                approval_id=req.approval_id,
                holder=e.metadata.get("holder"),
            )

        async with self.hold(approval.session_id, control, busy=being_resolved) as held:
            return await self._resolve(held, req, sink, tools, control)

    async def _resolve(
        self, held: Held, req: ResolveRequest, sink: Sink, tools: ToolPort, control: RunControl
    ) -> RunOutcome:
        # Read again under the lease: another daemon may have resolved it meanwhile.
        approval = await self.store.get_approval(req.approval_id)
        cp = await self.store.load(approval.session_id) if approval else None
        if approval is None or cp is None or cp.approval_id != approval.approval_id:
            raise _unknown_approval(req.approval_id)
        if (applied := await requests.find(self.store, cp, req.request_id)) is not None:
            requests.check_same_body(cp, applied, req.digest())
        spec = req.agent or cp.agent
        assert spec is not None, "a paused checkpoint always has its agent"
        if req.agent is not None:  # R70: the servers' tools as listed now
            spec = await expand(spec, self.daemon_tools, cp.agent, cp.session_id)
        fp = fingerprint(spec)
        found = drift(approval.fingerprint, fp) if req.agent else None
        levels = subagents.drifted_levels(spec, cp.subtasks) if req.agent else []
        if found and spec.on_agent_drift is DriftPolicy.ERROR:
            await self._refused(held, cp, found)
            raise _drift_error(cp.session_id, found)  # nothing claimed: the approval stays
        _refuse_levels(cp.session_id, spec, levels)
        _check_answer(approval, req)
        expired = approval.expires_at is not None and self.clock() >= approval.expires_at
        # A question's call is never run by anyone: its answer is its result (R88).
        runs = req.approved and not expired and not approval.is_question
        to_run = ([approval.call] if runs else []) + list(approval.remaining)
        if not approval.subagent_path:  # a sub-agent's call is checked by its sub-agent
            _missing_tools(cp.session_id, spec, to_run)
        provider, model, settings = self.providers.resolve(spec.model, spec.model_settings_json)
        fallback.check(self.providers, spec)  # R82
        compaction.check(self.providers, spec)  # R85
        _check_prices(self.providers, spec, resolved=(provider, model, settings))
        if expired:
            decision = Decision(False, EXPIRED_NOTE, expired=True)
        elif req.answer:  # R88: an answer is the approval of a question
            decision = Decision(True, req.note, decided_by=req.decided_by, answer=req.answer)
        else:
            decision = Decision(req.approved, req.note, decided_by=req.decided_by)
        cp.decisions[approval.call.id] = decision
        _paused(cp, approval, self.clock())
        cp.status, cp.finish_reason, cp.approval_id = Status.IN_PROGRESS, FinishReason.NONE, ""
        cp.agent, cp.fingerprint = spec, fp
        cp.last_drift = found if spec.on_agent_drift is DriftPolicy.WARN else None
        cp.last_seq = await self._last_seq(cp)
        records = requests.record(cp, req.request_id, req.digest(), self.request_id_limit)
        prepared = Prepared(
            cp,
            len(cp.messages),
            spec,
            provider,
            model,
            settings,
            "resume",
            [],
            found if spec.on_agent_drift is DriftPolicy.WARN else None,
            req.request_id,
            claim=approval.approval_id,
            requests=records,
            request_limit=self.request_id_limit,
            level_drifts=_warned(spec, cp, levels),
            resolved={
                "approval_id": approval.approval_id,
                "tool_call_id": approval.call.id,
                "tool_name": approval.call.name,
                "approved": decision.approved,
                "note": decision.note,
                "decided_by": decision.decided_by,
                "expired": decision.expired,
                **({"answer": decision.answer} if decision.answer is not None else {}),
            },
        )
        return await self._go(held, prepared, sink, tools, control)

    async def expire_approvals(self, *, page_size: int = 100) -> list[str]:
        """Resolve every expired approval as rejected (the run then waits for a resume),
        so no run waits forever unnoticed. Returns the ids it resolved."""
        if Capability.APPROVALS not in self.store.capabilities:
            return []
        now, token, done = self.clock(), "", []
        while True:
            page, token = await self.store.list_approvals(
                session_id=None, page_size=page_size, page_token=token
            )
            for approval in page:
                if approval.expires_at is None or approval.expires_at > now:
                    continue
                try:
                    if not await self._expire(approval, now):
                        continue
                except (ApprovalNotFound, LeaseLost, SessionBusy) as e:  # being resolved: fine
                    log.info("approval %s not expired by the sweeper: %s", approval.approval_id, e)
                    continue
                log.warning(
                    "approval %s of session %s expired: rejected",
                    approval.approval_id,
                    approval.session_id,
                )
                done.append(approval.approval_id)
            if not token:
                return done

    async def _expire(self, approval: Approval, now: float) -> bool:
        """Resolve one expired approval as rejected, under its session's lease."""
        async with self.hold(approval.session_id) as held:
            cp = await self.store.load(approval.session_id)
            if cp is None or cp.approval_id != approval.approval_id:
                return False
            cp.decisions[approval.call.id] = Decision(False, EXPIRED_NOTE, expired=True)
            _paused(cp, approval, now)
            cp.status, cp.finish_reason, cp.approval_id = Status.IN_PROGRESS, FinishReason.NONE, ""
            cp.version += 1
            cp.updated_at = now
            enqueue = self._of_expiry(approval) if self._of_expiry is not None else ()
            options: SaveOptions = {"claim": approval.approval_id, "lease": held.lease}
            if enqueue:
                options["enqueue"] = enqueue
            await self.store.save(cp, stored_messages=len(cp.messages), **options)
            return True

    async def _last_seq(self, cp: Checkpoint) -> int:
        """Events are numbered after everything the session's log ever held."""
        if Capability.EVENT_LOG not in self.store.capabilities:
            return cp.last_seq
        page = await self.store.read_events(cp.session_id, after_seq=2**62, limit=1)
        return max(cp.last_seq, page.last)

    async def _prepare(
        self, req: RunRequest, *, digest: str | None = None, held: Held | None = None
    ) -> Prepared | Replay | None:
        cp = await self.store.load(req.session_id)
        digest = digest or (run_digest(req) if req.request_id else "")
        applied = await requests.find(self.store, cp, req.request_id)
        if applied is not None:  # R74: a retry appends nothing and starts nothing new
            assert cp is not None
            requests.check_same_body(cp, applied, digest)
            if applied.end is not None:
                return requests.replay(cp, applied)
            req = RunRequest(
                req.session_id, agent=req.agent, request_id=req.request_id, resume_only=True
            )
        if cp is None and req.resume_only:
            raise CheckpointNotFound(
                f"session {req.session_id!r} has no checkpoint", session_id=req.session_id
            )
        if cp is not None and cp.status is Status.AWAITING_APPROVAL:
            raise SessionAwaitingApproval(
                f"session {req.session_id!r} is paused on approval {cp.approval_id!r}; resolve it "
                "first",
                session_id=req.session_id,
                approval_id=cp.approval_id,
            )
        sleeps = cp is not None and (cp.status is Status.SLEEPING or bool(req.wake))
        if sleeps and cp is not None and not _wake(req, cp, self.clock()):
            return None
        spec = req.agent or (cp.agent if cp else None)
        if spec is None:
            raise InvalidArgument(
                f"session {req.session_id!r} has no checkpoint: an agent is required",
                reason="AGENT_REQUIRED",
                session_id=req.session_id,
            )
        if req.agent is not None:  # R70: the servers' tools as listed now
            spec = await expand(spec, self.daemon_tools, cp.agent if cp else None, req.session_id)
        provider, model, settings = self.providers.resolve(spec.model, spec.model_settings_json)
        _resolve_subagents(self.providers, spec)
        fallback.check(self.providers, spec)  # R82
        compaction.check(self.providers, spec)  # R85
        _check_prices(self.providers, spec, resolved=(provider, model, settings))
        fp = fingerprint(spec)
        queued: list[Message] = []
        answers: dict[str, Message] = {}  # R53: results given in the input for pending calls
        if cp is None:
            if not req.input and not spec.instructions:
                raise InvalidArgument(
                    f"session {req.session_id!r} is new: input (or instructions) is required",
                    reason="INPUT_REQUIRED",
                    session_id=req.session_id,
                )
            take_answers(req.session_id, req.input, _not_system(req.input), ())  # R53: none
            mode, stored = "new", 0
            cp = Checkpoint(req.session_id, run_id=_new_run_id())
            cp.session_started_at = cp.run_started_at = self.clock()
            if spec.instructions:
                cp.messages.append(Message(Role.SYSTEM, spec.instructions))
            cp.messages.extend(req.input)
        elif cp.status is Status.FINISHED:
            appended = [] if req.resume_only else merge_input(cp.messages, req.input, finished=True)
            take_answers(req.session_id, req.input, appended, ())  # R53: no call is pending
            if not appended:
                return None
            mode, stored = "continue", len(cp.messages)
            cp.run_start, cp.run_id = len(cp.messages), _new_run_id()
            cp.step_index, cp.usage, cp.delegated_usage = 0, Usage(), Usage()
            cp.run_started_at, cp.run_paused_s = 0.0, 0.0
            cp.messages.extend(appended)
        else:
            mode, stored = "resume", len(cp.messages)
            queued = merge_input(cp.messages, req.input, finished=False)
            _missing_tools(req.session_id, spec, pending_calls(cp))
            answers, queued = take_answers(req.session_id, req.input, queued, _askable(spec, cp))
        found = drift(cp.fingerprint, fp) if mode == "resume" and req.agent else None
        levels = (
            subagents.drifted_levels(spec, cp.subtasks) if mode == "resume" and req.agent else []
        )
        if found and spec.on_agent_drift is DriftPolicy.ERROR:
            await self._refused(held, cp, found)
            raise _drift_error(req.session_id, found)
        _refuse_levels(req.session_id, spec, levels)
        if req.business_state_json is not None:
            cp.business_state_json = req.business_state_json
        if req.history_limit is not None:
            cp.history_limit = req.history_limit
        if req.retention_s is not None:
            cp.retention_s = req.retention_s
        cp.status, cp.finish_reason, cp.approval_id = Status.IN_PROGRESS, FinishReason.NONE, ""
        cp.agent, cp.fingerprint = spec, fp
        # R81: a run's start is stored with it (a session saved before limits: from now).
        cp.run_started_at = cp.run_started_at or self.clock()
        cp.session_started_at = cp.session_started_at or cp.run_started_at
        # Each run's first save says whether this resume drifted (a new or continued
        # conversation is not compared, R47: none).
        cp.last_drift = found if spec.on_agent_drift is DriftPolicy.WARN else None
        cp.last_seq = await self._last_seq(cp)
        if req.request_id and applied is None:
            # The input the run queues behind pending calls (R12) waits in the checkpoint,
            # so the save that records the id holds the input too (R74).
            cp.queued_input.extend(queued)
            queued = []
            records = requests.record(cp, req.request_id, digest, self.request_id_limit)
        else:
            records = []
        return Prepared(
            cp,
            stored,
            spec,
            provider,
            model,
            settings,
            mode,
            queued,
            found if spec.on_agent_drift is DriftPolicy.WARN else None,
            req.request_id,
            answers=answers,
            requests=records,
            request_limit=self.request_id_limit,
            level_drifts=_warned(spec, cp, levels),
        )


def _wake(req: RunRequest, cp: Checkpoint, now: float) -> bool:
    """R86: whether the run goes on with ``cp``, marked woken when it slept. A sleeping
    session refuses a run that does not wake it; the waker's run of a session that is
    not due, or no longer sleeps (woken by another daemon), runs nothing."""
    if cp.status is not Status.SLEEPING or cp.sleep is None:
        if req.wake == timers.RESUME:
            raise NotSleeping(
                f"session {req.session_id!r} is not sleeping ({cp.status.value})",
                session_id=req.session_id,
                status=cp.status.value,
            )
        return req.wake != timers.TIME
    if not req.wake:
        raise SessionSleeping(
            f"session {req.session_id!r} is sleeping until {timers.rfc3339(cp.sleep.wake_at)}; "
            "Resume with wake wakes it now, input with if_busy ENQUEUE waits for it",
            session_id=req.session_id,
            wake_at=timers.rfc3339(cp.sleep.wake_at),
        )
    if req.wake == timers.TIME and cp.sleep.wake_at > now:
        return False
    # R81: time asleep is paused time, as on an approval: wall-clock limits leave it out
    # unless the agent counts it.
    slept = max(0.0, now - cp.sleep.since) if cp.sleep.since else 0.0
    cp.run_paused_s += slept
    cp.session_paused_s += slept
    cp.sleep = replace(cp.sleep, woken=req.wake)
    return True


def _refuse_levels(session_id: str, spec: AgentSpec, levels: list[tuple[SubTask, Drift]]) -> None:
    """R64, ERROR: a drifted sub-agent level fails the resume; nothing was changed."""
    if levels and spec.on_agent_drift is DriftPolicy.ERROR:
        state, found = levels[0]
        err = _drift_error(session_id, found)
        err.metadata["subagent_path"] = "/".join(state.path)
        raise err


def _warned(
    spec: AgentSpec, cp: Checkpoint, levels: list[tuple[SubTask, Drift]]
) -> list[tuple[SubTask, Drift]]:
    """R64, WARN: the drifted levels to announce; IGNORE: none. Either way each level
    takes the resuming fingerprint, so the same agent never warns twice."""
    subagents.renew_fingerprints(spec, cp.subtasks)
    return levels if spec.on_agent_drift is DriftPolicy.WARN else []


def _paused(cp: Checkpoint, approval: Approval, now: float) -> None:
    """R81: the time the run waited on ``approval``, which wall-clock limits leave out
    unless the agent counts it."""
    waited = max(0.0, now - approval.created_at)
    cp.run_paused_s += waited
    cp.session_paused_s += waited


def _check_prices(
    providers: ProviderRegistry,
    spec: AgentSpec,
    capped: bool = False,
    resolved: tuple[Provider, str, dict[str, Any]] | None = None,
) -> None:
    """R78: an agent under a cost limit (its own or an ancestor's) needs a known cost for
    every model call: a price in the daemon's table, or a provider that reports it.
    ``resolved``: ``spec``'s model as the registry resolved it already."""
    capped = capped or (spec.limits is not None and spec.limits.has_cost_cap())
    if capped:
        provider, model, settings = resolved or providers.resolve(
            spec.model, spec.model_settings_json
        )

        def models() -> Iterator[tuple[str, str, Provider, str, dict[str, Any]]]:
            """Every model the agent's calls go to, resolved in turn: its fallbacks' calls
            are counted too (R82), and a compaction's summary is a model call (R85)."""
            for fallback_id in spec.fallback_models:
                yield (
                    "fallback model",
                    fallback_id,
                    *providers.resolve(fallback_id, spec.model_settings_json),
                )
            yield "model", spec.model, provider, model, settings
            if spec.compaction is not None:
                yield "summarizing model", *compaction.summarizer(providers, spec)

        for what, model_id, other, name, other_settings in models():
            if not priced(other, name, other_settings):
                raise InvalidArgument(
                    f"the {what} {model_id!r} has no price and its provider reports no cost, "
                    "so a cost_usd limit cannot be kept: add it to the provider's price table "
                    f'([providers.NAME.prices."{name}"]) or drop the cost limit',
                    reason="COST_LIMIT_WITHOUT_PRICE",
                    model=model_id,
                )
    for sub in spec.subagents:
        _check_prices(providers, sub.agent, capped)


def _resolve_subagents(providers: ProviderRegistry, spec: AgentSpec) -> None:
    """Every sub-agent's model is known and its settings valid before anything runs."""
    for sub in spec.subagents:
        providers.resolve(sub.agent.model, sub.agent.model_settings_json)
        _resolve_subagents(providers, sub.agent)


def _not_system(messages: list[Message]) -> list[Message]:
    return [m for m in messages if m.role is not Role.SYSTEM]


def _askable(spec: AgentSpec, cp: Checkpoint) -> list[ToolCall]:
    """The pending calls a resumed run would ask the client to run: not refused by their
    checks (R25), not waiting for a human (R27) or rejected by one (R30)."""
    out = []
    for call in pending_calls(cp):
        decision = cp.decisions.get(call.id)
        tool = spec.tool(call.name)
        if check_call(spec, call) is not None or tool is None or tool.server:
            continue  # a daemon tool's call (R71) is never answered by the app
        if subagents.is_task(spec, call):
            continue  # a task's result is its sub-agent's answer (R56), never the app's
        if decision is not None and not decision.approved:
            continue
        if decision is None and tool.needs_approval:
            continue
        if tool.question:  # R88: a person answers it, never the app
            continue
        out.append(call)
    return out


def _check_answer(approval: Approval, req: ResolveRequest) -> None:
    """R88: a question is answered (an answer) or declined (approved false, no answer);
    an approval takes no answer. Checked before anything is claimed."""
    if approval.is_question and req.approved and not req.answer:
        raise InvalidArgument(
            f"approval {approval.approval_id!r} is a question: give an answer "
            "(or approved=false to decline it)",
            reason="ANSWER_REQUIRED",
            approval_id=approval.approval_id,
        )
    if not approval.is_question and req.answer:
        raise InvalidArgument(
            f"approval {approval.approval_id!r} is not a question and takes no answer",
            reason="ANSWER_NOT_ALLOWED",
            approval_id=approval.approval_id,
        )


def _unknown_approval(approval_id: str) -> ApprovalNotFound:
    return ApprovalNotFound(
        f"approval {approval_id!r} is unknown or already resolved", approval_id=approval_id
    )


class _Recorded:
    """The sink of work outside a run (a manual compaction): each event, once in the
    log, goes to the daemon's watchers (``Engine.recorded``)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    async def emit(self, event: Event, encoded: object | None = None) -> None:
        if self._engine.recorded is not None and encoded is not None:
            self._engine.recorded(event, encoded)


class _NoTools:
    """The tool port of work that runs no tool (a manual compaction)."""

    def expect(self, call_id: str, *, reconcile: bool = False) -> asyncio.Future[ToolOutcome]:
        raise RuntimeError("no tool runs here")

    def forget(self, call_id: str) -> None:
        pass


class _StepInLogs:
    """A sink that makes the step of each event the step of the run's log lines."""

    def __init__(self, sink: Sink) -> None:
        self._sink = sink

    async def emit(self, event: Event, encoded: object | None = None) -> None:
        step = event.data.get("step", event.data.get("step_index"))
        if isinstance(step, int):
            logs.step.set(step)
        await self._sink.emit(event, encoded)


def _new_run_id() -> str:
    return uuid.uuid4().hex[:16]
