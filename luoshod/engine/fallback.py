"""A turn's model and its fallbacks (docs/reference/rules.md R82).

An agent names its model and, in ``fallback_models``, the models that take the same turn,
in order, when the one before fails with a retryable error after the provider's own
retries (``providers/retry.py``), or is not called at all because its circuit is open or
the session's backoff holds it (``providers/guard.py``): that refusal is immediate, so a
dead provider costs a run no wait once its circuit is open. A refused call
(``ProviderRejected``: HTTP 400, 401, 404, a context too long, a malformed answer) does not
fall back: the request itself is wrong, and another model would most likely refuse it too
or, worse, answer a request its author did not mean to send it.

Each fallback takes the agent's ``model_settings_json``, and is checked as the model is
when the request arrives. The fallbacks are not part of the agent's fingerprint: a turn
answered by a fallback is not agent drift.

:func:`answer` makes a turn's call for the lead agent's loop and for a sub-agent's task
alike: each model in turn, a ``provider.retry`` event for each retry of one, a
``provider.fallback`` event before the next one, and the budget reserved for the call in
flight (R79) moved from the model that failed to the one that takes over, then released.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..domain import AgentSpec
from ..errors import InvalidArgument, ProviderError, ProviderRejected
from ..providers import ModelResponse, Provider, ProviderRegistry
from . import budget
from . import events as ev

log = logging.getLogger("luoshod.engine")

#: What a model's call is given to report a retry of the provider's own:
#: ``(attempt, error, wait_s)``.
OnRetry = Callable[[int, str, float], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Candidate:
    """One model that may take a turn: its id ("provider:model") as the agent names it."""

    model_id: str
    provider: Provider
    model: str
    settings: dict[str, Any]


def chain(
    registry: ProviderRegistry | None,
    spec: AgentSpec,
    first: tuple[Provider, str, dict[str, Any]],
) -> list[Candidate]:
    """The agent's model (resolved already as ``first``), then each fallback."""
    out = [Candidate(spec.model, *first)]
    if spec.fallback_models:
        assert registry is not None, "an engine with fallback models is given its providers"
        for model_id in spec.fallback_models:
            out.append(Candidate(model_id, *registry.resolve(model_id, spec.model_settings_json)))
    return out


def check(registry: ProviderRegistry, spec: AgentSpec) -> None:
    """R82: each fallback of ``spec`` and of its sub-agents is a known model whose provider
    takes the agent's settings, named once and not the model itself; raise
    ``InvalidArgument`` otherwise."""
    seen = {spec.model}
    for model_id in spec.fallback_models:
        if model_id in seen:
            raise InvalidArgument(
                f"fallback_models names {model_id!r} twice (or it is the model itself)",
                reason="INVALID_FALLBACK_MODELS",
                field="agent.fallback_models",
                model=model_id,
            )
        seen.add(model_id)
        registry.resolve(model_id, spec.model_settings_json)
    for sub in spec.subagents:
        check(registry, sub.agent)


def falls_back(error: ProviderError) -> bool:
    """A failure the next model may not have: anything but a refused request."""
    return not isinstance(error, ProviderRejected)


def event_data(step: int, failed: Candidate, to: Candidate, error: ProviderError) -> dict[str, Any]:
    """The ``provider.fallback`` event's data."""
    return {
        "step": step,
        "from_model": failed.model_id,
        "to_model": to.model_id,
        "error": error.message,
        "reason": error.reason,
        "error_type": error.metadata.get("error_type", ""),
    }


def retry_data(step: int, model_id: str, attempt: int, error: str, wait_s: float) -> dict[str, Any]:
    """The ``provider.retry`` event's data."""
    return {
        "step": step,
        "model": model_id,
        "attempt": attempt,
        "error": error,
        "delay_ms": round(wait_s * 1000),
    }


class Reservation:
    """The worst case reserved for the model call in flight (R79) at every budget level
    it counts toward (R80); a fallback's replaces it (R82), and the call's end releases
    it (its real usage is counted then)."""

    def __init__(self, budgets: budget.Budgets | None, levels: Sequence[budget.Level]) -> None:
        self.budgets, self.levels = budgets, levels
        self.worst: budget.Worst | None = None

    def hold(self, worst: budget.Worst | None) -> None:
        """``worst`` is reserved (admitted already); the one held before is released."""
        self.release()
        self.worst = worst

    def release(self) -> None:
        if self.worst is not None and self.budgets is not None:
            self.budgets.release(self.levels, self.worst)
        self.worst = None


async def answer(
    models: Sequence[Candidate],
    step: int,
    call: Callable[[Candidate, OnRetry], Awaitable[ModelResponse | None]],
    *,
    session_id: str,
    note: Callable[[str, dict[str, Any]], None],
    write: Callable[[], Awaitable[None]],
    reserved: Reservation,
    admit: Callable[[Candidate], budget.Worst | budget.Trip | None],
) -> tuple[ModelResponse | None, Candidate] | budget.Trip:
    """The turn's call (``step``): ``call`` each model in turn until one answers (or the
    run stops: ``None``). ``note`` queues an event and ``write`` writes the queued ones:
    ``provider.retry`` for each retry of a model, ``provider.fallback`` before the next
    one. With budgets, the next model's worst case (``admit``: reserved at every level,
    or the limit it would cross, returned instead of calling it) replaces the failed
    one's in ``reserved``, released when the call ends. The last model's failure, or a
    failure that does not fall back, is raised."""
    try:
        for i, model in enumerate(models):

            async def on_retry(
                attempt: int, error: str, wait_s: float, model: Candidate = model
            ) -> None:
                note(ev.PROVIDER_RETRY, retry_data(step, model.model_id, attempt, error, wait_s))
                await write()

            try:
                return await call(model, on_retry), model
            except ProviderError as e:
                if i + 1 == len(models) or not falls_back(e):
                    raise
                to = models[i + 1]
                log.warning(
                    "model call failed session=%s %s, falling back to %s: %s",
                    session_id,
                    model.model_id,
                    to.model_id,
                    e.message,
                )
                note(ev.PROVIDER_FALLBACK, event_data(step, model, to, e))
                await write()
                if reserved.budgets is None:
                    continue
                reserved.release()
                worst = admit(to)
                if isinstance(worst, budget.Trip):
                    return worst
                reserved.hold(worst)
        raise AssertionError("a chain of models is never empty")
    finally:
        reserved.release()


def ready(models: Sequence[Candidate], session_id: str, scope: str = "") -> None:
    """Raise the first model's refusal when no model of the chain would be called now."""
    first: ProviderError | None = None
    for model in models:
        try:
            model.provider.ready(model.model, session_id, scope)
            return
        except ProviderError as e:
            first = first or e
    if first is not None:
        raise first


__all__ = [
    "Candidate",
    "OnRetry",
    "Reservation",
    "answer",
    "chain",
    "check",
    "event_data",
    "falls_back",
    "ready",
]
