"""The one error hierarchy of luoshod.

Every error the daemon reports on purpose is a :class:`LuoshoError` with an UPPER_SNAKE
``reason`` and the message's variables in ``metadata``; the service layer maps each class
to a gRPC code from one table (``server/status.py``), and a test checks that every class
here is mapped.

    LuoshoError
    ├── InvalidArgument            INVALID_ARGUMENT, reason given per case
    │   └── PayloadTooLarge        RESOURCE_EXHAUSTED (limit in metadata)
    ├── CheckpointNotFound         NOT_FOUND
    ├── ApprovalNotFound           NOT_FOUND
    ├── SessionExists              ALREADY_EXISTS
    ├── ScheduleNotFound           NOT_FOUND (R87)
    ├── ScheduleExists             ALREADY_EXISTS (R87)
    ├── SchedulesUnsupported       FAILED_PRECONDITION (R87: the store keeps no schedules)
    ├── EventsOutOfRange           OUT_OF_RANGE (the oldest kept seq in metadata)
    ├── ToolCallNotFound           NOT_FOUND
    ├── ToolCallNotPending         FAILED_PRECONDITION
    ├── ReconcileNotAsked          FAILED_PRECONDITION (R77)
    ├── SessionAwaitingApproval    FAILED_PRECONDITION
    ├── AgentDrift                 FAILED_PRECONDITION
    ├── ResumeToolMissing          FAILED_PRECONDITION
    ├── SessionBusy                ABORTED
    ├── LeaseLost                  ABORTED (a concurrent writer saved the session first)
    ├── ProviderError              UNAVAILABLE (transient; retry_after_s in metadata)
    │   └── ProviderRejected       FAILED_PRECONDITION (no retry can fix it: HTTP 400, 401, …)
    ├── ShuttingDown               UNAVAILABLE
    ├── HolderUnreachable          UNAVAILABLE (the lease holder; retry_after_s in metadata)
    ├── TooManyRuns                RESOURCE_EXHAUSTED (the limit, retry_after_s in metadata)
    │   └── DaemonOverloaded       RESOURCE_EXHAUSTED (the loop's lag, retry_after_s)
    ├── Unauthenticated            UNAUTHENTICATED, reason given per case
    ├── PermissionDenied           PERMISSION_DENIED (the token's role is not enough)
    └── StoreError                 UNAVAILABLE (the driver's library failed)
        └── StoreFull              RESOURCE_EXHAUSTED

Every reason is a value of the proto's ``ErrorReason`` enum: the wire string is the value's
name without its ``ERROR_REASON_`` prefix (``ERROR_REASON_SESSION_BUSY`` is sent as
``SESSION_BUSY``). ``server/status.py`` sends a reason only through that enum (one the enum
lacks is a bug: logged, and the caller gets INTERNAL), and tests/codebase/test_error_reasons.py
scans
the code for reason strings, so the daemon cannot send a reason its clients cannot map.
(This module stays free of the generated code: the engine imports it and no gRPC.)
"""

from __future__ import annotations

from typing import Any


class LuoshoError(Exception):
    """Base of every deliberate error. ``reason`` is the ErrorInfo reason (an ErrorReason)."""

    reason: str = "INTERNAL"

    def __init__(self, message: str, *, reason: str | None = None, **metadata: Any) -> None:
        super().__init__(message)
        self.message = message
        if reason is not None:
            self.reason = reason
        self.metadata: dict[str, str] = {k: str(v) for k, v in metadata.items() if v is not None}


class InvalidArgument(LuoshoError):
    """Bad request: ids, JSON, schema, sizes. ``reason`` names the case."""

    reason = "INVALID_ARGUMENT"


class PayloadTooLarge(InvalidArgument):
    reason = "PAYLOAD_TOO_LARGE"


class CheckpointNotFound(LuoshoError):
    reason = "CHECKPOINT_NOT_FOUND"


class ApprovalNotFound(LuoshoError):
    """Unknown, already resolved, or being resolved (R33)."""

    reason = "APPROVAL_NOT_FOUND"


class SessionExists(LuoshoError):
    reason = "SESSION_EXISTS"


class EventsOutOfRange(LuoshoError):
    """A Watch cursor older than what the event log keeps."""

    reason = "EVENTS_OUT_OF_RANGE"


class ToolCallNotFound(LuoshoError):
    reason = "TOOL_CALL_NOT_FOUND"


class ToolCallNotPending(LuoshoError):
    """The call exists but no run of this daemon waits for its result."""

    reason = "TOOL_CALL_NOT_PENDING"


class ReconcileNotAsked(LuoshoError):
    """R77: NOT_STARTED or UNKNOWN for a call whose tool.reconcile is not waiting."""

    reason = "RECONCILE_NOT_ASKED"


class ScheduleNotFound(LuoshoError):
    reason = "SCHEDULE_NOT_FOUND"


class ScheduleExists(LuoshoError):
    reason = "SCHEDULE_EXISTS"


class SchedulesUnsupported(LuoshoError):
    reason = "SCHEDULES_UNSUPPORTED"


class SessionAwaitingApproval(LuoshoError):
    reason = "SESSION_AWAITING_APPROVAL"


class SessionBusy(LuoshoError):
    reason = "SESSION_BUSY"


class SessionSleeping(SessionBusy):
    """R86: the session sleeps; input waits as ``if_busy`` says (R68), ``Resume`` without
    ``wake`` is refused. Metadata: session_id, wake_at (RFC 3339)."""

    reason = "SESSION_SLEEPING"


class NotSleeping(LuoshoError):
    """R86: ``Resume`` with ``wake`` of a session that does not sleep."""

    reason = "NOT_SLEEPING"


class LeaseLost(LuoshoError):
    reason = "LEASE_LOST"


class ProviderError(LuoshoError):
    """A model call failed in a way that may pass: the provider's 429 or 5xx after the
    daemon's own retries, a timeout, a dropped connection, or a call the daemon did not
    make because the session's failure backoff or the model's circuit is open. Metadata:
    provider, model, status, error_type, provider_message, attempts, transient,
    retry_after_s."""

    reason = "PROVIDER_ERROR"


class ProviderRejected(ProviderError):
    """A model call that no retry can fix (HTTP 400, 401, 403, 404, 422, a context too
    long, a malformed answer): the run ends and nobody retries it."""

    reason = "PROVIDER_REJECTED"


class ShuttingDown(LuoshoError):
    reason = "SHUTTING_DOWN"


class HolderUnreachable(LuoshoError):
    """A request for a session another daemon holds could not be forwarded to it (R89):
    ``holder``, ``address`` and ``retry_after_s`` (when its lease ends) in metadata."""

    reason = "HOLDER_UNREACHABLE"


class TooManyRuns(LuoshoError):
    """The daemon already runs its configured maximum of active runs."""

    reason = "TOO_MANY_RUNS"


class DaemonOverloaded(TooManyRuns):
    """The daemon's event loop is late (``max_loop_lag_ms``): a new run is refused."""

    reason = "DAEMON_OVERLOADED"


class Unauthenticated(LuoshoError):
    """A call without a valid bearer token; ``reason`` says which."""

    reason = "UNAUTHENTICATED"


class PermissionDenied(LuoshoError):
    """A valid token whose role does not allow the call (R92): the role it has and the
    role the call needs are in ``metadata``."""

    reason = "ROLE_NOT_ALLOWED"


class StoreError(LuoshoError):
    reason = "STORE_UNAVAILABLE"


class StoreFull(StoreError):
    reason = "STORE_FULL"


#: A ``StoreError``'s ``written_by`` metadata when the store (its schema, or records in a
#: format past this luoshod's) was written by a newer luoshod: a daemon refusing it at start
#: says to upgrade, not to check the URL (``server/preflight.py``). Drivers set it.
NEWER_LUOSHOD = "a newer luoshod"


class AgentDrift(LuoshoError):
    """on_agent_drift=ERROR and the resuming agent differs; metadata says what changed."""

    reason = "AGENT_DRIFT"


class ResumeToolMissing(LuoshoError):
    reason = "RESUME_TOOL_MISSING"
