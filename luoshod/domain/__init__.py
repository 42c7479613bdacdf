"""The run's data, independent of gRPC and of storage.

JSON payloads (tool arguments and results, business state, schemas) stay JSON *text*
everywhere, so they round-trip byte for byte between the client, the store and the model.
Every type has ``to_dict``/``from_dict`` for the drivers' encoding.

- :mod:`.messages`: the conversation (roles, messages, tool calls, tool specs, usage);
- :mod:`.agent`: the agent a run follows (its spec, sub-agents, fingerprint and drift);
- :mod:`.checkpoint`: a session's state (checkpoint, approvals, sub-tasks, applied requests);
- :mod:`.records`: what the store keeps beside checkpoints (events, leases, history, queue);
- :mod:`.mcpspec`: what an agent says about the daemon's MCP servers it uses.

Import the names from here (``from luoshod.domain import Checkpoint``); the modules are
how the file is laid out, not a second API.
"""

from .agent import (
    DEFAULT_COMPACTION_THRESHOLD,
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_SUBAGENT_DEPTH,
    DEFAULT_TOOL_CONCURRENCY,
    REASONING_EFFORTS,
    SLEEP_TOOL,
    TASK_TOOL,
    USAGE_CAPS,
    AgentSpec,
    Budget,
    Compaction,
    CompactionStrategy,
    Drift,
    DriftPolicy,
    Fingerprint,
    Limits,
    Reasoning,
    SubAgent,
)
from .checkpoint import (
    DEFAULT_REQUEST_ID_LIMIT,
    AppliedRequest,
    Approval,
    Checkpoint,
    Compacted,
    Decision,
    FinishReason,
    RunEnd,
    Sleep,
    Status,
    SubTask,
    ToolCallRecord,
    drift_of,
)
from .messages import Message, ReasoningBlock, Role, ToolCall, ToolSpec, Usage
from .records import (
    Enqueue,
    EventPage,
    HistoryEntry,
    Lease,
    QueuedInput,
    SessionSummary,
    StoredEvent,
    StoredSchedule,
)

__all__ = [
    "DEFAULT_COMPACTION_THRESHOLD",
    "DEFAULT_MAX_STEPS",
    "DEFAULT_MAX_SUBAGENT_DEPTH",
    "DEFAULT_REQUEST_ID_LIMIT",
    "DEFAULT_TOOL_CONCURRENCY",
    "SLEEP_TOOL",
    "TASK_TOOL",
    "USAGE_CAPS",
    "AgentSpec",
    "Compacted",
    "Compaction",
    "CompactionStrategy",
    "AppliedRequest",
    "Approval",
    "Budget",
    "Checkpoint",
    "Decision",
    "Drift",
    "DriftPolicy",
    "Enqueue",
    "EventPage",
    "Fingerprint",
    "FinishReason",
    "HistoryEntry",
    "Lease",
    "Limits",
    "REASONING_EFFORTS",
    "Reasoning",
    "ReasoningBlock",
    "Message",
    "QueuedInput",
    "Role",
    "RunEnd",
    "SessionSummary",
    "Sleep",
    "Status",
    "StoredEvent",
    "StoredSchedule",
    "SubAgent",
    "SubTask",
    "ToolCall",
    "ToolCallRecord",
    "ToolSpec",
    "Usage",
    "drift_of",
]
