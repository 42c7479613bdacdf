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
    attributes of OpenTelemetry's GenAI semantic conventions (R78): the operation, the
    provider (``gen_ai.provider.name``, and ``gen_ai.system`` as conventions before it
    named it), the requested and the answering model, the session as the conversation,
    the input and output tokens, and the cached, cache-write and reasoning tokens when the
    provider reports them (non-zero); the cost, which the conventions do not name, as
    ``luoshod.usage.cost_usd``."""

    def __init__(self, inner: Provider, tracer: Tracer) -> None:
        self.inner = inner
        self.name = inner.name
        self.tracer = tracer

    def validate(self, model: str, settings: dict[str, Any]) -> None:
        self.inner.validate(model, settings)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": self.name,
            "gen_ai.system": self.name,
            "gen_ai.request.model": request.model,
            "gen_ai.conversation.id": request.session_id,
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
            usage = response.usage
            span.set_attribute("gen_ai.response.model", response.model or request.model)
            span.set_attribute("gen_ai.usage.input_tokens", usage.prompt_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", usage.completion_tokens)
            for name, n in (
                ("gen_ai.usage.cache_read.input_tokens", usage.cached_input_tokens),
                ("gen_ai.usage.cache_creation.input_tokens", usage.cache_write_tokens),
                ("gen_ai.usage.reasoning.output_tokens", usage.reasoning_tokens),
            ):
                if n:
                    span.set_attribute(name, n)
            if usage.cost_usd:
                span.set_attribute("luoshod.usage.cost_usd", usage.cost_usd)
            span.set_attribute("luoshod.tool_calls", len(response.tool_calls))
            return response

    async def aclose(self) -> None:
        await self.inner.aclose()
