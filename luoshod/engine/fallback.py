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
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..domain import AgentSpec
from ..errors import InvalidArgument, ProviderError, ProviderRejected
from ..providers import ModelResponse, Provider, ProviderRegistry
from . import budget


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


async def call_chain(
    models: Sequence[Candidate],
    call: Callable[[Candidate], Awaitable[ModelResponse | None]],
    switch: Callable[[Candidate, Candidate, ProviderError], Awaitable[budget.Trip | None]],
) -> tuple[ModelResponse | None, Candidate] | budget.Trip:
    """``call`` each model in turn until one answers (or the run stops: ``None``); before
    the next one, ``switch`` announces it and may return the limit it would cross. The
    last model's failure, or a failure that does not fall back, is raised."""
    for i, model in enumerate(models):
        try:
            return await call(model), model
        except ProviderError as e:
            if i + 1 == len(models) or not falls_back(e):
                raise
            if (trip := await switch(model, models[i + 1], e)) is not None:
                return trip
    raise AssertionError("a chain of models is never empty")


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


__all__ = ["Candidate", "call_chain", "chain", "check", "event_data", "falls_back", "ready"]
