"""OpenTelemetry traces, on when an OTLP endpoint is configured (``--otel-endpoint`` or
``OTEL_EXPORTER_OTLP_ENDPOINT``): a span per RPC (:mod:`.interceptor`) and, inside it, a
span per model call (:class:`TracedProvider`), exported over OTLP/HTTP (protobuf) to
``ENDPOINT/v1/traces``. The daemon owns its tracer provider (nothing global is set), and
flushes it when it stops. Spans carry ids, model names and token counts, never message
contents."""

from __future__ import annotations

import asyncio
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer

from ..providers.base import ModelRequest, ModelResponse, Provider


class Tracing:
    def __init__(self, endpoint: str, service_name: str = "luoshod") -> None:
        self.endpoint = endpoint.rstrip("/") + "/v1/traces"
        self.provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
        self.provider.add_span_processor(
            BatchSpanProcessor(OTLPSpanExporter(endpoint=self.endpoint))
        )
        self.tracer: Tracer = self.provider.get_tracer("luoshod")

    async def shutdown(self) -> None:
        """Export what is buffered (the exporter blocks: off the event loop)."""
        await asyncio.to_thread(self.provider.shutdown)


class TracedProvider(Provider):
    """A provider whose every ``complete`` is a CLIENT span named ``chat MODEL`` with the
    GenAI attributes (system, model, token usage)."""

    def __init__(self, inner: Provider, tracer: Tracer) -> None:
        self.inner = inner
        self.name = inner.name
        self.tracer = tracer

    def validate(self, model: str, settings: dict[str, Any]) -> None:
        self.inner.validate(model, settings)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": self.name,
            "gen_ai.request.model": request.model,
            "luoshod.session_id": request.session_id,
        }
        with self.tracer.start_as_current_span(
            f"chat {request.model}",
            kind=SpanKind.CLIENT,
            attributes=attributes,
            record_exception=True,
        ) as span:
            try:
                response = await self.inner.complete(request)
            except Exception as e:
                span.set_status(Status(StatusCode.ERROR, type(e).__name__))
                raise
            span.set_attribute("gen_ai.usage.input_tokens", response.usage.prompt_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", response.usage.completion_tokens)
            span.set_attribute("luoshod.tool_calls", len(response.tool_calls))
            return response

    async def aclose(self) -> None:
        await self.inner.aclose()
