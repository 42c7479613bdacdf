"""luosho.client: the Python client of luoshod (asyncio and blocking).

    from luosho.client import Agent, AsyncClient, Client, Tool

Everything public is re-exported here; the ``_modules`` behind it are private. The
generated protobuf types are in ``luosho.v1.agent_pb2`` (events, checkpoints, session
summaries, approvals, history entries, fork and compare responses are returned as those
protos).
"""

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
