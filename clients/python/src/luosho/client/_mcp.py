"""Daemon tools (MCP servers of the daemon's configuration) in an ``Agent``.

The daemon runs these tools itself: their ``tool.call`` events carry
``executor == TOOL_EXECUTOR_DAEMON`` and the client never hands them to ``tools=``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from luosho.v1 import agent_pb2

__all__ = ["McpRetry", "McpServer", "McpToolOverride", "is_daemon_call"]

RetryOn: TypeAlias = Literal["timeout", "unavailable", "tool_error"]
_RETRY_ON = {
    "timeout": agent_pb2.MCP_RETRY_ON_TIMEOUT,
    "unavailable": agent_pb2.MCP_RETRY_ON_UNAVAILABLE,
    "tool_error": agent_pb2.MCP_RETRY_ON_TOOL_ERROR,
}
_APPROVAL = {
    None: agent_pb2.MCP_APPROVAL_UNSPECIFIED,
    "gate": agent_pb2.MCP_APPROVAL_GATE,
    "ungate": agent_pb2.MCP_APPROVAL_UNGATE,
}


def is_daemon_call(event: agent_pb2.Event) -> bool:
    """A ``tool.call`` the daemon runs itself (an MCP tool): nothing for the app to do."""
    return event.tool_call.executor == agent_pb2.TOOL_EXECUTOR_DAEMON


@dataclass(frozen=True)
class McpRetry:
    """Attempts in all, the wait before the first retry (doubling), which failures retry."""

    attempts: int = 1
    backoff_ms: int = 0
    retry_on: Sequence[RetryOn] = ()

    def to_proto(self) -> agent_pb2.McpRetryPolicy:
        return agent_pb2.McpRetryPolicy(
            attempts=self.attempts,
            backoff_ms=self.backoff_ms,
            retry_on=[_RETRY_ON[r] for r in self.retry_on],
        )


@dataclass(frozen=True)
class McpToolOverride:
    """``approval``: "gate" or "ungate" one tool (None: its annotations decide)."""

    approval: Literal["gate", "ungate"] | None = None
    timeout_ms: int | None = None
    retry: McpRetry | None = None


@dataclass(frozen=True)
class McpServer:
    """An MCP server of the daemon's configuration the agent uses, by name; its tools are
    called ``<name>__<tool>``. ``allow_tools`` (the server's own names) limits them."""

    name: str
    allow_tools: Sequence[str] = ()
    timeout_ms: int | None = None
    retry: McpRetry | None = None
    tools: Mapping[str, McpToolOverride] = field(default_factory=dict)

    def to_proto(self) -> agent_pb2.McpServerUse:
        use = agent_pb2.McpServerUse(name=self.name, allow_tools=list(self.allow_tools))
        if self.timeout_ms is not None:
            use.timeout_ms = self.timeout_ms
        if self.retry is not None:
            use.retry.CopyFrom(self.retry.to_proto())
        for tool, o in self.tools.items():
            m = use.tool_overrides.add(tool=tool, approval=_APPROVAL[o.approval])
            if o.timeout_ms is not None:
                m.timeout_ms = o.timeout_ms
            if o.retry is not None:
                m.retry.CopyFrom(o.retry.to_proto())
        return use
