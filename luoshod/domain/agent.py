"""The agent a run follows: its spec, its sub-agents, and its fingerprint and drift."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .mcpspec import McpUse
from .messages import ToolSpec, _fields_of


class DriftPolicy(StrEnum):
    WARN = "warn"
    ERROR = "error"
    IGNORE = "ignore"


DEFAULT_MAX_STEPS = 10
DEFAULT_TOOL_CONCURRENCY = 1
DEFAULT_MAX_SUBAGENT_DEPTH = 1

#: The caps of a :class:`Budget` that count usage, in the order they are checked.
USAGE_CAPS = ("input_tokens", "output_tokens", "total_tokens", "cost_usd", "model_calls")


@dataclass(frozen=True, slots=True)
class Budget:
    """One set of caps (R78); ``None`` is no cap, zero a cap of zero."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cost_usd: float | None = None
    model_calls: int | None = None
    wall_clock_ms: int | None = None

    def caps(self) -> dict[str, Any]:
        """The caps that are set, by field name."""
        return {k: v for k, v in _fields_of(self).items() if v is not None}

    def to_dict(self) -> dict[str, Any]:
        return self.caps()

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Budget:
        return cls(**d)


@dataclass(frozen=True, slots=True)
class Limits:
    """An agent's limits on spend and time (R78): per run and over the session's life."""

    run: Budget = Budget()
    session: Budget = Budget()
    #: Whether time paused on an approval counts toward ``wall_clock_ms`` (R81).
    count_paused_time: bool = False

    def scopes(self) -> tuple[tuple[str, Budget], ...]:
        return (("run", self.run), ("session", self.session))

    def has_cost_cap(self) -> bool:
        return self.run.cost_usd is not None or self.session.cost_usd is not None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"run": self.run.to_dict(), "session": self.session.to_dict()}
        if self.count_paused_time:
            d["count_paused_time"] = True
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Limits:
        return cls(
            Budget.from_dict(d.get("run", {})),
            Budget.from_dict(d.get("session", {})),
            d.get("count_paused_time", False),
        )


#: The efforts a ``Reasoning`` may name (R84), least first.
REASONING_EFFORTS = ("minimal", "low", "medium", "high")


@dataclass(frozen=True, slots=True)
class Reasoning:
    """How much the model reasons (R84): an effort, a token budget, or both; each provider
    takes the one its API has and derives it from the other when only that one is given."""

    effort: str = ""
    budget_tokens: int | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.effort:
            d["effort"] = self.effort
        if self.budget_tokens is not None:
            d["budget_tokens"] = self.budget_tokens
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Reasoning:
        return cls(d.get("effort", ""), d.get("budget_tokens"))


class CompactionStrategy(StrEnum):
    """R85: what compaction does when a request passes its threshold."""

    BOTH = "both"  # prune old tool results, then summarize if still above
    PRUNE = "prune"
    SUMMARIZE = "summarize"


#: R85: the share of the model's context window a request may fill before compaction.
DEFAULT_COMPACTION_THRESHOLD = 0.8


@dataclass(frozen=True, slots=True)
class Compaction:
    """R85: when and how a long transcript is compacted before a model call."""

    #: A share of the model's context window (0 < threshold <= 1).
    threshold: float = DEFAULT_COMPACTION_THRESHOLD
    #: The newest messages within this many tokens are never pruned nor summarized.
    protect_tokens: int = 0
    strategy: CompactionStrategy = CompactionStrategy.BOTH
    #: The model that writes the summary ("provider:model"); "" the agent's own.
    model: str = ""
    #: Its settings; "" the agent's when ``model`` is the agent's, else none.
    model_settings_json: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = _fields_of(self)
        d["strategy"] = self.strategy.value
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Compaction:
        return cls(
            d.get("threshold", DEFAULT_COMPACTION_THRESHOLD),
            d.get("protect_tokens", 0),
            CompactionStrategy(d.get("strategy", "both")),
            d.get("model", ""),
            d.get("model_settings_json", ""),
        )


@dataclass(frozen=True, slots=True)
class AgentSpec:
    model: str
    instructions: str = ""
    tools: tuple[ToolSpec, ...] = ()
    max_steps: int = DEFAULT_MAX_STEPS
    tool_concurrency: int = DEFAULT_TOOL_CONCURRENCY
    on_agent_drift: DriftPolicy = DriftPolicy.WARN
    model_settings_json: str = ""
    tool_timeout_ms: int | None = None
    approval_timeout_ms: int | None = None
    #: The daemon's MCP servers the agent uses (R70); their tools are in ``tools`` once
    #: the engine has listed them (``ToolSpec.server`` set).
    mcp_servers: tuple[McpUse, ...] = ()
    #: Named sub-agents the lead delegates to through the ``task`` tool (R55).
    subagents: tuple[SubAgent, ...] = ()
    #: How deep the tree of sub-agents goes (R57); read on the top-level agent only.
    max_subagent_depth: int = DEFAULT_MAX_SUBAGENT_DEPTH
    #: Caps on spend and time (R78–R81); ``None``: none. Not part of the fingerprint, so
    #: raising a limit and resuming is never agent drift.
    limits: Limits | None = None
    #: A JSON Schema the final answer must be JSON valid against (R83); "" when free text.
    #: Not part of the fingerprint: it checks the answer, it does not change the agent.
    output_schema_json: str = ""
    #: R82: the models that take a turn, in order, when the model fails with a retryable
    #: error after its retries. Not part of the fingerprint (a fallback is not drift).
    fallback_models: tuple[str, ...] = ()
    #: R84: how much the model reasons; ``None``: the provider's default. Not part of the
    #: fingerprint, as model settings are not.
    reasoning: Reasoning | None = None
    #: R85: compaction of the transcript before model calls; ``None``: never. Not part of
    #: the fingerprint: it changes what the model is sent, not the agent.
    compaction: Compaction | None = None
    #: R86: the agent has the daemon tool ``sleep`` (the lead agent only).
    sleep_tool: bool = False

    def tool(self, name: str) -> ToolSpec | None:
        found = next((t for t in self.tools if t.name == name), None)
        if found is None and name == TASK_TOOL.name and self.subagents:
            return TASK_TOOL  # R55: the extra tool of an agent with sub-agents
        if found is None and name == SLEEP_TOOL.name and self.sleep_tool:
            return SLEEP_TOOL  # R86: the daemon's timer
        return found

    def is_sleep(self, name: str) -> bool:
        """Whether a call of ``name`` is this agent's ``sleep`` (R86)."""
        return self.sleep_tool and name == SLEEP_TOOL.name and self.tool(name) is SLEEP_TOOL

    def subagent(self, name: str) -> SubAgent | None:
        return next((s for s in self.subagents if s.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        # Field by field rather than dataclasses.asdict, whose recursive deep copy was most
        # of the cost of encoding a checkpoint (this runs on every save).
        d = _fields_of(self)
        d["tools"] = [_tool_fields(t) for t in self.tools]
        d["on_agent_drift"] = self.on_agent_drift.value
        if self.mcp_servers:
            d["mcp_servers"] = [u.to_dict() for u in self.mcp_servers]
        else:
            del d["mcp_servers"]
        # Absent when unused, so specs saved before sub-agents existed encode as they did.
        if self.subagents:
            d["subagents"] = [s.to_dict() for s in self.subagents]
        else:
            del d["subagents"]
        if self.max_subagent_depth == DEFAULT_MAX_SUBAGENT_DEPTH:
            del d["max_subagent_depth"]
        if self.limits is not None:  # absent when none, as in specs saved before limits
            d["limits"] = self.limits.to_dict()
        else:
            del d["limits"]
        if not self.output_schema_json:  # absent when unused, as in specs saved before it
            del d["output_schema_json"]
        if self.fallback_models:  # absent when none, as in specs saved before R82
            d["fallback_models"] = list(self.fallback_models)
        else:
            del d["fallback_models"]
        if self.reasoning is not None:  # absent when none, as in specs saved before R84
            d["reasoning"] = self.reasoning.to_dict()
        else:
            del d["reasoning"]
        if self.compaction is not None:  # absent when none, as in specs saved before R85
            d["compaction"] = self.compaction.to_dict()
        else:
            del d["compaction"]
        if not self.sleep_tool:  # absent when unused, as in specs saved before R86
            del d["sleep_tool"]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> AgentSpec:
        return cls(
            model=d["model"],
            instructions=d.get("instructions", ""),
            tools=tuple(ToolSpec(**t) for t in d.get("tools", ())),
            max_steps=d.get("max_steps", DEFAULT_MAX_STEPS),
            tool_concurrency=d.get("tool_concurrency", DEFAULT_TOOL_CONCURRENCY),
            on_agent_drift=DriftPolicy(d.get("on_agent_drift", "warn")),
            model_settings_json=d.get("model_settings_json", ""),
            tool_timeout_ms=d.get("tool_timeout_ms"),
            approval_timeout_ms=d.get("approval_timeout_ms"),
            mcp_servers=tuple(McpUse.from_dict(u) for u in d.get("mcp_servers", ())),
            subagents=tuple(SubAgent.from_dict(s) for s in d.get("subagents", ())),
            max_subagent_depth=d.get("max_subagent_depth", DEFAULT_MAX_SUBAGENT_DEPTH),
            limits=Limits.from_dict(d["limits"]) if "limits" in d else None,
            output_schema_json=d.get("output_schema_json", ""),
            fallback_models=tuple(d.get("fallback_models", ())),
            reasoning=Reasoning.from_dict(d["reasoning"]) if "reasoning" in d else None,
            compaction=Compaction.from_dict(d["compaction"]) if "compaction" in d else None,
            sleep_tool=d.get("sleep_tool", False),
        )


@dataclass(frozen=True, slots=True)
class SubAgent:
    """A named sub-agent (R55): a full agent of its own and the line the lead reads."""

    name: str
    description: str
    agent: AgentSpec

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "agent": self.agent.to_dict()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SubAgent:
        return cls(d["name"], d["description"], AgentSpec.from_dict(d["agent"]))


#: The tool an agent with sub-agents gets (R55; ``task_id`` and ``mode``: R65).
TASK_TOOL = ToolSpec(
    "task",
    "Hand a self-contained task to a sub-agent. It sees only your prompt, not this "
    "conversation; its final answer comes back as this call's result. To go on with a "
    "finished task, give its task_id (from that result's footer): the sub-agent continues "
    "it with its whole transcript and your prompt (mode resume), or on a copy under a new "
    "task id (mode fork).",
    '{"type":"object","properties":{'
    '"agent":{"type":"string","description":"the sub-agent\'s name"},'
    '"prompt":{"type":"string","description":"everything the sub-agent needs to know"},'
    '"description":{"type":"string","description":"a short label for the task"},'
    '"task_id":{"type":"string","description":"a finished task of this session to go on with"},'
    '"mode":{"enum":["resume","fork"],"description":"with task_id: continue it (default) or a '
    'copy"}},'
    '"required":["agent","prompt"]}',
)


#: R86: the daemon tool of an agent with ``sleep_tool``. Its call ends the run with the
#: session sleeping until then; its result says when and what woke it.
SLEEP_TOOL = ToolSpec(
    "sleep",
    "Pause this conversation until a time, then go on: the run ends now and resumes by "
    "itself then, with this call's result. Give either seconds (how long) or until (an "
    "RFC 3339 instant, e.g. 2026-01-31T09:00:00Z). Nothing is lost meanwhile.",
    '{"type":"object","properties":{'
    '"seconds":{"type":"number","minimum":0,"description":"how long to sleep"},'
    '"until":{"type":"string","description":"when to wake, RFC 3339 with a time zone"}},'
    '"additionalProperties":false}',
)


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """Which agent wrote a checkpoint (docs/reference/rules.md R46)."""

    hash: str
    model: str
    tool_schema_hashes: dict[str, str]
    instructions_hash: str

    def to_dict(self) -> dict[str, Any]:
        d = _fields_of(self)
        d["tool_schema_hashes"] = dict(self.tool_schema_hashes)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Fingerprint:
        return cls(**d)


@dataclass(frozen=True, slots=True)
class Drift:
    """What differs between the agent that saved a session and the one resuming it (R48):
    the diff an ``agent.drift`` event carries and a checkpoint keeps as ``last_drift``."""

    model_from: str
    model_to: str
    tools_added: tuple[str, ...]
    tools_removed: tuple[str, ...]
    tools_changed: tuple[str, ...]
    instructions_changed: bool

    def to_dict(self) -> dict[str, Any]:
        d = _fields_of(self)
        for k in ("tools_added", "tools_removed", "tools_changed"):
            d[k] = list(d[k])
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Drift:
        return cls(
            d["model_from"],
            d["model_to"],
            tuple(d["tools_added"]),
            tuple(d["tools_removed"]),
            tuple(d["tools_changed"]),
            d["instructions_changed"],
        )


def _tool_fields(t: ToolSpec) -> dict[str, Any]:
    """A tool's fields; ``reconcile`` (R77) only when set, so specs saved before it existed
    encode as they did."""
    d = _fields_of(t)
    if not t.reconcile:
        del d["reconcile"]
    return d
