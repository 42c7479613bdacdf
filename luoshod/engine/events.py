"""Events a run emits. The service layer turns each into a ``luosho.v1.Event``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Event:
    session_id: str
    run_id: str
    seq: int
    time: float
    type: str  # "run.start", "step.start", "model.turn", "tool.call", ...
    data: dict[str, Any]
    #: Set on every event a sub-agent causes (R58); ``None`` on the lead's.
    subagent: SubagentTag | None = None


@dataclass(frozen=True, slots=True)
class SubagentTag:
    """Which sub-agent an event comes from: its name, depth (1 = the lead's sub-agent),
    the path of names outermost first, and its task id."""

    name: str
    depth: int
    path: tuple[str, ...]
    task_id: str


RUN_START = "run.start"
AGENT_DRIFT = "agent.drift"
STEP_START = "step.start"
MODEL_TURN = "model.turn"
TOOL_CALL = "tool.call"
TOOL_RESULT = "tool.result"
TOOL_RETRY = "tool.retry"  # a daemon tool's attempt failed and is tried again (R73)
PROVIDER_RETRY = "provider.retry"  # a model call's attempt failed and is tried again (R82)
PROVIDER_FALLBACK = "provider.fallback"  # the next fallback model takes the turn (R82)
TOOL_RECONCILE = "tool.reconcile"  # a call handed out before: did it run? (R77)
APPROVAL_REQUESTED = "approval.requested"
APPROVAL_RESOLVED = "approval.resolved"  # the decision, who made it (R92)
BUDGET_EXCEEDED = "budget.exceeded"  # a limit stops the run before a model call (R79)
COMPACTION_START = "compaction.start"  # the transcript is compacted before a call (R85)
COMPACTION_DONE = "compaction.done"
STEP_DONE = "step.done"
RUN_DONE = "run.done"
TEXT_DELTA = "text.delta"  # streamed text of a model call in flight (progress only)
REASONING_DELTA = "reasoning.delta"  # streamed reasoning of a model call (progress only, R84)
