"""What the HTTP tests share: a real daemon with its HTTP listener on port 0, a gRPC
harness to make sessions with (the app's side), and a real HTTP client (aiohttp).
(A module of its own name, not conftest, so that imports of it are unambiguous.)"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import aiohttp

from luosho.v1 import agent_pb2 as pb
from luoshod.server.app import Config, Daemon
from tests.support.harness import Harness, agent, calls

TRIP_SCRIPT = [
    calls(("get_weather", {"city": "Lisbon"}), text="Let me look that up."),
    {"text": "Lisbon is sunny today."},
]
REFUND_SCRIPT = [calls(("refund", {"order": 42})), {"text": "Done with the refund."}]


def trip_agent() -> pb.AgentSpec:
    return agent(
        TRIP_SCRIPT, ["get_weather"], instructions="You are a travel agent.", model="scripted:trip"
    )


def refund_agent() -> pb.AgentSpec:
    spec = agent(
        REFUND_SCRIPT, ["refund"], instructions="You refund orders.", model="scripted:refund"
    )
    spec.tools[0].needs_approval = True
    return spec


QUESTION = "Which report, daily or weekly?"


def report_agent() -> pb.AgentSpec:
    """An agent that asks a person a question (R88) through its tool ``ask``."""
    spec = agent(
        [calls(("ask", {"question": QUESTION})), {"text": "Report sent."}],
        [],
        instructions="You send reports.",
        model="scripted:report",
    )
    spec.tools.append(pb.ToolSpec(name="ask", input_schema_json="{}", question=True))
    return spec


@dataclass
class Console:
    """The daemon under test, its HTTP base URL, an HTTP client and the app's harness."""

    daemon: Daemon
    base: str
    http: aiohttp.ClientSession
    app: Harness

    async def finished_trip(self, session_id: str, sky: str = "sunny") -> None:
        log = await self.app.run(
            session_id,
            "Plan a day in Lisbon",
            trip_agent(),
            {"get_weather": lambda a: {"city": a["city"], "sky": sky}},
        )
        assert log.done is not None and log.done.finish_reason == pb.FINISH_REASON_STOP, log.types

    async def paused_refund(self, session_id: str) -> str:
        log = await self.app.run(
            session_id, "Refund order 42", refund_agent(), {"refund": lambda a: {"ok": True}}
        )
        assert (
            log.done is not None and log.done.finish_reason == pb.FINISH_REASON_AWAITING_APPROVAL
        ), log.types
        return log.done.approval_id

    async def paused_question(self, session_id: str) -> str:
        log = await self.app.run(session_id, "Send the report", report_agent())
        assert (
            log.done is not None and log.done.finish_reason == pb.FINISH_REASON_AWAITING_APPROVAL
        ), log.types
        return log.done.approval_id

    async def get(self, path: str, **kw: Any) -> tuple[int, Any]:
        async with self.http.get(self.base + path, **kw) as r:
            return r.status, await _body(r)

    async def post(self, path: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
        if body is not None and "data" not in kw:
            kw["json"] = body
        async with self.http.post(self.base + path, **kw) as r:
            return r.status, await _body(r)

    async def delete(self, path: str, **kw: Any) -> tuple[int, Any]:
        async with self.http.delete(self.base + path, **kw) as r:
            return r.status, await _body(r)


async def _body(r: aiohttp.ClientResponse) -> Any:
    text = await r.text()
    if r.content_type == "application/json":
        return json.loads(text)
    if r.content_type == "application/x-ndjson":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return text


def http_config(tmp_path: Path, store: str = "sqlite", **kw: Any) -> Config:
    url = {
        "sqlite": f"sqlite:///{tmp_path}/luoshod.db",
        "lmdb": f"lmdb://{tmp_path}/lmdb",
        "memory": "memory://",
    }[store]
    base = Config(
        listen=["127.0.0.1:0"],
        store=url,
        http_listen="127.0.0.1:0",
        tool_timeout_s=30,
        drain_timeout_s=5,
    )
    return replace(base, **kw)


ConsoleFactory = Callable[..., Awaitable[Console]]


def _token_stub(channel: Any, token: str) -> Any:
    """An AgentService stub whose every call carries the token."""
    from luosho.v1 import agent_pb2_grpc as pb_grpc

    stub = pb_grpc.AgentServiceStub(channel)

    class WithToken:
        def __getattr__(self, name: str) -> Any:
            method = getattr(stub, name)
            return lambda req, **kw: method(
                req, metadata=[("authorization", f"Bearer {token}")], **kw
            )

    return WithToken()


def assert_error(status: int, body: Any, http: int, code: str, reason: str) -> dict[str, Any]:
    assert status == http, (status, body)
    assert isinstance(body, dict) and set(body) == {"code", "reason", "message", "metadata"}, body
    assert (body["code"], body["reason"]) == (code, reason), body
    assert "Traceback" not in body["message"] and body["message"], body
    return body


async def sse(response: aiohttp.ClientResponse) -> AsyncIterator[dict[str, Any]]:
    """The frames of an event stream: ``{"id", "event", "data"}`` (comments skipped)."""
    frame: dict[str, Any] = {}
    async for raw in response.content:
        line = raw.decode().rstrip("\n")
        if not line:
            if "event" in frame or "data" in frame:
                yield frame
            frame = {}
        elif not line.startswith(":"):
            key, _, value = line.partition(":")
            frame[key] = value.removeprefix(" ")
