"""One grpc.aio server interceptor for metrics and traces: every RPC of every service
(AgentService, health, reflection) is timed, counted by its final status code and, when
tracing is on, wrapped in a SERVER span that continues the caller's W3C ``traceparent``."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any

import grpc
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from .metrics import Metrics

_PROPAGATOR = TraceContextTextMapPropagator()


class RpcInterceptor(grpc.aio.ServerInterceptor):
    def __init__(self, metrics: Metrics | None = None, tracer: Tracer | None = None) -> None:
        self.metrics = metrics
        self.tracer = tracer

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler | None]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        handler = await continuation(details)
        if handler is None:
            return handler
        method, metadata = details.method, details.invocation_metadata or ()
        # grpc's handlers are namedtuples; its stubs type an abstract class without _replace.
        if handler.unary_unary is not None:
            return handler._replace(  # type: ignore[attr-defined]  # see above
                unary_unary=self._unary(handler.unary_unary, method, metadata)
            )
        if handler.unary_stream is not None and inspect.isasyncgenfunction(handler.unary_stream):
            return handler._replace(  # type: ignore[attr-defined]  # a namedtuple
                unary_stream=self._stream(handler.unary_stream, method, metadata)
            )
        return handler  # client streams (reflection): not observed

    def _unary(
        self, inner: Callable[..., Any], method: str, metadata: Sequence[Any]
    ) -> Callable[..., Any]:
        async def unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
            with self._observe(method, metadata, context):
                result = inner(request, context)
                return await result if inspect.isawaitable(result) else result

        return unary

    def _stream(
        self, inner: Callable[..., AsyncIterator[Any]], method: str, metadata: Sequence[Any]
    ) -> Callable[..., Any]:
        async def stream(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            with self._observe(method, metadata, context):
                async for response in inner(request, context):
                    yield response

        return stream

    @contextmanager
    def _observe(
        self, method: str, metadata: Sequence[Any], context: grpc.aio.ServicerContext
    ) -> Iterator[None]:
        start = time.perf_counter()
        span = None
        if self.tracer is not None:
            service, _, name = method.lstrip("/").rpartition("/")
            carrier = {m.key: m.value for m in metadata if isinstance(m.value, str)}
            span = self.tracer.start_span(
                method.lstrip("/"),
                context=_PROPAGATOR.extract(carrier),
                kind=SpanKind.SERVER,
                attributes={"rpc.system": "grpc", "rpc.service": service, "rpc.method": name},
            )
        code = grpc.StatusCode.OK
        try:
            with trace.use_span(span, end_on_exit=False) if span is not None else nullcontext():
                yield
            code = _code(context) or grpc.StatusCode.OK
        except grpc.aio.AbortError:
            code = _code(context) or grpc.StatusCode.UNKNOWN
            raise
        except asyncio.CancelledError:
            code = grpc.StatusCode.CANCELLED
            raise
        except BaseException:
            code = grpc.StatusCode.UNKNOWN
            raise
        finally:
            if self.metrics is not None:
                self.metrics.rpc_done(method, code, time.perf_counter() - start)
            if span is not None:
                span.set_attribute("rpc.grpc.status_code", code.value[0])
                if code is not grpc.StatusCode.OK:
                    span.set_status(Status(StatusCode.ERROR, code.name))
                span.end()


def _code(context: grpc.aio.ServicerContext) -> grpc.StatusCode | None:
    code = context.code()
    if code is None or isinstance(code, grpc.StatusCode):
        return code
    return next((c for c in grpc.StatusCode if c.value[0] == code), None)
