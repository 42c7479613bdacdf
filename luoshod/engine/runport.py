"""What a run's helpers use of the run: the narrow interface between the loop
(:class:`~.loop.Run`, which implements it) and the sub-agents (:mod:`.subagents`) and
daemon tools (:mod:`.daemon_tools`) that run inside it.

The helpers import this module, never the loop: the loop imports them. A sub-agent keeps
its state in the run's working checkpoint (:attr:`RunPort.cp`), numbers its events on the
run's outbox (:meth:`RunPort.queue_event`) and makes them durable through the run's own
:meth:`~RunPort.flush` and :meth:`~RunPort.save` (one lease, one write order, R7).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from ..domain import AgentSpec, Checkpoint, Message, ToolCall, ToolSpec
from ..providers import ProviderRegistry
from .budget import Budgets
from .control import RunControl, ToolPort
from .events import SubagentTag


@dataclass(frozen=True)
class Caller:
    """Who makes a daemon tool call inside the lead's run (R71): the lead, or a sub-agent
    (R58) — its own spec (timeouts, retries), its ``emit`` (a sub-agent's is tagged), the
    lead's ``flush``, and its call's qualified id, which is the id on its events and the
    idempotency key."""

    spec: AgentSpec
    emit: Callable[..., Awaitable[None]]
    flush: Callable[[], Awaitable[None]]
    key: str


class RunPort(Protocol):
    """One run as the sub-agents inside it see it."""

    @property
    def cp(self) -> Checkpoint:
        """The run's working checkpoint: what its next save writes (the sub-agents'
        state, decisions, usage and the event numbering are in it)."""

    @property
    def spec(self) -> AgentSpec:
        """The lead agent's spec."""

    @property
    def control(self) -> RunControl:
        """How the run is stopped from outside (abort, interrupt)."""

    @property
    def tools(self) -> ToolPort:
        """Where the app's tool results are awaited."""

    @property
    def tool_timeout_s(self) -> float:
        """The lead's timeout of an app's tool call (its spec's, else the daemon's)."""

    def now(self) -> float:
        """The engine's clock (seconds since the epoch): the time stored with the run."""

    @property
    def budgets(self) -> Budgets | None:
        """The run's checks of the limits and its reservations (R79, R80); ``None`` when
        no agent of the run has limits."""

    @property
    def providers(self) -> ProviderRegistry | None:
        """Where a sub-agent's model is resolved (R55); ``None``: no sub-agents."""

    def queue_event(
        self, type_: str, data: dict[str, object], tag: SubagentTag | None = None
    ) -> None:
        """Number an event and queue it; the next :meth:`save` or :meth:`flush` writes it,
        then hands it to the run's sink."""

    async def flush(self) -> None:
        """Write the queued events (and a change whose save was deferred)."""

    async def save(self) -> None:
        """Save the checkpoint with the queued events."""

    def defer_save(self) -> None:
        """The checkpoint holds a change the next :meth:`flush` saves (a model turn with
        tool calls: durable before any of its tools runs, R1)."""

    async def call_daemon_tool(
        self, call: ToolCall, tool: ToolSpec, step: int, caller: Caller
    ) -> Message:
        """Run a daemon tool's call (R71, R73) for ``caller``; its result message."""
