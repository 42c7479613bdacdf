"""``luoshod serve --otel-endpoint``: a real daemon process exports its spans over OTLP/HTTP
to a real receiver on loopback, which decodes them with the OTLP protos."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from luosho.client import Agent, CheckpointNotFoundError, Client, Tool
from tests.support.daemon_process import DaemonProcess

SCRIPT = [{"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]}, {"text": "3"}]
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"


class Receiver(ThreadingHTTPServer):
    """An OTLP/HTTP trace receiver: every span posted to /v1/traces, with its resource."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.spans: list[tuple[dict[str, str], trace_pb2.Span]] = []
        self.lock = threading.Lock()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        if self.path != "/v1/traces" or self.headers["Content-Type"] != "application/x-protobuf":
            self.send_error(404)
            return
        request = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
        with self.server.lock:
            for rs in request.resource_spans:
                resource = {a.key: a.value.string_value for a in rs.resource.attributes}
                self.server.spans += [(resource, s) for ss in rs.scope_spans for s in ss.spans]
        reply = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    thread = threading.Thread(target=r.serve_forever, daemon=True)
    thread.start()
    try:
        yield r
    finally:
        r.shutdown()
        r.server_close()


def attrs(span: trace_pb2.Span) -> dict[str, object]:
    out: dict[str, object] = {}
    for a in span.attributes:
        kind = a.value.WhichOneof("value")
        out[a.key] = getattr(a.value, kind) if kind else None
    return out


def test_rpc_and_model_call_spans_reach_the_receiver(receiver: Receiver) -> None:
    d = DaemonProcess("--store", "memory://", "--otel-endpoint", receiver.endpoint).start()
    try:
        traceparent = f"00-{TRACE_ID}-{PARENT_ID}-01"
        with Client(d.address, metadata={"traceparent": traceparent}) as client:
            agent = Agent("scripted:t", tools=[Tool("add")], model_settings={"script": SCRIPT})
            assert (
                client.execute("tr-1", "add", agent=agent, tools={"add": lambda a: a["a"] + a["b"]})
                .result()
                .final_text
                == "3"
            )
            with pytest.raises(CheckpointNotFoundError):
                client.get_session("nobody")
        assert d.terminate() == 0  # the daemon flushes its spans as it stops
    finally:
        d.stop()

    spans = {}
    for resource, span in receiver.spans:
        assert resource["service.name"] == "luoshod"
        spans.setdefault(span.name, []).append(span)
    (execute,) = spans["luosho.v1.AgentService/Execute"]
    assert execute.kind == trace_pb2.Span.SPAN_KIND_SERVER
    assert execute.trace_id.hex() == TRACE_ID and execute.parent_span_id.hex() == PARENT_ID
    assert attrs(execute) == {
        "rpc.system": "grpc",
        "rpc.service": "luosho.v1.AgentService",
        "rpc.method": "Execute",
        "rpc.grpc.status_code": 0,
    }
    model_calls = spans["chat t"]
    assert len(model_calls) == 2
    for call in model_calls:
        assert call.kind == trace_pb2.Span.SPAN_KIND_CLIENT
        assert call.trace_id == execute.trace_id and call.parent_span_id == execute.span_id
        a = attrs(call)
        assert (a["gen_ai.system"], a["gen_ai.request.model"], a["luoshod.session_id"]) == (
            "scripted",
            "t",
            "tr-1",
        )
        assert a["gen_ai.usage.input_tokens"] > 0  # type: ignore[operator]
    assert len(spans["luosho.v1.AgentService/SubmitToolResult"]) == 1
    (missing,) = spans["luosho.v1.AgentService/GetSession"]
    assert (
        missing.status.code == trace_pb2.Status.STATUS_CODE_ERROR
        and missing.status.message == "NOT_FOUND"
    )
    assert attrs(missing)["rpc.grpc.status_code"] == 5


def test_r78_model_call_spans_carry_the_genai_usage_attributes(receiver: Receiver) -> None:
    script = [
        {
            "text": "metered",
            "usage": {
                "prompt_tokens": 120,
                "completion_tokens": 30,
                "cached_input_tokens": 100,
                "cache_write_tokens": 20,
                "reasoning_tokens": 12,
                "cost_usd": 0.375,
            },
        },
    ]
    d = DaemonProcess("--store", "memory://", "--otel-endpoint", receiver.endpoint).start()
    try:
        with Client(d.address) as client:
            agent = Agent("scripted:priced", model_settings={"script": script})
            assert client.execute("tr-u", "go", agent=agent).result().final_text == "metered"
        assert d.terminate() == 0
    finally:
        d.stop()
    (call,) = [span for _, span in receiver.spans if span.name == "chat priced"]
    a = attrs(call)
    assert {k: v for k, v in a.items() if k.startswith("gen_ai.")} == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "scripted",
        "gen_ai.system": "scripted",
        "gen_ai.request.model": "priced",
        "gen_ai.response.model": "priced",  # the scripted model names none of its own
        "gen_ai.conversation.id": "tr-u",
        "gen_ai.usage.input_tokens": 120,
        "gen_ai.usage.output_tokens": 30,
        "gen_ai.usage.cache_read.input_tokens": 100,
        "gen_ai.usage.cache_creation.input_tokens": 20,
        "gen_ai.usage.reasoning.output_tokens": 12,
    }
    assert a["luoshod.usage.cost_usd"] == 0.375


def test_r78_a_call_without_cache_or_reasoning_leaves_their_attributes_out(
    receiver: Receiver,
) -> None:
    d = DaemonProcess("--store", "memory://", "--otel-endpoint", receiver.endpoint).start()
    try:
        with Client(d.address) as client:
            agent = Agent("scripted:plain", model_settings={"script": [{"text": "hi"}]})
            client.execute("tr-p", "go", agent=agent).result()
        assert d.terminate() == 0
    finally:
        d.stop()
    (call,) = [span for _, span in receiver.spans if span.name == "chat plain"]
    a = attrs(call)
    assert a["gen_ai.usage.output_tokens"] > 0  # type: ignore[operator]
    assert not {k for k in a if "cache" in k or "reasoning" in k or "cost" in k}
