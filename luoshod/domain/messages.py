"""The conversation: roles, messages, tool calls, tool specs and token usage."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


def _fields_of(obj: Any) -> dict[str, Any]:
    """A dataclass's fields as a dict, without copying their values (see AgentSpec.to_dict)."""
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}


class Role(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments_json: str = "{}"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments_json}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ToolCall:
        return cls(d["id"], d["name"], d.get("arguments", "{}"))


@dataclass(frozen=True, slots=True)
class ReasoningBlock:
    """One block of a model's reasoning (R84), kept with its assistant turn as the provider
    sent it and sent back with that turn: Anthropic's signed or redacted thinking, an
    OpenAI Responses reasoning item with its encrypted content."""

    #: The provider kind that made it ("anthropic", "openai_responses"): only a model of
    #: that kind is sent it back.
    provider: str
    #: The block as received (JSON), signature or encrypted content included.
    raw_json: str
    #: Its readable part (thinking, a summary); "" when redacted.
    text: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"provider": self.provider, "raw_json": self.raw_json, "text": self.text}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ReasoningBlock:
        return cls(d["provider"], d["raw_json"], d.get("text", ""))


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str = ""
    tool_name: str = ""
    is_error: bool = False
    #: Assistant turns: the model that produced the turn ("provider:model") and what that
    #: model call used; "" and ``None`` on other messages and on turns saved before they
    #: were recorded. Not part of a message's identity (``key``, ``==``).
    model: str = field(default="", compare=False)
    usage: Usage | None = field(default=None, compare=False)
    #: Assistant turns (R84): the reasoning that came with the turn, in the order received.
    reasoning: tuple[ReasoningBlock, ...] = field(default=(), compare=False)
    #: R85: a user or system message compaction never summarizes away (a flag the caller
    #: sets on input). Not part of a message's identity.
    pinned: bool = field(default=False, compare=False)

    def key(self) -> tuple[Any, ...]:
        """Identity for merging input with a stored transcript: role, content, call ids."""
        return (self.role, self.content, self.tool_call_id, tuple(c.id for c in self.tool_calls))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"role": self.role.value, "content": self.content}
        if self.tool_calls:
            d["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        if self.tool_call_id:
            d["tool_call_id"] = self.tool_call_id
            d["tool_name"] = self.tool_name
        if self.is_error:
            d["is_error"] = True
        if self.model:
            d["model"] = self.model
        if self.usage is not None:
            d["usage"] = self.usage.to_dict()
        if self.reasoning:
            d["reasoning"] = [b.to_dict() for b in self.reasoning]
        if self.pinned:  # absent when unset, as in messages saved before R85
            d["pinned"] = True
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Message:
        usage = d.get("usage")
        return cls(
            Role(d["role"]),
            d.get("content", ""),
            tuple(ToolCall.from_dict(c) for c in d.get("tool_calls", ())),
            d.get("tool_call_id", ""),
            d.get("tool_name", ""),
            d.get("is_error", False),
            d.get("model", ""),
            Usage.from_dict(usage) if usage is not None else None,
            tuple(ReasoningBlock.from_dict(b) for b in d.get("reasoning", ())),
            d.get("pinned", False),
        )


@dataclass(slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    model_calls: int = 0
    cost_usd: float = 0.0
    #: Of ``prompt_tokens``: read from, and written to, the provider's prompt cache.
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    #: Of ``completion_tokens``: the model's reasoning.
    reasoning_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.total_tokens += other.total_tokens
        self.model_calls += other.model_calls
        self.cost_usd += other.cost_usd
        self.cached_input_tokens += other.cached_input_tokens
        self.cache_write_tokens += other.cache_write_tokens
        self.reasoning_tokens += other.reasoning_tokens

    def subtract(self, other: Usage) -> None:
        self.prompt_tokens -= other.prompt_tokens
        self.completion_tokens -= other.completion_tokens
        self.total_tokens -= other.total_tokens
        self.model_calls -= other.model_calls
        self.cost_usd -= other.cost_usd
        self.cached_input_tokens -= other.cached_input_tokens
        self.cache_write_tokens -= other.cache_write_tokens
        self.reasoning_tokens -= other.reasoning_tokens

    def counted(self, cap: str) -> float:
        """What this usage counts toward a :class:`~.agent.Budget` cap (R78)."""
        if cap == "input_tokens":
            return self.prompt_tokens
        if cap == "output_tokens":
            return self.completion_tokens
        return float(getattr(self, cap))

    def copy(self) -> Usage:
        # Spelled out: ``dataclasses.replace`` walks the fields on every call, and a step
        # copies usages several times (its turn, its events, each save's detached copy).
        return Usage(
            self.prompt_tokens,
            self.completion_tokens,
            self.total_tokens,
            self.model_calls,
            self.cost_usd,
            self.cached_input_tokens,
            self.cache_write_tokens,
            self.reasoning_tokens,
        )

    def to_dict(self) -> dict[str, Any]:
        # Spelled out: dataclasses.asdict deep-copies recursively, and this runs on every save.
        d: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "model_calls": self.model_calls,
            "cost_usd": self.cost_usd,
        }
        # Only when counted: a header saved before these counts existed hashes (R91) and
        # reads the same.
        if self.cached_input_tokens:
            d["cached_input_tokens"] = self.cached_input_tokens
        if self.cache_write_tokens:
            d["cache_write_tokens"] = self.cache_write_tokens
        if self.reasoning_tokens:
            d["reasoning_tokens"] = self.reasoning_tokens
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Usage:
        return cls(**d)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str = ""
    input_schema_json: str = ""
    needs_approval: bool = False
    #: A daemon tool (R70): the MCP server that serves it; "" for the app's own tools.
    server: str = ""
    #: R77: a call handed out before with no recorded result is first put to the client
    #: as a ``tool.reconcile`` event (DONE, NOT_STARTED or UNKNOWN) before it runs again.
    reconcile: bool = False
    #: R88: a question to a person: its call pauses the run as a gated call does, and the
    #: answer given to ``Resolve`` is its result. Never handed to the client.
    question: bool = False

    @property
    def gated(self) -> bool:
        """A call of this tool waits for a person (R27, R88)."""
        return self.needs_approval or self.question

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        for key in ("reconcile", "question"):  # absent when unset, as in older specs
            if not d[key]:
                del d[key]
        return d
