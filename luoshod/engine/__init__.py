"""The agent loop: runs, merge, tools, fingerprint and drift, fork, compare, leases.

Pure Python, handed a store and a provider: it imports no gRPC, no ``luoshod.server`` and
no driver distribution (the ``[tool.importlinter]`` contracts of pyproject.toml).

This module is the engine's public surface: what the server, the HTTP listener and
observability use, and all they may import (the ``engine-surface`` contract). The modules:

- :mod:`.engine`: :class:`Engine`, which decides what a request means for the stored
  session, and its requests (:class:`RunRequest`, :class:`ResolveRequest`);
- :mod:`.loop`: :class:`~.loop.Run`, one run of the agent loop;
- :mod:`.control`: how a caller drives a run (sink, tool port, run control);
- :mod:`.events`: the events a run emits and their types;
- :mod:`.requests`: request ids and their replay (R74); :mod:`.rollbacks` (R68);
- :mod:`.lease`: the session leases (R51/R52);
- :mod:`.subagents` and :mod:`.daemon_tools`, which run inside a run and see it through
  :mod:`.runport` (:class:`~.runport.RunPort`, what they need of it), never the loop;
- :mod:`.forking`, :mod:`.comparison`, :mod:`.merge`, :mod:`.fingerprint`, :mod:`.tools`,
  :mod:`.observer`: one concern each.
"""

from .comparison import Comparison, Step, compare
from .control import (
    CALLER_LEFT,
    CLIENT_GONE,
    DETACHED,
    RECONCILE_DONE,
    RECONCILE_NOT_STARTED,
    RECONCILE_UNKNOWN,
    RunControl,
    RunInterrupted,
    Sink,
    ToolOutcome,
    ToolPort,
    wait_first,
)
from .engine import (
    DEFAULT_TOOL_TIMEOUT_S,
    Engine,
    ResolveRequest,
    RunOutcome,
    RunRequest,
    run_digest,
)
from .events import (
    AGENT_DRIFT,
    APPROVAL_REQUESTED,
    APPROVAL_RESOLVED,
    BUDGET_EXCEEDED,
    COMPACTION_DONE,
    COMPACTION_START,
    MODEL_TURN,
    PROVIDER_FALLBACK,
    PROVIDER_RETRY,
    REASONING_DELTA,
    RUN_DONE,
    RUN_START,
    STEP_DONE,
    STEP_START,
    TEXT_DELTA,
    TOOL_CALL,
    TOOL_RECONCILE,
    TOOL_RESULT,
    TOOL_RETRY,
    Event,
    SubagentTag,
)
from .forking import ForkPatch, fork
from .lease import DEFAULT_LEASE_RENEW_S, DEFAULT_LEASE_TTL_S, LeasePolicy, default_owner
from .observer import RunObserver
from .requests import DEFAULT_REQUEST_ID_LIMIT, Replay, check_same_body, replay
from .rollbacks import rollback
from .subagents import FOOTER, locate
from .timers import INPUT, RESUME, TIME, rfc3339
from .tools import validator_for

__all__ = [
    "AGENT_DRIFT",
    "APPROVAL_REQUESTED",
    "APPROVAL_RESOLVED",
    "BUDGET_EXCEEDED",
    "CALLER_LEFT",
    "CLIENT_GONE",
    "DEFAULT_LEASE_RENEW_S",
    "DEFAULT_LEASE_TTL_S",
    "DEFAULT_REQUEST_ID_LIMIT",
    "DEFAULT_TOOL_TIMEOUT_S",
    "DETACHED",
    "FOOTER",
    "INPUT",
    "MODEL_TURN",
    "PROVIDER_FALLBACK",
    "COMPACTION_DONE",
    "COMPACTION_START",
    "PROVIDER_RETRY",
    "RECONCILE_DONE",
    "RECONCILE_NOT_STARTED",
    "RECONCILE_UNKNOWN",
    "RESUME",
    "RUN_DONE",
    "RUN_START",
    "STEP_DONE",
    "STEP_START",
    "REASONING_DELTA",
    "TEXT_DELTA",
    "TIME",
    "TOOL_CALL",
    "TOOL_RECONCILE",
    "TOOL_RESULT",
    "TOOL_RETRY",
    "Comparison",
    "Engine",
    "Event",
    "ForkPatch",
    "LeasePolicy",
    "Replay",
    "ResolveRequest",
    "RunControl",
    "RunInterrupted",
    "RunObserver",
    "RunOutcome",
    "RunRequest",
    "Sink",
    "Step",
    "SubagentTag",
    "ToolOutcome",
    "ToolPort",
    "wait_first",
    "check_same_body",
    "compare",
    "default_owner",
    "fork",
    "locate",
    "replay",
    "rfc3339",
    "rollback",
    "run_digest",
    "validator_for",
]
