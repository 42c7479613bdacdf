"""A session's state: the checkpoint, its tool calls, decisions, approvals and sub-tasks,
and the requests it applied (R74)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from .agent import AgentSpec, Drift, Fingerprint
from .messages import Message, Role, ToolCall, Usage


class Status(StrEnum):
    IN_PROGRESS = "in-progress"
    AWAITING_APPROVAL = "awaiting-approval"
    FINISHED = "finished"
    #: R86: the agent called ``sleep``; the session waits for its wake time, held by no
    #: daemon.
    SLEEPING = "sleeping"


class FinishReason(StrEnum):
    NONE = ""
    STOP = "stop"
    MAX_STEPS = "max_steps"
    ABORTED = "aborted"
    AWAITING_APPROVAL = "awaiting-approval"
    #: A limit on spend (R79) or on time (R81) stopped the run before a model call.
    BUDGET_EXCEEDED = "budget_exceeded"
    DEADLINE_EXCEEDED = "deadline_exceeded"
    #: The final answer was not valid against the agent's output schema after its repair
    #: turn (R83).
    OUTPUT_INVALID = "output_invalid"
    #: The run ended on the agent's ``sleep`` call (R86).
    SLEEPING = "sleeping"


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    call: ToolCall
    step: int
    result: Message | None
    #: How many times the call was handed out (R77); 0: never.
    attempts: int = 0


@dataclass(frozen=True, slots=True)
class Decision:
    """A human's decision on a gated tool call, recorded in the checkpoint when claimed."""

    approved: bool
    note: str = ""
    expired: bool = False
    #: Who decided (R92): ``token NAME``, ``mtls SUBJECT``, ``anonymous``; ``""`` when
    #: the approval expired, or in a header saved before it was recorded.
    decided_by: str = ""
    #: R88: the answer to a question, its call's result; ``None`` for an approval's
    #: decision or a declined question (absent from the encoding then).
    answer: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        if self.answer is None:
            del d["answer"]
        return d


@dataclass(frozen=True, slots=True)
class Approval:
    """A pending approval (R27): the gated call and the calls of its turn after it."""

    approval_id: str
    session_id: str
    call: ToolCall
    remaining: tuple[ToolCall, ...]
    step: int
    fingerprint: Fingerprint | None
    created_at: float
    expires_at: float | None = None
    #: The sub-agent whose call this is, outermost first (R60); () for the lead's.
    subagent_path: tuple[str, ...] = ()
    #: R88: the text asked when the call is a question tool's; ``None`` for an approval.
    question: str | None = None

    @property
    def is_question(self) -> bool:
        return self.question is not None

    def to_dict(self) -> dict[str, Any]:
        d = self._dict()
        if self.subagent_path:
            d["subagent_path"] = list(self.subagent_path)
        if self.question is not None:
            d["question"] = self.question
        return d

    def _dict(self) -> dict[str, Any]:
        return {
            "approval_id": self.approval_id,
            "session_id": self.session_id,
            "call": self.call.to_dict(),
            "remaining": [c.to_dict() for c in self.remaining],
            "step": self.step,
            "fingerprint": self.fingerprint.to_dict() if self.fingerprint else None,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Approval:
        return cls(
            d["approval_id"],
            d["session_id"],
            ToolCall.from_dict(d["call"]),
            tuple(ToolCall.from_dict(c) for c in d["remaining"]),
            d["step"],
            Fingerprint.from_dict(d["fingerprint"]) if d["fingerprint"] else None,
            d["created_at"],
            d.get("expires_at"),
            tuple(d.get("subagent_path", ())),
            d.get("question"),
        )


@dataclass(frozen=True, slots=True)
class RunEnd:
    """How a run ended (its ``run.done``), kept with the requests that started or resumed
    it (R74), so a retry can end its replay as the run ended even once the event log no
    longer keeps that ``run.done``. The final text is not kept: it is the last assistant
    message of ``messages[run_start:message_count]``, which the transcript still holds."""

    seq: int
    time: float
    finish_reason: FinishReason
    status: Status
    step_index: int
    usage: Usage
    approval_id: str
    message_count: int
    run_start: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "time": self.time,
            "finish_reason": self.finish_reason.value,
            "status": self.status.value,
            "step_index": self.step_index,
            "usage": self.usage.to_dict(),
            "approval_id": self.approval_id,
            "message_count": self.message_count,
            "run_start": self.run_start,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunEnd:
        return cls(
            d["seq"],
            d["time"],
            FinishReason(d["finish_reason"]),
            Status(d["status"]),
            d["step_index"],
            Usage.from_dict(d["usage"]),
            d["approval_id"],
            d["message_count"],
            d["run_start"],
        )


#: The request ids a session keeps unless the daemon is configured otherwise (R74).
DEFAULT_REQUEST_ID_LIMIT = 1000


@dataclass(frozen=True, slots=True)
class AppliedRequest:
    """A request id applied to the session (R74): the digest of the request's body, the
    run it started or resumed, the seq of the ``run.start`` it emitted, and how that run
    ended (``None`` while it has not)."""

    id: str
    digest: str
    run_id: str
    first_seq: int
    end: RunEnd | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "digest": self.digest,
            "run_id": self.run_id,
            "first_seq": self.first_seq,
        }
        if self.end is not None:
            d["end"] = self.end.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> AppliedRequest:
        end = d.get("end")
        return cls(
            d["id"],
            d["digest"],
            d["run_id"],
            d["first_seq"],
            RunEnd.from_dict(end) if end else None,
        )


@dataclass(frozen=True, slots=True)
class Compacted:
    """R85: what compaction made of the transcript for the model. The transcript itself
    stays whole (History, forks and GetSession see every message); a model call is sent
    its compacted view: the messages before ``summarized_before`` as ``summary`` (but the
    system and pinned ones, kept as they are), and the tool results before
    ``pruned_before`` as a short marker. Indexes into ``Checkpoint.messages``, which only
    grows, so they stay true as the transcript goes on."""

    pruned_before: int = 0
    summarized_before: int = 0
    summary: str = ""
    #: The version of the save that recorded this compaction (its History entry).
    version: int = 0
    #: Compactions the session went through.
    count: int = 0
    #: What the session's summary calls used, by the model that wrote them: their turns
    #: are in no message, so ``Checkpoint.usage_by_model`` counts them from here.
    summary_usage: dict[str, Usage] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "pruned_before": self.pruned_before,
            "summarized_before": self.summarized_before,
            "summary": self.summary,
            "version": self.version,
            "count": self.count,
        }
        if self.summary_usage:
            d["summary_usage"] = {k: u.to_dict() for k, u in self.summary_usage.items()}
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Compacted:
        used = d.get("summary_usage", {})
        return cls(
            d["pruned_before"],
            d["summarized_before"],
            d["summary"],
            d["version"],
            d["count"],
            {k: Usage.from_dict(u) for k, u in used.items()},
        )


@dataclass(frozen=True, slots=True)
class Sleep:
    """A session's ``sleep`` call (R86): the call, when it wakes (the engine's clock,
    seconds since the epoch), what woke it (``""`` while it sleeps, then ``time``,
    ``resume`` (Resume with wake) or ``input`` (input with if_busy INTERRUPT)), and when
    it began to sleep (0: not recorded)."""

    call_id: str
    wake_at: float
    woken: str = ""
    since: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"call_id": self.call_id, "wake_at": self.wake_at}
        if self.woken:
            d["woken"] = self.woken
        if self.since:
            d["since"] = self.since
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Sleep:
        return cls(d["call_id"], d["wake_at"], d.get("woken", ""), d.get("since", 0.0))


@dataclass(slots=True)
class SubTask:
    """The nested state of an unfinished sub-agent (R59): its own transcript, steps, usage
    and fingerprint, and the states of its own unfinished sub-agents (by its call ids).
    It lives in the session's checkpoint, so every save of it is a save of the session."""

    name: str
    task_id: str
    depth: int
    path: tuple[str, ...]
    messages: list[Message] = field(default_factory=list)
    step_index: int = 0
    usage: Usage = field(default_factory=Usage)
    fingerprint: Fingerprint | None = None
    children: dict[str, SubTask] = field(default_factory=dict)
    #: The usage of its own sub-agents' model calls (``usage`` counts its own): with
    #: ``usage``, what its limits count (R80).
    delegated: Usage = field(default_factory=Usage)
    #: How many of ``messages`` the store holds (the sub-agent's ``stored_messages``):
    #: set by the store's load and by the run after each save, so a save writes only
    #: the rest (O(new messages) at every level). Not part of the state's value.
    stored: int = field(default=0, compare=False)

    def to_dict(self, *, with_messages: bool = True) -> dict[str, Any]:
        """``with_messages=False``: without the transcripts (here and in ``children``),
        which the store kit keeps in the session's message log instead."""
        d: dict[str, Any] = {
            "name": self.name,
            "task_id": self.task_id,
            "depth": self.depth,
            "path": list(self.path),
            "step_index": self.step_index,
            "usage": self.usage.to_dict(),
            "fingerprint": self.fingerprint.to_dict() if self.fingerprint else None,
        }
        if with_messages:
            d["messages"] = [m.to_dict() for m in self.messages]
        if self.children:
            d["children"] = {
                k: v.to_dict(with_messages=with_messages) for k, v in self.children.items()
            }
        if self.delegated.model_calls:  # absent when none, as in states older than it
            d["delegated"] = self.delegated.to_dict()
        return d

    def copy(self) -> SubTask:
        """A copy sharing no mutable part with this state, its children's too (messages,
        the path and the fingerprint are immutable: shared)."""
        return SubTask(
            self.name,
            self.task_id,
            self.depth,
            self.path,
            list(self.messages),
            self.step_index,
            self.usage.copy(),
            self.fingerprint,
            {k: v.copy() for k, v in self.children.items()},
            self.delegated.copy(),
            self.stored,
        )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SubTask:
        """A state of :meth:`to_dict`; without ``"messages"`` its transcript is empty."""
        return cls(
            d["name"],
            d["task_id"],
            d["depth"],
            tuple(d["path"]),
            [Message.from_dict(m) for m in d.get("messages", ())],
            d["step_index"],
            Usage.from_dict(d["usage"]),
            Fingerprint.from_dict(d["fingerprint"]) if d["fingerprint"] else None,
            {k: SubTask.from_dict(v) for k, v in d.get("children", {}).items()},
            Usage.from_dict(d["delegated"]) if "delegated" in d else Usage(),
        )

    def end(self) -> SubTask:
        """Make this task what the session keeps once it has ended (R65), in place (the
        run's saves update ``stored`` on this very object): its transcript and where it
        ran, its steps counted from the transcript; usage, fingerprint and children are
        the run's business, not kept. Returns it."""
        self.step_index = sum(1 for m in self.messages if m.role is Role.ASSISTANT)
        self.usage, self.fingerprint, self.children = Usage(), None, {}
        self.delegated = Usage()
        return self


@dataclass(slots=True)
class Checkpoint:
    """A session's whole state. ``messages`` only grows within a session.

    ``run_start`` is the index in ``messages`` where the current run began, so the run's
    tool calls and steps are derived from the transcript instead of being stored twice.
    ``version`` is incremented by every save (the store refuses an out-of-order one).
    ``decisions`` holds approval decisions not yet acted on (call id → decision);
    ``queued_input`` is input to append once the pending tool calls have results (fork);
    ``history_limit`` overrides the store's history limit for this session.
    ``last_drift`` is the agent's diff when the run's last resume was made by a different
    agent and went on (WARN), ``None`` otherwise (and in headers saved before it existed).
    ``run_requests`` are the applied requests (R74) of the current run that have not
    ended yet (usually one): the save that ends the run ends them too. The session's
    applied requests themselves are records the store keeps beside the checkpoint
    (``Store.save(requests=...)``, ``Store.find_request``), not in the header, so a save
    costs O(new records) however many requests the session applied.
    """

    session_id: str
    messages: list[Message] = field(default_factory=list)
    step_index: int = 0
    usage: Usage = field(default_factory=Usage)
    total_usage: Usage = field(default_factory=Usage)
    business_state_json: str = "null"
    status: Status = Status.IN_PROGRESS
    approval_id: str = ""
    finish_reason: FinishReason = FinishReason.NONE
    fingerprint: Fingerprint | None = None
    agent: AgentSpec | None = None
    run_id: str = ""
    run_start: int = 0
    updated_at: float = 0.0
    version: int = 0
    last_seq: int = 0
    decisions: dict[str, Decision] = field(default_factory=dict)
    queued_input: list[Message] = field(default_factory=list)
    history_limit: int | None = None
    run_requests: list[AppliedRequest] = field(default_factory=list)
    last_drift: Drift | None = None
    #: Seconds this session is kept once finished (0: forever); ``None``: the daemon's.
    retention_s: float | None = None
    #: Unfinished sub-agents of the pending turn, by the lead's ``task`` call id (R59).
    subtasks: dict[str, SubTask] = field(default_factory=dict)
    #: The sub-agents' usage in this run, also counted in ``usage`` (R56).
    delegated_usage: Usage = field(default_factory=Usage)
    #: Tasks started in the session: the next one is ``task_<task_count + 1>``.
    task_count: int = 0
    #: The session's finished tasks, by task id (R65): each one's transcript, kept with
    #: the session (see :meth:`SubTask.end`).
    tasks: dict[str, SubTask] = field(default_factory=dict)
    #: Results of the pending turn submitted before an earlier call of the turn had its
    #: own, by call id (R76): durable, but outside the transcript until every earlier call
    #: has its result (the transcript stays in call order, R2).
    early_results: dict[str, Message] = field(default_factory=dict)
    #: R77: how many times each call of the run was handed out (a ``tool.call`` event), by
    #: call id (a sub-agent's by its qualified id). Saved by the save that hands the call
    #: out, so a hand-out after a restart, a takeover or a Resume counts one more. Entries
    #: of earlier runs are dropped when a run starts. With ``attempts_once``, a lead call
    #: whose result is in the transcript keeps an entry only when it was not handed out
    #: exactly once (0: never): read the counts with :meth:`hand_outs` and
    #: :meth:`hand_out_counts`, not from this dict.
    attempts: dict[str, int] = field(default_factory=dict)
    #: R81: when each call of the run without a result yet was first handed out (the
    #: engine's clock, seconds), by call id like ``attempts`` and saved with it: a call's
    #: tool timeout counts from there, across restarts, takeovers and Resume, not from a
    #: process's own hand-out. A call's entry goes when its result is recorded.
    handed_out_at: dict[str, float] = field(default_factory=dict)
    #: R77: ``True`` (every run begun since it exists): a lead call's entry in
    #: ``attempts`` goes when its result is recorded if it was handed out once, and a call
    #: answered without a hand-out gets an entry of 0, so that a header holds the calls
    #: still waiting and the exceptions rather than one entry for every call of a long
    #: run. ``False`` (a header older than it, until its session's next run begins):
    #: every handed-out call keeps its entry, and none means never.
    attempts_once: bool = False
    #: What the store's message log holds of ``agent`` and ``fingerprint`` (store kit,
    #: ``store.kit.tasklog``): how many agent records the stored prefix holds, and the
    #: text of its last one (``""``: none, the agent unset). Set by a durable store's
    #: load and save, like ``SubTask.stored``, so a save writes the agent only when it
    #: changed. Not part of the state's value.
    stored_agent: tuple[int, str] = field(default=(0, ""), compare=False, repr=False)
    #: R91: this save's link of the session's hash chain (hex SHA-256 of the previous
    #: save's link, this header without it, and the log records this save added; see
    #: ``store.kit.chain``), set by the store kit at each save. ``""``: none recorded (a
    #: header saved before the chain existed, or never saved). A property of the stored
    #: history rather than of the state's value, so not compared.
    chain: str = field(default="", compare=False, repr=False)
    #: R91: a fork's first save links to the chain of the history entry it was forked
    #: from; that link is kept here, in the header of the fork's first save (version 1)
    #: only, so ``luoshod store verify`` can check that save too.
    chain_from: str = field(default="", compare=False, repr=False)
    #: R81: when the current run, and the session, started (the engine's clock, stored so
    #: a wall-clock limit holds across daemons and restarts), and the time each spent
    #: paused on approvals. 0: not recorded (a header saved before limits existed).
    run_started_at: float = 0.0
    run_paused_s: float = 0.0
    session_started_at: float = 0.0
    session_paused_s: float = 0.0
    #: R85: the compacted view the model is sent; ``None``: the whole transcript.
    compaction: Compacted | None = None
    #: R86: the ``sleep`` the session is in, or was woken from and whose call has no
    #: result yet; ``None`` otherwise.
    sleep: Sleep | None = None

    @property
    def wake_at(self) -> float | None:
        """R86: when a sleeping session wakes; ``None`` unless it sleeps."""
        if self.status is Status.SLEEPING and self.sleep is not None:
            return self.sleep.wake_at
        return None

    def all_tasks(self) -> list[SubTask]:
        """Every task of the session: the unfinished ones at every level, outermost
        first, then the finished ones."""
        found: list[SubTask] = []
        pending = list(self.subtasks.values())
        while pending:
            state = pending.pop(0)
            found.append(state)
            pending[:0] = state.children.values()
        found.extend(self.tasks.values())
        return found

    def tool_call_records(self) -> list[ToolCallRecord]:
        """The current run's tool calls in call order, each with its result if recorded."""
        results = {
            m.tool_call_id: m for m in self.messages[self.run_start :] if m.role is Role.TOOL
        }
        records: list[ToolCallRecord] = []
        step = 0
        for m in self.messages[self.run_start :]:
            if m.role is Role.ASSISTANT:
                step += 1
                records.extend(
                    ToolCallRecord(
                        c, step, result := results.get(c.id), self.hand_outs(c.id, result)
                    )
                    for c in m.tool_calls
                )
        return records

    def hand_outs(self, call_id: str, result: Message | None) -> int:
        """How many times the lead's call ``call_id`` of the run was handed out (R77);
        ``result``: its result in the transcript, if any (see :attr:`attempts_once`)."""
        return self.attempts.get(call_id, 1 if result is not None and self.attempts_once else 0)

    def hand_out_counts(self) -> dict[str, int]:
        """Every call of the run handed out at least once, lead's and sub-agents', with
        its count (R77): :attr:`attempts` as it reads."""
        counts = {k: n for k, n in self.attempts.items() if n}
        for m in self.messages[self.run_start :]:  # the lead's calls with a result
            if m.role is Role.TOOL and (n := self.hand_outs(m.tool_call_id, m)):
                counts[m.tool_call_id] = n
        return counts

    def settle_attempts(self, call_id: str) -> None:
        """The lead's call ``call_id`` has its result in the transcript now: its count is
        final, kept only when not 1 (see :attr:`attempts_once`)."""
        if self.attempts_once:
            n = self.attempts.pop(call_id, 0)
            if n != 1:
                self.attempts[call_id] = n

    def spell_out_attempts(self) -> None:
        """Every handed-out call's count as an entry of :attr:`attempts`, as headers older
        than :attr:`attempts_once` hold them: for a transcript about to be rewritten (a
        fork's patch), whose results say nothing of their calls' counts any more."""
        if self.attempts_once:
            self.attempts = self.hand_out_counts()
            self.attempts_once = False

    def usage_by_model(self) -> dict[str, Usage]:
        """The usage of the session's turns by the model that produced them (R78): the
        transcript's and its sub-agents' turns (the unfinished ones at every level, then
        the finished tasks that are not being continued). Turns without a recorded usage
        are left out."""
        out: dict[str, Usage] = {}

        def add(messages: list[Message]) -> None:
            for m in messages:
                if m.usage is not None:
                    out.setdefault(m.model, Usage()).add(m.usage)

        add(self.messages)
        if self.compaction is not None:  # R85: the summary calls
            for model, u in self.compaction.summary_usage.items():
                out.setdefault(model, Usage()).add(u)
        live: set[str] = set()
        states = list(self.subtasks.values())
        while states:
            st = states.pop()
            live.add(st.task_id)
            add(st.messages)
            states += st.children.values()
        for task_id, task in self.tasks.items():
            if task_id not in live:
                add(task.messages)
        return out

    def header_dict(self, *, with_agent: bool = True, with_tasks: bool = True) -> dict[str, Any]:
        """Everything but the messages: what a driver stores per save besides new messages.
        ``with_agent=False``: without the ``agent`` key (its encoding is cached apart, see
        ``store.kit.codec.encode_header``). ``with_tasks=False``: without the tasks'
        transcripts and the finished tasks, which the kit's encoding keeps in the
        session's message log (``store.kit.tasklog``)."""
        h = {
            "session_id": self.session_id,
            "step_index": self.step_index,
            "usage": self.usage.to_dict(),
            "total_usage": self.total_usage.to_dict(),
            "business_state_json": self.business_state_json,
            "status": self.status.value,
            "approval_id": self.approval_id,
            "finish_reason": self.finish_reason.value,
            "fingerprint": self.fingerprint.to_dict() if self.fingerprint else None,
            "run_id": self.run_id,
            "run_start": self.run_start,
            "updated_at": self.updated_at,
            "version": self.version,
            "last_seq": self.last_seq,
            "decisions": {k: v.to_dict() for k, v in self.decisions.items()},
            "queued_input": [m.to_dict() for m in self.queued_input],
            "history_limit": self.history_limit,
        }
        if self.run_requests:  # absent when empty: headers without them stay as they were
            h["run_requests"] = [r.to_dict() for r in self.run_requests]
        if self.last_drift is not None:  # absent when none, as in headers older than it
            h["last_drift"] = self.last_drift.to_dict()
        if self.retention_s is not None:  # likewise
            h["retention_s"] = self.retention_s
        # Sub-agent state (R59), absent when none: headers without it stay as they were.
        if self.subtasks:
            h["subtasks"] = {
                k: v.to_dict(with_messages=with_tasks) for k, v in self.subtasks.items()
            }
        if self.tasks and with_tasks:
            h["tasks"] = {k: v.to_dict() for k, v in self.tasks.items()}
        if self.delegated_usage.model_calls:
            h["delegated_usage"] = self.delegated_usage.to_dict()
        if self.task_count:
            h["task_count"] = self.task_count
        if self.early_results:  # absent when none (R76), as in headers older than it
            h["early_results"] = {k: m.to_dict() for k, m in self.early_results.items()}
        if self.attempts:  # absent when none (R77), as in headers older than it
            h["attempts"] = dict(self.attempts)
        if self.handed_out_at:  # absent when none (R81), as in headers older than it
            h["handed_out_at"] = dict(self.handed_out_at)
        if self.attempts_once:  # absent when not (R77), as in headers older than it
            h["attempts_once"] = True
        if with_agent:
            h["agent"] = self.agent.to_dict() if self.agent else None
        # R81's times: absent when 0, as in headers older than them (spelled out: every
        # save builds a header).
        if self.run_started_at:
            h["run_started_at"] = self.run_started_at
        if self.run_paused_s:
            h["run_paused_s"] = self.run_paused_s
        if self.session_started_at:
            h["session_started_at"] = self.session_started_at
        if self.session_paused_s:
            h["session_paused_s"] = self.session_paused_s
        if self.compaction is not None:  # absent when none, as in headers older than R85
            h["compaction"] = self.compaction.to_dict()
        if self.sleep is not None:  # absent when none (R86), as in headers older than it
            h["sleep"] = self.sleep.to_dict()
        if self.chain_from and self.version == 1:  # a fork's first save only (R91)
            h["chain_from"] = self.chain_from
        if self.chain:  # last, absent when none (R91), as in headers older than it
            h["chain"] = self.chain
        return h

    @classmethod
    def from_header(cls, h: dict[str, Any], messages: list[Message]) -> Checkpoint:
        return cls(
            session_id=h["session_id"],
            messages=messages,
            step_index=h["step_index"],
            usage=Usage.from_dict(h["usage"]),
            total_usage=Usage.from_dict(h["total_usage"]),
            business_state_json=h["business_state_json"],
            status=Status(h["status"]),
            approval_id=h["approval_id"],
            finish_reason=FinishReason(h["finish_reason"]),
            fingerprint=Fingerprint.from_dict(h["fingerprint"]) if h["fingerprint"] else None,
            agent=AgentSpec.from_dict(h["agent"]) if h["agent"] else None,
            run_id=h["run_id"],
            run_start=h["run_start"],
            updated_at=h["updated_at"],
            version=h["version"],
            last_seq=h["last_seq"],
            decisions={k: Decision(**v) for k, v in h.get("decisions", {}).items()},
            queued_input=[Message.from_dict(m) for m in h.get("queued_input", ())],
            history_limit=h.get("history_limit"),
            # A "request_ids" key (headers of an unreleased build) is ignored.
            run_requests=[AppliedRequest.from_dict(r) for r in h.get("run_requests", ())],
            last_drift=drift_of(h),
            retention_s=h.get("retention_s"),
            subtasks={k: SubTask.from_dict(v) for k, v in h.get("subtasks", {}).items()},
            delegated_usage=Usage.from_dict(h["delegated_usage"])
            if "delegated_usage" in h
            else Usage(),
            task_count=h.get("task_count", 0),
            tasks={k: SubTask.from_dict(v) for k, v in h.get("tasks", {}).items()},
            early_results={k: Message.from_dict(m) for k, m in h.get("early_results", {}).items()},
            attempts=dict(h.get("attempts", {})),
            handed_out_at=dict(h.get("handed_out_at", {})),
            attempts_once=h.get("attempts_once", False),
            chain=h.get("chain", ""),
            chain_from=h.get("chain_from", ""),
            run_started_at=h.get("run_started_at", 0.0),
            run_paused_s=h.get("run_paused_s", 0.0),
            session_started_at=h.get("session_started_at", 0.0),
            session_paused_s=h.get("session_paused_s", 0.0),
            compaction=Compacted.from_dict(h["compaction"]) if "compaction" in h else None,
            sleep=Sleep.from_dict(h["sleep"]) if "sleep" in h else None,
        )


def drift_of(header: dict[str, Any]) -> Drift | None:
    """The ``last_drift`` of a stored header (none in one saved before it existed)."""
    d = header.get("last_drift")
    return Drift.from_dict(d) if d else None
