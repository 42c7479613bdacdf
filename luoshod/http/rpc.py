"""Calling the daemon's own ``AgentService`` handlers in process, as the gRPC server would.

The JSON API never talks to the engine or the store: it builds the RPC's request message
(``google.protobuf.json_format``), hands it to the very handler method gRPC calls, and
turns what comes back into JSON. So every check of the service layer (ids, JSON, sizes,
schemas, page tokens, the busy session, the error table) applies to HTTP unchanged.

:class:`CallContext` is the one piece of ``grpc.aio.ServicerContext`` the handlers use:
``abort_with_status`` (the error table's exit, which becomes :class:`RpcFailure` here) and
``add_done_callback`` (a run streamed to a caller who goes away is interrupted, exactly as
when a gRPC caller disconnects).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2

from ..server.status import DOMAIN

#: gRPC code → HTTP status; a reason listed in REASON_STATUS wins over its code's.
HTTP_STATUS: dict[grpc.StatusCode, int] = {
    grpc.StatusCode.OK: 200,
    grpc.StatusCode.CANCELLED: 499,
    grpc.StatusCode.UNKNOWN: 500,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.UNIMPLEMENTED: 501,
    grpc.StatusCode.INTERNAL: 500,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DATA_LOSS: 500,
    grpc.StatusCode.UNAUTHENTICATED: 401,
}
REASON_STATUS = {"PAYLOAD_TOO_LARGE": 413, "STORE_FULL": 507}


class RpcFailure(grpc.aio.AbortError):
    """A handler ended with an error status: its code, ``ErrorInfo`` reason, message and
    metadata, as the gRPC caller would have received them."""

    def __init__(
        self,
        code: grpc.StatusCode,
        reason: str,
        message: str,
        metadata: dict[str, str] | None = None,
    ):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.metadata = dict(metadata or {})

    @classmethod
    def from_status(cls, status: grpc.Status) -> RpcFailure:
        code, reason, metadata = status.code, "", {}
        for key, value in status.trailing_metadata or ():
            if key == "grpc-status-details-bin" and isinstance(value, bytes):
                for detail in status_pb2.Status.FromString(value).details:
                    info = error_details_pb2.ErrorInfo()
                    if detail.Unpack(info) and info.domain == DOMAIN:
                        reason, metadata = info.reason, dict(info.metadata)
        if not reason:  # a status without luoshod's ErrorInfo: gRPC's own, or a crash
            reason = "INTERNAL"
        return cls(code, reason, status.details or "", metadata)

    @property
    def http_status(self) -> int:
        return REASON_STATUS.get(self.reason, HTTP_STATUS.get(self.code, 500))

    def body(self) -> dict[str, Any]:
        return {
            "code": self.code.name,
            "reason": self.reason,
            "message": self.message,
            "metadata": self.metadata,
        }


def invalid(reason: str, message: str, **metadata: str) -> RpcFailure:
    """A request the HTTP layer itself refuses before it becomes an RPC (bad JSON body,
    a query parameter of the wrong type): the same shape as the service's refusals."""
    return RpcFailure(grpc.StatusCode.INVALID_ARGUMENT, reason, message, metadata)


class _Status(grpc.Status):
    def __init__(
        self, code: grpc.StatusCode, details: str, trailing_metadata: tuple[tuple[str, Any], ...]
    ) -> None:
        self.code, self.details, self.trailing_metadata = code, details, trailing_metadata


@dataclass
class CallContext:
    """The part of ``grpc.aio.ServicerContext`` that ``AgentService`` uses."""

    metadata: tuple[tuple[str, str], ...] = ()
    #: Who called, as gRPC's context tells it: the address (for the audit log's ``peer=``)
    #: and the TLS auth context (``x509_subject`` of a client certificate under mTLS).
    peer_address: str = "http:unknown"
    auth: dict[str, list[bytes]] = field(default_factory=dict)
    _callbacks: list[Callable[[Any], None]] = field(default_factory=list)
    _done: bool = False

    def peer(self) -> str:
        return self.peer_address

    def auth_context(self) -> dict[str, list[bytes]]:
        return self.auth

    async def abort_with_status(self, status: grpc.Status) -> None:
        raise RpcFailure.from_status(status)

    async def abort(
        self,
        code: grpc.StatusCode,
        details: str = "",
        trailing_metadata: tuple[tuple[str, Any], ...] = (),
    ) -> None:
        """A status passed on as it came (a peer daemon's error, R89)."""
        raise RpcFailure.from_status(_Status(code, details, trailing_metadata))

    def time_remaining(self) -> float | None:
        return None  # an HTTP request carries no deadline

    def add_done_callback(self, callback: Callable[[Any], None]) -> None:
        self._callbacks.append(callback)

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self.metadata

    def done(self) -> bool:
        return self._done

    def finish(self) -> None:
        """The call is over (answered, failed or its caller gone): what the handler
        registered runs now, as gRPC runs it when an RPC completes."""
        if self._done:
            return
        self._done = True
        for callback in self._callbacks:
            callback(self)


def to_json(message: Message) -> dict[str, Any]:
    """The proto's JSON mapping with the proto's own field names (as ``--json`` of the
    CLI): enums by name, 64-bit integers as strings, Timestamps in RFC 3339, every field
    shown (so a client reads ``false``/``0``/``""`` instead of a missing key)."""
    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


def from_json(data: Any, message: Message) -> Message:
    """``data`` (decoded JSON) into ``message``; both ``snake_case`` and ``lowerCamel``
    names are read, unknown fields are refused. Raises :class:`RpcFailure`."""
    if not isinstance(data, dict):
        raise invalid(
            "INVALID_REQUEST", f"the body must be a JSON object of {message.DESCRIPTOR.name}"
        )
    try:
        return json_format.ParseDict(data, message)
    except json_format.ParseError as e:
        raise invalid("INVALID_REQUEST", f"{message.DESCRIPTOR.name}: {e}") from None


Req = TypeVar("Req", bound=Message)
Resp = TypeVar("Resp", bound=Message)


# A handler takes the service's grpc context; a CallContext stands in for it (duck-typed).
async def unary(
    handler: Callable[[Req, Any], Awaitable[Resp]], request: Req, ctx: CallContext
) -> Resp:
    try:
        return await handler(request, ctx)
    finally:
        ctx.finish()


async def stream(
    handler: Callable[[Req, Any], AsyncIterator[Resp]], request: Req, ctx: CallContext
) -> AsyncIterator[Resp]:
    """The handler's responses; when the consumer stops early (its HTTP caller went away)
    the call is finished, which interrupts a run as a gRPC disconnect would."""
    responses = handler(request, ctx)
    try:
        async for response in responses:
            yield response
    finally:
        await responses.aclose()  # type: ignore[attr-defined]  # the handlers are async generators
        ctx.finish()
