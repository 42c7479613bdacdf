"""How many times a run is retried: ``max_attempts`` bounds the attempts in a row that make
no progress (no new ``model.turn`` or ``tool.result``), and each retry waits at least the
``retry_after_s`` the daemon named; ``PROVIDER_REJECTED`` is never retried.

A real daemon cannot be made to fail the same way at will, attempt after attempt, so a
fake AgentService on a real gRPC server on loopback plays it: each attempt sends new
``run.start``/``step.start`` events (or a new ``model.turn``) and then fails.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator

import grpc
import pytest
from client_scripts import scripted, text
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

import luosho.client as lc
from luosho.client import AsyncClient, Client
from luosho.v1 import agent_pb2, agent_pb2_grpc

AGENT = scripted(text("never"))


def status(code: grpc.StatusCode, reason: str, **metadata: str) -> grpc.Status:
    info = error_details_pb2.ErrorInfo(reason=reason, domain="luosho.dev", metadata=metadata)
    detail = any_pb2.Any()
    detail.Pack(info)
    return rpc_status.to_status(
        status_pb2.Status(code=code.value[0], message=f"{reason} on purpose", details=[detail])
    )


class FlakyService(agent_pb2_grpc.AgentServiceServicer):
    """Execute: each attempt sends ``per_attempt`` new events, then fails with ``error``;
    the attempt numbered ``finish_at`` ends the run instead."""

    def __init__(self, per_attempt: list[str], error: grpc.Status, finish_at: int = 0) -> None:
        self.per_attempt = per_attempt
        self.error = error
        self.finish_at = finish_at
        self.started: list[float] = []
        self.seq = 0

    def _event(self, type_: str, **kw: object) -> agent_pb2.ExecuteResponse:
        self.seq += 1
        return agent_pb2.ExecuteResponse(
            event=agent_pb2.Event(type=type_, seq=self.seq, session_id="s", **kw)
        )

    async def Execute(
        self, request: agent_pb2.ExecuteRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[agent_pb2.ExecuteResponse]:
        self.started.append(time.monotonic())
        for type_ in self.per_attempt:
            yield self._event(type_)
        if len(self.started) == self.finish_at:
            yield self._event("run.done", run_done=agent_pb2.RunDone(final_text="at last"))
            return
        await context.abort_with_status(self.error)


async def start_server(service: FlakyService, servers: list[grpc.aio.Server]) -> str:
    """A real gRPC server on loopback serving ``service``; its target."""
    server = grpc.aio.server()
    agent_pb2_grpc.add_AgentServiceServicer_to_server(service, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    servers.append(server)
    return f"127.0.0.1:{port}"


@pytest.fixture
async def serve() -> AsyncIterator:
    servers: list[grpc.aio.Server] = []
    yield lambda service: start_server(service, servers)
    for server in servers:
        await server.stop(0)


FAILING = status(
    grpc.StatusCode.UNAVAILABLE,
    "PROVIDER_ERROR",
    retry_after_s="0.3",
    error_type="overloaded_error",
)
POLICY = lc.RetryPolicy(max_attempts=3, initial_backoff=0.01, max_backoff=0.02)


async def test_attempts_without_progress_stop_after_max_attempts_waiting_retry_after(
    serve, caplog
) -> None:
    # finish_at: a client that counted any new event as progress would get there.
    service = FlakyService(["run.start", "step.start"], FAILING, finish_at=5)
    async with AsyncClient(await serve(service), retry=POLICY) as client:
        run = client.execute("s", "hi", agent=AGENT)
        seen = []
        with pytest.raises(lc.ProviderError) as err:
            async for event in run:
                seen.append(event.type)
    assert run.attempts == 3 and len(service.started) == 3
    assert seen == ["run.start", "step.start"] * 3  # new events are still delivered
    assert err.value.metadata["error_type"] == "overloaded_error"
    gaps = [b - a for a, b in zip(service.started, service.started[1:])]
    assert all(g >= 0.3 for g in gaps), gaps  # retry_after_s, not the policy's 10-20 ms
    # Each wait is said, so a caller whose daemon is away hears why nothing happens.
    said = [r.getMessage() for r in caplog.records if r.name == "luosho.client"]
    assert len(said) == 2 and "attempt 2 of 3 without progress, the next in 0.3s" in said[0], said


def test_attempts_without_progress_stop_after_max_attempts_sync(serve_in_thread) -> None:
    service = FlakyService(["run.start", "step.start"], FAILING, finish_at=5)
    target = serve_in_thread(service)
    with Client(target, retry=POLICY) as client:
        run = client.execute("s", "hi", agent=AGENT)
        with pytest.raises(lc.ProviderError):
            run.result()
    assert run.attempts == 3
    gaps = [b - a for a, b in zip(service.started, service.started[1:])]
    assert all(g >= 0.3 for g in gaps), gaps


async def test_a_new_model_turn_starts_the_count_again(serve) -> None:
    service = FlakyService(
        ["run.start", "model.turn"],
        status(grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN"),
        finish_at=6,
    )
    async with AsyncClient(
        await serve(service), retry=lc.RetryPolicy(max_attempts=2, initial_backoff=0, max_backoff=0)
    ) as client:
        result = await client.execute("s", "hi", agent=AGENT)
    assert result.final_text == "at last" and len(service.started) == 6


async def test_provider_rejected_is_never_retried(serve) -> None:
    rejected = status(
        grpc.StatusCode.FAILED_PRECONDITION,
        "PROVIDER_REJECTED",
        status="400",
        provider_message="bad request",
    )
    service = FlakyService(["run.start", "step.start"], rejected)
    async with AsyncClient(await serve(service)) as client:  # default retries
        run = client.execute("s", "hi", agent=AGENT)
        with pytest.raises(lc.ProviderRejectedError) as err:
            await run
    assert run.attempts == 1 and len(service.started) == 1
    assert (err.value.status, err.value.provider_message) == (400, "bad request")
    assert isinstance(err.value, lc.ProviderError)


def test_backoff_is_at_least_retry_after() -> None:
    policy = lc.RetryPolicy(initial_backoff=0.1, max_backoff=2.0, jitter=0)
    err = lc.UnavailableError(
        grpc.StatusCode.UNAVAILABLE, "PROVIDER_ERROR", "x", {"retry_after_s": "5"}
    )
    assert policy.backoff(1, err) == 5.0
    assert policy.backoff(1, None) == pytest.approx(0.1)
    bad = lc.UnavailableError(grpc.StatusCode.UNAVAILABLE, "", "x", {"retry_after_s": "soon"})
    assert policy.backoff(2, bad) == pytest.approx(0.2)


@pytest.fixture
def serve_in_thread() -> Iterator:
    """``serve`` for the blocking client's test: the server runs on a loop of its own, in
    a thread, while the test blocks."""
    import asyncio
    import threading

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    servers: list[grpc.aio.Server] = []
    yield lambda service: asyncio.run_coroutine_threadsafe(
        start_server(service, servers), loop
    ).result(10)
    for server in servers:
        asyncio.run_coroutine_threadsafe(server.stop(0), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
