"""Errors → ``google.rpc.Status`` with one ``ErrorInfo``, from one table.

Every handler is wrapped by :func:`unary` or :func:`streaming`, the one place where a
:class:`~luoshod.errors.LuoshoError` becomes a gRPC status. Anything else is a bug: it is
logged with its traceback and the caller gets ``INTERNAL`` without one.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from luosho.v1.agent_pb2 import ErrorReason

from .. import errors as E

log = logging.getLogger("luoshod.server")

DOMAIN = "luosho.dev"

#: The prefix of every ErrorReason value's name; the reason on the wire is the name without it.
REASON_PREFIX = "ERROR_REASON_"

#: Every reason the daemon may send: ErrorReason's names without the prefix (UNSPECIFIED aside).
REASONS: frozenset[str] = frozenset(
    name.removeprefix(REASON_PREFIX)
    for name in ErrorReason.DESCRIPTOR.values_by_name
    if name != REASON_PREFIX + "UNSPECIFIED"
)


def reason_value(reason: str) -> int:
    """The ErrorReason number of a wire reason (0, UNSPECIFIED, for one the enum lacks)."""
    return ErrorReason.Value(REASON_PREFIX + reason) if reason in REASONS else 0


def wire_reason(value: int) -> str:
    """The ErrorInfo reason of an ErrorReason value: its name without the prefix."""
    return ErrorReason.Name(value).removeprefix(REASON_PREFIX)


#: The one mapping table. Subclasses not listed take their nearest listed base's code.
GRPC_CODES: dict[type[E.LuoshoError], grpc.StatusCode] = {
    E.LuoshoError: grpc.StatusCode.INTERNAL,
    E.InvalidArgument: grpc.StatusCode.INVALID_ARGUMENT,
    E.PayloadTooLarge: grpc.StatusCode.RESOURCE_EXHAUSTED,
    E.CheckpointNotFound: grpc.StatusCode.NOT_FOUND,
    E.ApprovalNotFound: grpc.StatusCode.NOT_FOUND,
    E.SessionExists: grpc.StatusCode.ALREADY_EXISTS,
    E.ScheduleNotFound: grpc.StatusCode.NOT_FOUND,
    E.ScheduleExists: grpc.StatusCode.ALREADY_EXISTS,
    E.SchedulesUnsupported: grpc.StatusCode.FAILED_PRECONDITION,
    E.EventsOutOfRange: grpc.StatusCode.OUT_OF_RANGE,
    E.ToolCallNotFound: grpc.StatusCode.NOT_FOUND,
    E.ToolCallNotPending: grpc.StatusCode.FAILED_PRECONDITION,
    E.ReconcileNotAsked: grpc.StatusCode.FAILED_PRECONDITION,
    E.SessionAwaitingApproval: grpc.StatusCode.FAILED_PRECONDITION,
    E.AgentDrift: grpc.StatusCode.FAILED_PRECONDITION,
    E.ResumeToolMissing: grpc.StatusCode.FAILED_PRECONDITION,
    E.SessionBusy: grpc.StatusCode.ABORTED,
    E.SessionSleeping: grpc.StatusCode.ABORTED,
    E.NotSleeping: grpc.StatusCode.FAILED_PRECONDITION,
    E.LeaseLost: grpc.StatusCode.ABORTED,
    E.ProviderError: grpc.StatusCode.UNAVAILABLE,
    E.ProviderRejected: grpc.StatusCode.FAILED_PRECONDITION,
    E.ShuttingDown: grpc.StatusCode.UNAVAILABLE,
    E.HolderUnreachable: grpc.StatusCode.UNAVAILABLE,
    E.TooManyRuns: grpc.StatusCode.RESOURCE_EXHAUSTED,
    E.DaemonOverloaded: grpc.StatusCode.RESOURCE_EXHAUSTED,
    E.Unauthenticated: grpc.StatusCode.UNAUTHENTICATED,
    E.PermissionDenied: grpc.StatusCode.PERMISSION_DENIED,
    E.StoreError: grpc.StatusCode.UNAVAILABLE,
    E.StoreFull: grpc.StatusCode.RESOURCE_EXHAUSTED,
}


def code_for(err: E.LuoshoError) -> grpc.StatusCode:
    for cls in type(err).__mro__:
        if cls in GRPC_CODES:
            return GRPC_CODES[cls]
    return grpc.StatusCode.INTERNAL


def to_status(err: E.LuoshoError) -> grpc.Status:
    """The status of ``err``; its reason goes through the ErrorReason enum, and a reason the
    enum lacks is a bug (logged; the caller gets INTERNAL)."""
    value = reason_value(err.reason)
    if value == 0:
        log.error(
            "error reason %r is not in the proto's ErrorReason enum (add it there)",
            err.reason,
            exc_info=err,
        )
        err = E.LuoshoError("internal error (see the daemon's log)", reason="INTERNAL")
        value = reason_value(err.reason)
    code = code_for(err)
    info = error_details_pb2.ErrorInfo(
        reason=wire_reason(value), domain=DOMAIN, metadata=err.metadata
    )
    detail = any_pb2.Any()
    detail.Pack(info)
    return rpc_status.to_status(
        status_pb2.Status(code=code.value[0], message=err.message, details=[detail])
    )


async def _abort(context: grpc.aio.ServicerContext, err: BaseException, method: str) -> None:
    if not isinstance(err, E.LuoshoError):
        log.error("unexpected error in %s", method, exc_info=err)
        err = E.LuoshoError(f"internal error in {method} (see the daemon's log)", reason="INTERNAL")
    await context.abort_with_status(to_status(err))


Req = TypeVar("Req")
Resp = TypeVar("Resp")


def unary(
    fn: Callable[[Any, Req, grpc.aio.ServicerContext], Awaitable[Resp]],
) -> Callable[[Any, Req, grpc.aio.ServicerContext], Awaitable[Resp]]:
    @functools.wraps(fn)
    async def handler(self: Any, request: Req, context: grpc.aio.ServicerContext) -> Resp:
        try:
            return await fn(self, request, context)
        except grpc.aio.AbortError:
            raise
        except Exception as e:  # noqa: BLE001 - the one boundary
            await _abort(context, e, fn.__name__)
            raise  # unreachable: abort raises

    return handler


def streaming(
    fn: Callable[[Any, Req, grpc.aio.ServicerContext], AsyncIterator[Resp]],
) -> Callable[[Any, Req, grpc.aio.ServicerContext], AsyncIterator[Resp]]:
    @functools.wraps(fn)
    async def handler(
        self: Any, request: Req, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[Resp]:
        try:
            async for item in fn(self, request, context):
                yield item
        except grpc.aio.AbortError:
            raise
        except Exception as e:  # noqa: BLE001 - the one boundary
            await _abort(context, e, fn.__name__)

    return handler
