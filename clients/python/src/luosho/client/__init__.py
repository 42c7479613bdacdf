"""luosho.client: the Python client of luoshod (asyncio and blocking).

    from luosho.client import Agent, AsyncClient, Client, Tool

Everything public is re-exported here; the ``_modules`` behind it are private. The
generated protobuf types are in ``luosho.v1.agent_pb2`` (events, checkpoints, session
summaries, approvals, history entries, fork and compare responses are returned as those
protos).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._agent import Agent, Budget, Compaction, DriftPolicy, Limits, Reasoning, SubAgent, Tool
    from ._async_client import AsyncClient, AsyncRun, AsyncWatch
    from ._errors import (
        AgentDriftError,
        ApprovalNotFoundError,
        CheckpointNotFoundError,
        EventsOutOfRangeError,
        IncompleteRunError,
        InvalidArgumentError,
        LeaseLostError,
        LuoshoError,
        PayloadTooLargeError,
        ProviderError,
        ProviderRejectedError,
        ResumeToolMissingError,
        SessionAwaitingApprovalError,
        SessionBusyError,
        SessionExistsError,
        ShuttingDownError,
        StoreFullError,
        ToolCallNotFoundError,
        ToolCallNotPendingError,
        UnavailableError,
        error_reason,
    )
    from ._mcp import McpRetry, McpServer, McpToolOverride, is_daemon_call
    from ._messages import message_from_dict, message_to_dict
    from ._requests import UNSET, ToolResultPatch
    from ._result import BudgetExceeded, ProviderFallback, ProviderRetry, RunResult, Usage
    from ._retry import NO_RETRY, RetryPolicy, new_request_id
    from ._sync_client import Client, Run, Watch
    from ._tools import (
        NOT_STARTED,
        UNKNOWN,
        Done,
        ReconcileCall,
        SubagentInfo,
        ToolContext,
        Undone,
        subagent_of,
    )

#: Each public name and the private module behind it, imported at the name's first use
#: (PEP 562): ``from luosho.client import Client`` loads the blocking client and what it
#: needs, not the asyncio client, the tools' machinery or the MCP settings (the people
#: CLI's start-up, bench/cli_start.py).
_LAZY = {
    "Agent": "_agent",
    "Budget": "_agent",
    "Compaction": "_agent",
    "DriftPolicy": "_agent",
    "Limits": "_agent",
    "Reasoning": "_agent",
    "SubAgent": "_agent",
    "Tool": "_agent",
    "AgentDriftError": "_errors",
    "ApprovalNotFoundError": "_errors",
    "CheckpointNotFoundError": "_errors",
    "EventsOutOfRangeError": "_errors",
    "IncompleteRunError": "_errors",
    "InvalidArgumentError": "_errors",
    "LeaseLostError": "_errors",
    "LuoshoError": "_errors",
    "PayloadTooLargeError": "_errors",
    "ProviderError": "_errors",
    "ProviderRejectedError": "_errors",
    "ResumeToolMissingError": "_errors",
    "SessionAwaitingApprovalError": "_errors",
    "SessionBusyError": "_errors",
    "SessionExistsError": "_errors",
    "ShuttingDownError": "_errors",
    "StoreFullError": "_errors",
    "ToolCallNotFoundError": "_errors",
    "ToolCallNotPendingError": "_errors",
    "UnavailableError": "_errors",
    "error_reason": "_errors",
    "McpRetry": "_mcp",
    "McpServer": "_mcp",
    "McpToolOverride": "_mcp",
    "is_daemon_call": "_mcp",
    "message_from_dict": "_messages",
    "message_to_dict": "_messages",
    "UNSET": "_requests",
    "ToolResultPatch": "_requests",
    "BudgetExceeded": "_result",
    "ProviderFallback": "_result",
    "ProviderRetry": "_result",
    "RunResult": "_result",
    "Usage": "_result",
    "NO_RETRY": "_retry",
    "RetryPolicy": "_retry",
    "new_request_id": "_retry",
    "Client": "_sync_client",
    "Run": "_sync_client",
    "Watch": "_sync_client",
    "NOT_STARTED": "_tools",
    "UNKNOWN": "_tools",
    "Done": "_tools",
    "ReconcileCall": "_tools",
    "SubagentInfo": "_tools",
    "ToolContext": "_tools",
    "Undone": "_tools",
    "subagent_of": "_tools",
    "AsyncClient": "_async_client",
    "AsyncRun": "_async_client",
    "AsyncWatch": "_async_client",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = [
    "NOT_STARTED",
    "UNKNOWN",
    "Done",
    "ReconcileCall",
    "Undone",
    "NO_RETRY",
    "RetryPolicy",
    "new_request_id",
    "UNSET",
    "Agent",
    "Budget",
    "Compaction",
    "Limits",
    "Reasoning",
    "McpRetry",
    "McpServer",
    "McpToolOverride",
    "is_daemon_call",
    "AgentDriftError",
    "ApprovalNotFoundError",
    "AsyncClient",
    "AsyncRun",
    "AsyncWatch",
    "CheckpointNotFoundError",
    "BudgetExceeded",
    "ProviderFallback",
    "ProviderRetry",
    "Client",
    "DriftPolicy",
    "EventsOutOfRangeError",
    "IncompleteRunError",
    "InvalidArgumentError",
    "LeaseLostError",
    "LuoshoError",
    "PayloadTooLargeError",
    "ProviderError",
    "ProviderRejectedError",
    "ResumeToolMissingError",
    "Run",
    "RunResult",
    "SessionAwaitingApprovalError",
    "SessionBusyError",
    "SessionExistsError",
    "ShuttingDownError",
    "StoreFullError",
    "SubAgent",
    "SubagentInfo",
    "subagent_of",
    "Tool",
    "ToolCallNotFoundError",
    "ToolCallNotPendingError",
    "ToolContext",
    "ToolResultPatch",
    "UnavailableError",
    "Usage",
    "Watch",
    "message_from_dict",
    "message_to_dict",
    "error_reason",
]

__version__ = "0.1.0"
