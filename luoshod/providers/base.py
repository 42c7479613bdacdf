"""The provider interface: one model call in, one assistant turn out."""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..config import Price
from ..domain import AgentSpec, Message, ReasoningBlock, ToolCall, Usage


@dataclass(frozen=True, slots=True)
class ModelRequest:
    session_id: str
    model: str  # the part after "provider:"
    messages: Sequence[Message]
    agent: AgentSpec
    settings: dict[str, Any]
    #: Called with each piece of text while the model writes, by providers that stream
    #: (opt-in per agent); the response still carries the whole text.
    on_text: Callable[[str], Awaitable[None]] | None = None
    #: Who in the session calls: "" for the lead agent, a sub-agent task's id otherwise
    #: (the failure backoff of ``guard.py`` is per session and caller).
    scope: str = ""
    #: Called before each retry of a failed attempt with (the attempt that failed, what
    #: failed, the wait in seconds), by providers that retry: the ``provider.retry`` event
    #: (R82).
    on_retry: Callable[[int, str, float], Awaitable[None]] | None = None
    #: Called with each piece of the model's readable reasoning while it streams (R84):
    #: the ``reasoning.delta`` event. Never part of the turn's text.
    on_reasoning: Callable[[str], Awaitable[None]] | None = None
    #: R85: the model turns of the session's transcript that compaction left out of
    #: ``messages`` (a summary stands for them). Only the scripted provider reads it, to
    #: choose its turn by the whole transcript.
    compacted_turns: int = 0


@dataclass(frozen=True, slots=True)
class ModelResponse:
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    #: The model that answered, as the provider names it ("" when it does not say):
    #: traces show it as ``gen_ai.response.model``.
    model: str = ""
    #: R84: the reasoning blocks of the turn, each as the provider sent it, in order.
    reasoning: tuple[ReasoningBlock, ...] = ()


class Provider(abc.ABC):
    """A model provider. ``complete`` raises ``ProviderError`` on failure."""

    name: str

    def validate(self, model: str, settings: dict[str, Any]) -> None:
        """Check a model name and settings when a request arrives; raise ``InvalidArgument``."""

    def ready(self, model: str, session_id: str, scope: str = "") -> None:
        """Raise the transient ``ProviderError`` that a call of ``model`` for this session
        would get without being made (a backoff or an open circuit), so that a run whose
        first act is that call is refused before it writes anything. Changes nothing."""

    def price(self, model: str, settings: dict[str, Any]) -> Price | None:
        """The price of ``model`` in the daemon's price table; ``None``: none (R78)."""
        return None

    def context_window(self, model: str, settings: dict[str, Any]) -> int | None:
        """The tokens a request of ``model`` may hold, from the daemon's configuration;
        ``None``: unknown (R85)."""
        return None

    def reports_cost(self, model: str, settings: dict[str, Any]) -> bool:
        """Whether every call of ``model`` reports its own cost (R78)."""
        return False

    @abc.abstractmethod
    async def complete(self, request: ModelRequest) -> ModelResponse:
        """One model call."""

    async def aclose(self) -> None:
        """Release connections (the daemon is stopping)."""
