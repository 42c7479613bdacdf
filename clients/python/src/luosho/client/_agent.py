"""Agent definitions: ``Agent`` and ``Tool``, and their conversion to the proto specs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from luosho.v1 import agent_pb2

from ._json import dumps

if TYPE_CHECKING:  # imported by the first spec naming an MCP server
    from ._mcp import McpServer


__all__ = [
    "Agent",
    "AgentLike",
    "Budget",
    "DriftPolicy",
    "Limits",
    "SubAgent",
    "Tool",
    "agent_spec",
    "dumps",
]

DriftPolicy: TypeAlias = Literal["warn", "error", "ignore"]

_DRIFT_POLICIES: dict[str, int] = {
    "warn": agent_pb2.AGENT_DRIFT_POLICY_WARN,
    "error": agent_pb2.AGENT_DRIFT_POLICY_ERROR,
    "ignore": agent_pb2.AGENT_DRIFT_POLICY_IGNORE,
}


@dataclass(frozen=True)
class Tool:
    """A tool the agent may call; the client runs it (see ``tools=`` of execute).

    ``needs_approval``: the run pauses before each call of it (finish reason
    "awaiting_approval") until someone decides with ``resolve``.

    ``question``: a question to a person, never run by the client: each call pauses the
    run the same way, with an approval of kind ``APPROVAL_KIND_QUESTION`` whose
    ``question`` is the call's ``question`` argument; ``resolve(..., answer=TEXT)``
    answers it and the call's result is ``{"answer": TEXT}``.
    """

    name: str
    description: str = ""
    # A JSON Schema for the arguments; None means any JSON object.
    input_schema: dict[str, Any] | None = None
    needs_approval: bool = False
    # R77: a call handed out before with no recorded result is first put to the client
    # as tool.reconcile (set for you on the tools given a reconcile function).
    reconcile: bool = False
    question: bool = False

    def to_proto(self) -> agent_pb2.ToolSpec:
        return agent_pb2.ToolSpec(
            name=self.name,
            description=self.description,
            input_schema_json="" if self.input_schema is None else dumps(self.input_schema),
            needs_approval=self.needs_approval,
            reconcile=self.reconcile,
            question=self.question,
        )


@dataclass(frozen=True)
class Budget:
    """Caps on what runs may spend (R78); ``None`` is no cap, 0 a cap of zero. A cost cap
    needs a price for every model the agent may call (the provider's reported cost or
    the daemon's price table): without one the run is refused at start."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cost_usd: float | None = None
    model_calls: int | None = None
    wall_clock_ms: int | None = None

    def to_proto(self) -> agent_pb2.Budget:
        out = agent_pb2.Budget()
        for name in (
            "input_tokens",
            "output_tokens",
            "total_tokens",
            "cost_usd",
            "model_calls",
            "wall_clock_ms",
        ):
            value = getattr(self, name)
            if value is not None:
                setattr(out, name, value)
        return out


@dataclass(frozen=True)
class Limits:
    """An agent's limits on spend and time (R78–R81): ``run`` counts over one run,
    ``session`` over the session's whole life; time paused on an approval or a question
    counts toward ``wall_clock_ms`` only with ``count_paused_time``. A run a limit stops
    ends with finish reason "budget_exceeded" (or "deadline_exceeded") and
    ``RunResult.budget_exceeded``; raising the limit and resuming goes on."""

    run: Budget | None = None
    session: Budget | None = None
    count_paused_time: bool = False

    def to_proto(self) -> agent_pb2.Limits:
        out = agent_pb2.Limits(count_paused_time=self.count_paused_time)
        if self.run is not None:
            out.run.CopyFrom(self.run.to_proto())
        if self.session is not None:
            out.session.CopyFrom(self.session.to_proto())
        return out


_COMPACTION_STRATEGIES = {
    "both": agent_pb2.COMPACTION_STRATEGY_BOTH,
    "prune": agent_pb2.COMPACTION_STRATEGY_PRUNE,
    "summarize": agent_pb2.COMPACTION_STRATEGY_SUMMARIZE,
}


@dataclass(frozen=True)
class Compaction:
    """Compaction of a long transcript before a model call (R85): when the request passes
    ``threshold`` of the model's context window (from the daemon's configuration), old
    tool results become a marker, then (strategy "both") the oldest turns one summary
    written by ``model`` (default: the agent's). The newest ``protect_tokens`` stay."""

    threshold: float = 0.8
    protect_tokens: int = 0
    strategy: str = "both"
    model: str = ""
    model_settings: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.strategy not in _COMPACTION_STRATEGIES:
            raise ValueError(
                f"strategy must be one of {sorted(_COMPACTION_STRATEGIES)}, not {self.strategy!r}"
            )

    def to_proto(self) -> agent_pb2.Compaction:
        return agent_pb2.Compaction(
            threshold=self.threshold,
            protect_tokens=self.protect_tokens,
            strategy=_COMPACTION_STRATEGIES[self.strategy],
            model=self.model,
            model_settings_json="" if self.model_settings is None else dumps(self.model_settings),
        )


@dataclass(frozen=True)
class Reasoning:
    """How much the model reasons (R84): an effort ("minimal", "low", "medium", "high"), a
    token budget, or both; each provider takes the one its API has."""

    effort: str = ""
    budget_tokens: int | None = None

    def to_proto(self) -> agent_pb2.Reasoning:
        out = agent_pb2.Reasoning(effort=self.effort)
        if self.budget_tokens is not None:
            out.budget_tokens = self.budget_tokens
        return out


@dataclass(frozen=True)
class Agent:
    """The agent a run uses. ``None`` limits leave the daemon's defaults in place."""

    model: str
    instructions: str = ""
    tools: Sequence[Tool | agent_pb2.ToolSpec] = field(default_factory=tuple)
    max_steps: int | None = None
    tool_concurrency: int | None = None
    on_agent_drift: DriftPolicy = "warn"
    model_settings: dict[str, Any] | None = None
    tool_timeout_ms: int | None = None
    # After this long a pending approval resolves as rejected (None: never expires).
    approval_timeout_ms: int | None = None
    # Daemon tools: MCP servers of the daemon's configuration (a name or an McpServer).
    mcp_servers: Sequence[McpServer | str] = field(default_factory=tuple)
    # Sub-agents the lead hands tasks to through the daemon's `task` tool (R55).
    subagents: Sequence[SubAgent] = field(default_factory=tuple)
    # How deep the tree of sub-agents may go (None: the daemon's default, 1); read on the
    # top-level agent only.
    max_subagent_depth: int | None = None
    # Structured output (R83): a JSON Schema (a dict or its JSON text), or a class with
    # ``model_json_schema()`` (a pydantic model); the run's answer must be JSON valid
    # against it, and ``RunResult.output`` / ``output_as`` return it parsed.
    output_schema: dict[str, Any] | str | type | None = None
    # Models ("provider:model") that take a turn, in order, when the model fails with a
    # retryable error after its retries or its circuit is open (R82).
    fallback_models: Sequence[str] = field(default_factory=tuple)
    # Limits on spend and time (R78–R81): a Limits, or the proto's agent_pb2.Limits.
    limits: Limits | agent_pb2.Limits | None = None
    # Reasoning (R84): a Reasoning, or the proto's agent_pb2.Reasoning.
    reasoning: Reasoning | agent_pb2.Reasoning | None = None
    # Compaction of long transcripts (R85): a Compaction, or the proto's.
    compaction: Compaction | agent_pb2.Compaction | None = None
    # Durable timers (R86): the agent gets the daemon's `sleep` tool; its call ends the run
    # with the session "sleeping" until then, and a daemon resumes it at that time.
    sleep_tool: bool = False

    def __post_init__(self) -> None:
        if self.on_agent_drift not in _DRIFT_POLICIES:
            raise ValueError(
                f"on_agent_drift must be one of {sorted(_DRIFT_POLICIES)}, "
                f"not {self.on_agent_drift!r}"
            )

    def to_proto(self) -> agent_pb2.AgentSpec:
        spec = agent_pb2.AgentSpec(
            model=self.model,
            instructions=self.instructions,
            tools=[t if isinstance(t, agent_pb2.ToolSpec) else t.to_proto() for t in self.tools],
            on_agent_drift=_DRIFT_POLICIES[self.on_agent_drift],
            model_settings_json="" if self.model_settings is None else dumps(self.model_settings),
            fallback_models=list(self.fallback_models),
            sleep_tool=self.sleep_tool,
        )
        # proto3 optional fields: only set what was given, so "unset" means the default.
        if self.max_steps is not None:
            spec.max_steps = self.max_steps
        if self.tool_concurrency is not None:
            spec.tool_concurrency = self.tool_concurrency
        if self.tool_timeout_ms is not None:
            spec.tool_timeout_ms = self.tool_timeout_ms
        if self.approval_timeout_ms is not None:
            spec.approval_timeout_ms = self.approval_timeout_ms
        if self.mcp_servers:
            from ._mcp import McpServer
        for server in self.mcp_servers:
            spec.mcp_servers.append(
                (McpServer(server) if isinstance(server, str) else server).to_proto()
            )
        for sub in self.subagents:
            spec.subagents.append(sub.to_proto())
        if self.max_subagent_depth is not None:
            spec.max_subagent_depth = self.max_subagent_depth
        if self.output_schema is not None:
            spec.output_schema_json = output_schema_json(self.output_schema)
        if self.limits is not None:
            limits = self.limits
            spec.limits.CopyFrom(
                limits if isinstance(limits, agent_pb2.Limits) else limits.to_proto()
            )
        if self.reasoning is not None:
            r = self.reasoning
            spec.reasoning.CopyFrom(r if isinstance(r, agent_pb2.Reasoning) else r.to_proto())
        if self.compaction is not None:
            c = self.compaction
            spec.compaction.CopyFrom(c if isinstance(c, agent_pb2.Compaction) else c.to_proto())
        return spec


def output_schema_json(schema: dict[str, Any] | str | type) -> str:
    """The JSON text of an output schema given as a dict, JSON text or a pydantic model."""
    if isinstance(schema, str):
        return schema
    if isinstance(schema, dict):
        return dumps(schema)
    to_schema = getattr(schema, "model_json_schema", None)
    if not callable(to_schema):
        raise TypeError(
            "output_schema must be a JSON Schema (dict or str) or a class with "
            f"model_json_schema(), not {schema!r}"
        )
    return dumps(to_schema())


@dataclass(frozen=True)
class SubAgent:
    """A named sub-agent (docs/reference/rules.md R55): the lead's model reads ``description`` to
    choose it, and it runs as ``agent`` (its own model, instructions and tools) on the
    task's prompt alone. Its tools are run by the same ``tools=`` handlers as the lead's;
    a handler that takes a ``ToolContext`` sees which sub-agent asks (``ctx.subagent``)."""

    name: str
    description: str
    agent: Agent | agent_pb2.AgentSpec

    def to_proto(self) -> agent_pb2.SubAgent:
        spec = self.agent if isinstance(self.agent, agent_pb2.AgentSpec) else self.agent.to_proto()
        return agent_pb2.SubAgent(name=self.name, description=self.description, agent=spec)


AgentLike: TypeAlias = Agent | agent_pb2.AgentSpec


def agent_spec(agent: AgentLike | None) -> agent_pb2.AgentSpec | None:
    """The proto spec of an ``Agent`` or a raw ``AgentSpec`` (passed through)."""
    if agent is None or isinstance(agent, agent_pb2.AgentSpec):
        return agent
    if isinstance(agent, Agent):
        return agent.to_proto()
    raise TypeError(f"agent must be an Agent or an agent_pb2.AgentSpec, not {type(agent).__name__}")
