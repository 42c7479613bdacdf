"""The exception tree of luosho.client, and the one place gRPC errors are translated.

Every error the daemon sends is a ``google.rpc.Status`` with one ``ErrorInfo`` (domain
``luosho.dev``); its ``reason`` picks the class, its ``metadata`` travels along::

    LuoshoError                        .code .reason .message .metadata
    ├── InvalidArgumentError           INVALID_ARGUMENT, any reason (kept as sent)
    ├── CheckpointNotFoundError        NOT_FOUND            CHECKPOINT_NOT_FOUND
    ├── ApprovalNotFoundError          NOT_FOUND            APPROVAL_NOT_FOUND
    ├── ToolCallNotFoundError          NOT_FOUND            TOOL_CALL_NOT_FOUND
    ├── SessionExistsError             ALREADY_EXISTS       SESSION_EXISTS
    ├── EventsOutOfRangeError          OUT_OF_RANGE         EVENTS_OUT_OF_RANGE
    ├── ToolCallNotPendingError        FAILED_PRECONDITION  TOOL_CALL_NOT_PENDING
    ├── SessionAwaitingApprovalError   FAILED_PRECONDITION  SESSION_AWAITING_APPROVAL
    ├── AgentDriftError                FAILED_PRECONDITION  AGENT_DRIFT
    ├── ResumeToolMissingError         FAILED_PRECONDITION  RESUME_TOOL_MISSING
    ├── SessionBusyError               ABORTED              SESSION_BUSY
    ├── LeaseLostError                 ABORTED              LEASE_LOST
    ├── PayloadTooLargeError           RESOURCE_EXHAUSTED   PAYLOAD_TOO_LARGE
    ├── StoreFullError                 RESOURCE_EXHAUSTED   STORE_FULL
    ├── ProviderError                  UNAVAILABLE          PROVIDER_ERROR (retried)
    │   └── ProviderRejectedError      FAILED_PRECONDITION  PROVIDER_REJECTED (never retried)
    ├── UnavailableError               UNAVAILABLE with no known reason (daemon unreachable)
    │   └── ShuttingDownError          UNAVAILABLE          SHUTTING_DOWN
    └── IncompleteRunError             client side: a run's stream ended without run.done

INVALID_ARGUMENT reasons without a class of their own (INVALID_SESSION_ID,
UNKNOWN_TOOL_CALL, TOOL_RESULT_OUT_OF_ORDER, INVALID_HISTORY_LIMIT,
INVALID_APPROVAL_TIMEOUT, …) are ``InvalidArgumentError`` with that ``reason``. Any other
status is a plain ``LuoshoError``. The original ``grpc.RpcError`` is kept as
``__cause__``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2

from luosho.v1.agent_pb2 import ErrorReason

__all__ = [
    "AgentDriftError",
    "ApprovalNotFoundError",
    "CheckpointNotFoundError",
    "EventsOutOfRangeError",
    "IncompleteRunError",
    "InvalidArgumentError",
    "LeaseLostError",
    "LuoshoError",
    "PayloadTooLargeError",
    "ProviderError",
    "ProviderRejectedError",
    "ResumeToolMissingError",
    "SessionAwaitingApprovalError",
    "SessionBusyError",
    "SessionExistsError",
    "ShuttingDownError",
    "error_reason",
    "StoreFullError",
    "ToolCallNotFoundError",
    "ToolCallNotPendingError",
    "UnavailableError",
]

ERROR_DOMAIN = "luosho.dev"
_STATUS_DETAILS_KEY = "grpc-status-details-bin"
_PUSHBACK_KEY = "grpc-retry-pushback-ms"


class LuoshoError(Exception):
    """An RPC failed. ``reason`` is the ErrorInfo reason ("" when the server sent none)."""

    def __init__(
        self,
        code: grpc.StatusCode,
        reason: str,
        message: str,
        metadata: Mapping[str, str] | None = None,
        pushback_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.metadata: dict[str, str] = dict(metadata or {})
        #: gRPC's ``grpc-retry-pushback-ms`` trailer in seconds, when the server sent one
        #: (negative: do not retry).
        self.pushback_s = pushback_s

    @property
    def error_reason(self) -> int:
        """``reason`` as the proto's ``ErrorReason`` value (0 when unknown or absent)."""
        return error_reason(self.reason)

    def __str__(self) -> str:
        label = self.reason or self.code.name
        return f"{label}: {self.message}" if self.message else label

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(code={self.code.name}, reason={self.reason!r}, "
            f"message={self.message!r}, metadata={self.metadata!r})"
        )


class InvalidArgumentError(LuoshoError):
    """The request was refused as invalid; ``reason`` says which rule it broke."""


class CheckpointNotFoundError(LuoshoError):
    """The session (or the requested step of its history) has no checkpoint."""


class ApprovalNotFoundError(LuoshoError):
    """The approval is unknown, was already decided, or is being decided right now."""

    @property
    def approval_id(self) -> str:
        return self.metadata.get("approval_id", "")


class ToolCallNotFoundError(LuoshoError):
    """SubmitToolResult named a tool call that the session does not have."""


class SessionExistsError(LuoshoError):
    """Fork's ``new_session_id`` already has a checkpoint."""


class EventsOutOfRangeError(LuoshoError):
    """Watch's cursor is older than the session's kept event log.

    Events between the cursor and ``oldest_kept_seq`` are gone: re-read the state with
    ``get_session`` and watch again from ``oldest_kept_seq - 1``.
    """

    @property
    def oldest_kept_seq(self) -> int:
        try:
            return int(self.metadata.get("oldest_kept_seq", "0"))
        except ValueError:
            return 0


class ToolCallNotPendingError(LuoshoError):
    """The tool call exists but has no result and no run is waiting for one.

    Its run stopped (cancelled stream, daemon restart): resume the session and the call
    is handed out again.
    """


class SessionAwaitingApprovalError(LuoshoError):
    """The session is paused on an approval; resolve it before executing again."""

    @property
    def approval_id(self) -> str:
        return self.metadata.get("approval_id", "")


class AgentDriftError(LuoshoError):
    """The resuming agent differs from the saved one and on_agent_drift is "error"."""


class ResumeToolMissingError(LuoshoError):
    """A pending tool call names a tool the resuming agent no longer declares."""


class SessionBusyError(LuoshoError):
    """Another run holds the session."""


class LeaseLostError(LuoshoError):
    """The daemon lost the session's lease (another writer took over)."""


class PayloadTooLargeError(LuoshoError):
    """A payload is over the daemon's configured limit."""


class StoreFullError(LuoshoError):
    """The daemon's store refused the write: it is full."""


class ProviderError(LuoshoError):
    """A model call failed. As ``PROVIDER_ERROR`` (UNAVAILABLE) it may pass later: the
    provider's 429 or 5xx after the daemon's own retries, a timeout, or a call the daemon
    held back (``error_type`` ``session_backoff`` or ``circuit_open``); runs retry it after
    ``retry_after_s``. ``metadata`` names the ``provider``, ``model``, HTTP ``status``,
    ``error_type`` and ``provider_message``."""

    @property
    def status(self) -> int | None:
        """The provider's HTTP status, when it answered one."""
        try:
            return int(self.metadata["status"])
        except (KeyError, ValueError):
            return None

    @property
    def provider_message(self) -> str:
        """The provider's own error message (keys redacted)."""
        return self.metadata.get("provider_message", "")


class ProviderRejectedError(ProviderError):
    """The provider refused the model call and no retry can change that (HTTP 400, 401,
    403, 404, 422, a context too long): the run ended, and is not retried. Fix the request,
    the agent (its model settings) or the configuration, then resume."""


class UnavailableError(LuoshoError):
    """The daemon is unreachable or unavailable; retrying later may succeed."""


class ShuttingDownError(UnavailableError):
    """The daemon is draining for shutdown."""


class IncompleteRunError(LuoshoError):
    """A run's event stream ended without its run.done event."""


#: The prefix of every ErrorReason value's name: the ErrorInfo reason is the name without it
#: (ERROR_REASON_SESSION_BUSY travels as "SESSION_BUSY").
REASON_PREFIX = "ERROR_REASON_"


def error_reason(reason: str) -> int:
    """The proto's ``ErrorReason`` value of an ErrorInfo reason; ``ERROR_REASON_UNSPECIFIED``
    (0) for a reason this client's proto does not know (a newer daemon's)."""
    try:
        return (
            ErrorReason.Value(REASON_PREFIX + reason)
            if reason
            else ErrorReason.ERROR_REASON_UNSPECIFIED
        )
    except ValueError:
        return ErrorReason.ERROR_REASON_UNSPECIFIED


# The one mapping table: ErrorReason (the ErrorInfo reason, domain luosho.dev) -> class.
_ERROR_BY_REASON: dict[int, type[LuoshoError]] = {
    ErrorReason.ERROR_REASON_SESSION_BUSY: SessionBusyError,
    ErrorReason.ERROR_REASON_SESSION_AWAITING_APPROVAL: SessionAwaitingApprovalError,
    ErrorReason.ERROR_REASON_CHECKPOINT_NOT_FOUND: CheckpointNotFoundError,
    ErrorReason.ERROR_REASON_APPROVAL_NOT_FOUND: ApprovalNotFoundError,
    ErrorReason.ERROR_REASON_TOOL_CALL_NOT_FOUND: ToolCallNotFoundError,
    ErrorReason.ERROR_REASON_TOOL_CALL_NOT_PENDING: ToolCallNotPendingError,
    ErrorReason.ERROR_REASON_SESSION_EXISTS: SessionExistsError,
    ErrorReason.ERROR_REASON_EVENTS_OUT_OF_RANGE: EventsOutOfRangeError,
    ErrorReason.ERROR_REASON_AGENT_DRIFT: AgentDriftError,
    ErrorReason.ERROR_REASON_RESUME_TOOL_MISSING: ResumeToolMissingError,
    ErrorReason.ERROR_REASON_LEASE_LOST: LeaseLostError,
    ErrorReason.ERROR_REASON_PAYLOAD_TOO_LARGE: PayloadTooLargeError,
    ErrorReason.ERROR_REASON_STORE_FULL: StoreFullError,
    ErrorReason.ERROR_REASON_PROVIDER_ERROR: ProviderError,
    ErrorReason.ERROR_REASON_PROVIDER_REJECTED: ProviderRejectedError,
    ErrorReason.ERROR_REASON_SHUTTING_DOWN: ShuttingDownError,
}

# Fallbacks by gRPC code, for reasons not in the table (or no ErrorInfo at all).
_ERROR_BY_CODE: dict[grpc.StatusCode, type[LuoshoError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
}


def _rich_status(trailing_metadata: Any) -> status_pb2.Status | None:
    for key, value in trailing_metadata or ():
        if key == _STATUS_DETAILS_KEY:
            return status_pb2.Status.FromString(value)
    return None


def _pushback_s(trailing_metadata: Any) -> float | None:
    for key, value in trailing_metadata or ():
        if key == _PUSHBACK_KEY:
            try:
                return int(value.decode() if isinstance(value, bytes) else value) / 1000
            except ValueError:
                return None
    return None


def _error_info(status: status_pb2.Status | None) -> error_details_pb2.ErrorInfo | None:
    if status is None:
        return None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return info
    return None


def from_rpc_error(error: grpc.RpcError) -> LuoshoError:
    """The typed error for a failed call (sync ``grpc.RpcError`` or ``grpc.aio.AioRpcError``).

    Both expose ``code()``, ``details()`` and ``trailing_metadata()`` synchronously once
    the call has failed, so one function serves both clients.
    """
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    details = (error.details() if hasattr(error, "details") else None) or ""
    trailing = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
    status = _rich_status(trailing)
    info = _error_info(status)
    reason = info.reason if info is not None else ""
    metadata = dict(info.metadata) if info is not None else {}
    cls: type[LuoshoError] | None = None
    if info is not None and info.domain == ERROR_DOMAIN:
        cls = _ERROR_BY_REASON.get(error_reason(reason))
    if cls is None:
        cls = _ERROR_BY_CODE.get(code, LuoshoError)
    message = status.message if status is not None and status.message else details
    return cls(code, reason, message, metadata, _pushback_s(trailing))


@contextlib.contextmanager
def translate_errors() -> Iterator[None]:
    """Re-raise any ``grpc.RpcError`` of the block as its typed ``LuoshoError``."""
    try:
        yield
    except grpc.RpcError as error:
        raise from_rpc_error(error) from error
