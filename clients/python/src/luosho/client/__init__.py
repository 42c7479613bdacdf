"""luosho.client: the Python client of luoshod (asyncio and blocking).

    from luosho.client import Agent, AsyncClient, Client, Tool

Everything public is re-exported here; the ``_modules`` behind it are private. The
generated protobuf types are in ``luosho.v1.agent_pb2`` (events, checkpoints and session
summaries are returned as those protos).
"""

from ._agent import Agent, DriftPolicy, Tool
from ._async_client import AsyncClient, AsyncRun
from ._errors import (
    AgentDriftError,
    ApprovalNotFoundError,
    CheckpointNotFoundError,
    IncompleteRunError,
    InvalidArgumentError,
    LeaseLostError,
    LuoshoError,
    PayloadTooLargeError,
    ProviderError,
    ResumeToolMissingError,
    SessionAwaitingApprovalError,
    SessionBusyError,
    ShuttingDownError,
    StoreFullError,
    ToolCallNotFoundError,
    UnavailableError,
)
from ._messages import message_from_dict, message_to_dict
from ._requests import UNSET
from ._result import RunResult, Usage
from ._sync_client import Client, Run
from ._tools import ToolContext

__all__ = [
    "UNSET",
    "Agent",
    "AgentDriftError",
    "ApprovalNotFoundError",
    "AsyncClient",
    "AsyncRun",
    "CheckpointNotFoundError",
    "Client",
    "DriftPolicy",
    "IncompleteRunError",
    "InvalidArgumentError",
    "LeaseLostError",
    "LuoshoError",
    "PayloadTooLargeError",
    "ProviderError",
    "ResumeToolMissingError",
    "Run",
    "RunResult",
    "SessionAwaitingApprovalError",
    "SessionBusyError",
    "ShuttingDownError",
    "StoreFullError",
    "Tool",
    "ToolCallNotFoundError",
    "ToolContext",
    "UnavailableError",
    "Usage",
    "message_from_dict",
    "message_to_dict",
]

__version__ = "0.1.0"
