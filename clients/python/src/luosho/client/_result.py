"""``RunResult``: what a run's stream ended with, read from its ``run.done`` event."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import grpc

from luosho.v1 import agent_pb2

from ._errors import IncompleteRunError

__all__ = [
    "BudgetExceeded",
    "ProviderFallback",
    "ProviderRetry",
    "RunResult",
    "Usage",
    "build_result",
    "finish_reason_name",
    "status_name",
    "submit_outcome_name",
]

_FINISH_REASONS: dict[int, str] = {
    agent_pb2.FINISH_REASON_UNSPECIFIED: "",
    agent_pb2.FINISH_REASON_STOP: "stop",
    agent_pb2.FINISH_REASON_MAX_STEPS: "max_steps",
    agent_pb2.FINISH_REASON_ABORTED: "aborted",
    agent_pb2.FINISH_REASON_AWAITING_APPROVAL: "awaiting_approval",
    agent_pb2.FINISH_REASON_BUDGET_EXCEEDED: "budget_exceeded",
    agent_pb2.FINISH_REASON_DEADLINE_EXCEEDED: "deadline_exceeded",
    agent_pb2.FINISH_REASON_OUTPUT_INVALID: "output_invalid",
    agent_pb2.FINISH_REASON_SLEEPING: "sleeping",
}

_STATUSES: dict[int, str] = {
    agent_pb2.CHECKPOINT_STATUS_UNSPECIFIED: "",
    agent_pb2.CHECKPOINT_STATUS_IN_PROGRESS: "in_progress",
    agent_pb2.CHECKPOINT_STATUS_AWAITING_APPROVAL: "awaiting_approval",
    agent_pb2.CHECKPOINT_STATUS_FINISHED: "finished",
    agent_pb2.CHECKPOINT_STATUS_SLEEPING: "sleeping",
}
STATUS_VALUES: dict[str, int] = {name: value for value, name in _STATUSES.items() if name}


def finish_reason_name(value: int) -> str:
    """ "stop", "max_steps", "aborted", "awaiting_approval", "budget_exceeded",
    "deadline_exceeded", "output_invalid", "sleeping" ("" when unset or unknown)."""
    return _FINISH_REASONS.get(value, "")


def status_name(value: int) -> str:
    """ "in_progress", "awaiting_approval", "finished", "sleeping" ("" when unset or
    unknown)."""
    return _STATUSES.get(value, "")


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    model_calls: int = 0
    cost_usd: float = 0.0
    # Of prompt_tokens: read from / written to the provider's prompt cache; of
    # completion_tokens: reasoning; where the provider reports them.
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    @classmethod
    def from_proto(cls, usage: agent_pb2.Usage) -> Usage:
        return cls(
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            total_tokens=usage.total_tokens,
            model_calls=usage.model_calls,
            cost_usd=usage.cost_usd,
            cached_input_tokens=usage.cached_input_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            reasoning_tokens=usage.reasoning_tokens,
        )


@dataclass(frozen=True, slots=True)
class BudgetExceeded:
    """The ``budget.exceeded`` event of a run a limit stopped (its finish reason
    "budget_exceeded" or "deadline_exceeded"): which budget (``scope``: "run", "session",
    or "ancestor" with the agent's ``path``), which of its limits (``limit``: input_tokens,
    output_tokens, total_tokens, cost_usd, model_calls or wall_clock_ms), the limit's
    ``value``, what was ``used`` of it before the call, the call's ``worst_case``, and the
    scope's ``usage`` when it tripped."""

    scope: str
    limit: str
    value: float
    used: float
    worst_case: float
    usage: Usage
    path: tuple[str, ...] = ()

    @classmethod
    def from_proto(cls, b: agent_pb2.BudgetExceeded) -> BudgetExceeded:
        return cls(
            scope=b.scope,
            limit=b.limit,
            value=b.value,
            used=b.used,
            worst_case=b.worst_case,
            usage=Usage.from_proto(b.usage),
            path=tuple(b.path),
        )


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ProviderRetry:
    """A ``provider.retry`` event (R82): ``attempt`` (1 = the first) of a call of ``model``
    failed with ``error`` and the provider tries again after ``delay_ms``. ``subagent``:
    the path of the sub-agent whose call it was (empty: the lead)."""

    step: int
    model: str
    attempt: int
    error: str
    delay_ms: int
    subagent: tuple[str, ...] = ()

    @classmethod
    def from_event(cls, e: agent_pb2.Event) -> ProviderRetry:
        r = e.provider_retry
        return cls(r.step, r.model, r.attempt, r.error, r.delay_ms, tuple(e.subagent.path))


@dataclass(frozen=True, slots=True)
class ProviderFallback:
    """A ``provider.fallback`` event (R82): ``from_model`` failed with ``error`` (its
    ``reason`` and the provider's ``error_type``, "circuit_open" when it was skipped) and
    ``to_model`` took the same turn. ``subagent``: as for ``ProviderRetry``."""

    step: int
    from_model: str
    to_model: str
    error: str
    reason: str
    error_type: str
    subagent: tuple[str, ...] = ()

    @classmethod
    def from_event(cls, e: agent_pb2.Event) -> ProviderFallback:
        f = e.provider_fallback
        return cls(
            f.step,
            f.from_model,
            f.to_model,
            f.error,
            f.reason,
            f.error_type,
            tuple(e.subagent.path),
        )


@dataclass(frozen=True)
class RunResult:
    """The outcome of one Execute, Resume or Resolve stream.

    ``ran`` is False only for a Resume of a session with nothing left to run (the daemon
    ends that stream with no events); such a result has ``status="finished"`` and no
    ``finish_reason``.

    A run that paused on a tool needing approval has ``finish_reason="awaiting_approval"``,
    its ``approval_id``, and ``approval``: the proto ``Approval`` (gated call, remaining
    calls, expiry) from the run's ``approval.requested`` event. Decide it with ``resolve``.
    """

    session_id: str
    ran: bool
    finish_reason: str
    status: str
    final_text: str = ""
    step_index: int = 0
    usage: Usage = field(default_factory=Usage)
    approval_id: str = ""
    message_count: int = 0
    run_id: str = ""
    # Every event the stream delivered, in order (run.done last).
    events: list[agent_pb2.Event] = field(default_factory=list, repr=False)
    # The pending approval when the run paused on one (else None).
    approval: agent_pb2.Approval | None = field(default=None, repr=False)
    # Streams it took (1 unless the client retried, R75).
    attempts: int = 1
    # What tripped when a limit stopped the run (finish_reason "budget_exceeded" or
    # "deadline_exceeded"): the run's budget.exceeded event (else None).
    budget_exceeded: BudgetExceeded | None = field(default=None, repr=False)
    # The run's provider.retry and provider.fallback events, in order (R82).
    retries: tuple[ProviderRetry, ...] = field(default=(), repr=False)
    fallbacks: tuple[ProviderFallback, ...] = field(default=(), repr=False)
    # With an agent's output schema (R83): the answer as canonical JSON when it was valid
    # (finish_reason "stop"), else the validation errors (finish_reason "output_invalid").
    output_json: str = ""
    output_errors: tuple[str, ...] = ()
    # The model's readable reasoning as it streamed (the run's reasoning.delta events, R84),
    # joined; never part of final_text. The turns keep their reasoning blocks (Message.reasoning).
    reasoning: str = field(default="", repr=False)

    @property
    def output(self) -> Any:
        """The structured answer parsed (a dict, a list, ...); None without one."""
        return json.loads(self.output_json) if self.output_json else None

    def output_as(self, model: type[T] | Callable[[Any], T]) -> T:
        """The structured answer as ``model``: a pydantic model class (its
        ``model_validate``), or any callable taking the parsed value. Raises ValueError
        when the run has no structured answer."""
        if not self.output_json:
            raise ValueError(
                f"the run has no structured output (finish_reason {self.finish_reason!r}"
                + (f", errors: {list(self.output_errors)}" if self.output_errors else "")
                + ")"
            )
        validate = getattr(model, "model_validate", None)
        if callable(validate):
            return validate(self.output)  # type: ignore[no-any-return]
        return model(self.output)  # type: ignore[call-arg]


def build_result(
    session_id: str,
    events: list[agent_pb2.Event],
    *,
    empty_means_finished: bool,
    attempts: int = 1,
) -> RunResult:
    """The result of a stream that delivered ``events`` and then ended without error.

    Raises IncompleteRunError when the stream had no run.done (except for an empty stream
    when ``empty_means_finished``: Resume's "nothing to run").
    """
    if not events and empty_means_finished:
        return RunResult(
            session_id=session_id, ran=False, finish_reason="", status="finished", attempts=attempts
        )
    # run.done is the last event of a run; search from the end anyway, so an event type
    # added later after it cannot break older clients.
    last = next((e for e in reversed(events) if e.HasField("run_done")), None)
    if last is None:
        raise IncompleteRunError(
            grpc.StatusCode.UNKNOWN,
            "INCOMPLETE_RUN",
            f"the stream of session {session_id!r} ended without a run.done event "
            f"({len(events)} events received)",
            {"session_id": session_id, "events": str(len(events))},
        )
    done = last.run_done
    requested = next((e for e in reversed(events) if e.HasField("approval_requested")), None)
    approval = (
        requested.approval_requested.approval
        if requested is not None
        and done.approval_id
        and requested.approval_requested.approval.approval_id == done.approval_id
        else None
    )
    tripped = next((e for e in reversed(events) if e.HasField("budget_exceeded")), None)
    return RunResult(
        session_id=last.session_id or session_id,
        ran=True,
        finish_reason=finish_reason_name(done.finish_reason),
        status=status_name(done.status),
        final_text=done.final_text,
        step_index=done.step_index,
        usage=Usage.from_proto(done.usage),
        approval_id=done.approval_id,
        message_count=done.message_count,
        run_id=last.run_id,
        events=events,
        approval=approval,
        attempts=attempts,
        budget_exceeded=(
            BudgetExceeded.from_proto(tripped.budget_exceeded) if tripped is not None else None
        ),
        output_json=done.output_json,
        output_errors=tuple(done.output_errors),
        retries=tuple(ProviderRetry.from_event(e) for e in events if e.HasField("provider_retry")),
        fallbacks=tuple(
            ProviderFallback.from_event(e) for e in events if e.HasField("provider_fallback")
        ),
        reasoning="".join(e.reasoning_delta.text for e in events if e.HasField("reasoning_delta")),
    )


_SUBMIT_OUTCOMES: dict[int, str] = {
    agent_pb2.SUBMIT_OUTCOME_ACCEPTED: "accepted",
    agent_pb2.SUBMIT_OUTCOME_DUPLICATE: "duplicate",
}


def submit_outcome_name(value: int) -> str:
    """ "accepted" (the run took the result) or "duplicate" (it already had one)."""
    return _SUBMIT_OUTCOMES.get(value, "")
