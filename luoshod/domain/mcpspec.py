"""What an agent says about the daemon's MCP servers it uses (docs/reference/rules.md R70–R73):
``AgentSpec.mcp_servers``, plain data like the rest of :mod:`luoshod.domain`.

A server's tools join the agent's tools as ``<server>__<tool>`` (:func:`tool_name`), marked
with the server's name (``ToolSpec.server``) so the engine runs them itself. The servers
themselves (commands, URLs, secrets) are the daemon's configuration
(:mod:`luoshod.mcpclient.config`), never part of a request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Between a server's name and its tool's name in the agent's tool name.
SEPARATOR = "__"
#: Which failures of an attempt retry (R73).
TIMEOUT, UNAVAILABLE, TOOL_ERROR = "timeout", "unavailable", "tool_error"
RETRY_ON = (TIMEOUT, UNAVAILABLE, TOOL_ERROR)
#: Retried when a policy names no failure: the call did not get an answer.
DEFAULT_RETRY_ON = (TIMEOUT, UNAVAILABLE)
#: Per-tool approval overrides (R72): "" follows the tool's annotations.
GATE, UNGATE = "gate", "ungate"


def tool_name(server: str, tool: str) -> str:
    return f"{server}{SEPARATOR}{tool}"


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    attempts: int = 1  # in all: 1 = no retry
    backoff_ms: int = 0  # before the first retry; doubles each retry
    retry_on: tuple[str, ...] = DEFAULT_RETRY_ON

    def to_dict(self) -> dict[str, Any]:
        return {
            "attempts": self.attempts,
            "backoff_ms": self.backoff_ms,
            "retry_on": list(self.retry_on),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> RetryPolicy | None:
        if d is None:
            return None
        return cls(
            d.get("attempts", 1), d.get("backoff_ms", 0), tuple(d.get("retry_on", DEFAULT_RETRY_ON))
        )


@dataclass(frozen=True, slots=True)
class ToolOverride:
    tool: str  # the server's own name of the tool
    approval: str = ""  # "" | GATE | UNGATE
    timeout_ms: int | None = None
    retry: RetryPolicy | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "approval": self.approval,
            "timeout_ms": self.timeout_ms,
            "retry": self.retry.to_dict() if self.retry else None,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ToolOverride:
        return cls(
            d["tool"],
            d.get("approval", ""),
            d.get("timeout_ms"),
            RetryPolicy.from_dict(d.get("retry")),
        )


@dataclass(frozen=True, slots=True)
class McpUse:
    """One entry of ``AgentSpec.mcp_servers``."""

    name: str
    allow_tools: tuple[str, ...] = ()  # empty: every tool of the server
    timeout_ms: int | None = None
    retry: RetryPolicy | None = None
    tool_overrides: tuple[ToolOverride, ...] = ()

    def allows(self, tool: str) -> bool:
        return not self.allow_tools or tool in self.allow_tools

    def override(self, tool: str) -> ToolOverride | None:
        return next((o for o in self.tool_overrides if o.tool == tool), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "allow_tools": list(self.allow_tools),
            "timeout_ms": self.timeout_ms,
            "retry": self.retry.to_dict() if self.retry else None,
            "tool_overrides": [o.to_dict() for o in self.tool_overrides],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> McpUse:
        return cls(
            d["name"],
            tuple(d.get("allow_tools", ())),
            d.get("timeout_ms"),
            RetryPolicy.from_dict(d.get("retry")),
            tuple(ToolOverride.from_dict(o) for o in d.get("tool_overrides", ())),
        )


@dataclass(frozen=True, slots=True)
class ListedTool:
    """A tool as its server lists it."""

    name: str
    description: str
    input_schema_json: str
    read_only: bool | None = None
    destructive: bool | None = None


class AttemptFailed(Exception):
    """One attempt of a call got no usable answer; ``kind`` is ``timeout`` or
    ``unavailable`` (see mcpspec.RETRY_ON). The message holds no secret."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
