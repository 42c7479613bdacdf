"""A run the daemon's admission refused before it started (RESOURCE_EXHAUSTED /
DAEMON_OVERLOADED with ``retry_after_s``, or gRPC's ``grpc-retry-pushback-ms`` trailer)
comes back after the wait it was told, with the same request id (R75), bounded by
``overload_attempts`` and ``overload_max_wait``.

A real daemon with a tiny start budget (``max_loop_lag_ms`` of a few starts' work) refuses
most of a burst; what a real daemon does not send (a pushback trailer) is played by the
test through ``grpc_testing``, as in test_client_scripted_server.py."""

from __future__ import annotations

import asyncio
import time

import grpc
import grpc_testing
import pytest
from client_scripts import scripted, text
from test_client_scripted_server import AGENT, Reader, done, take_execute, trailers

from luosho.client import AsyncClient, Client, LuoshoError, RetryPolicy
from luosho.v1 import agent_pb2 as pb
from luoshod.server.admission import START_COST_S
from luoshod.server.app import Config, Daemon

BURST = 24
# Room for four starts at once: the rest of a burst is refused with DAEMON_OVERLOADED.
TINY_MS = round(4 * START_COST_S * 1000)
# Quick retries for what is not an admission refusal; the refusals wait as told.
QUICK = RetryPolicy(initial_backoff=0.01, max_backoff=0.05)

pytestmark = pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <function _ChannelReadyFuture.__del__"
    ":pytest.PytestUnraisableExceptionWarning"
)


@pytest.fixture
async def tiny_daemon() -> Daemon:
    d = Daemon(Config(listen=["127.0.0.1:0"], store="memory://", max_loop_lag_ms=TINY_MS))
    await d.start()
    try:
        yield d
    finally:
        await d.stop()


async def burst(client: AsyncClient, prefix: str) -> list[object]:
    agent = scripted(text("done"))
    return await asyncio.gather(
        *(client.execute(f"{prefix}-{k}", "go", agent=agent) for k in range(BURST)),
        return_exceptions=True,
    )


async def test_r75_a_burst_the_daemon_refuses_comes_back_as_told_and_every_run_finishes(
    tiny_daemon: Daemon,
) -> None:
    address = tiny_daemon.addresses[0]
    # Without overload retries most of the burst fails: the daemon does refuse it.
    async with AsyncClient(address, retry=RetryPolicy(overload_attempts=1)) as client:
        refused = [r for r in await burst(client, "once") if isinstance(r, LuoshoError)]
    assert len(refused) >= BURST // 2
    assert {(e.code, e.reason) for e in refused} == {
        (grpc.StatusCode.RESOURCE_EXHAUSTED, "DAEMON_OVERLOADED")
    }
    assert all(int(e.metadata["retry_after_s"]) >= 1 for e in refused)
    await asyncio.sleep(1.0)  # the start budget fills again

    started = time.monotonic()
    async with AsyncClient(address, retry=QUICK) as client:  # overload retries: default
        results = await burst(client, "paced")
    took = time.monotonic() - started
    failures = [r for r in results if isinstance(r, BaseException)]
    assert not failures, failures[:3]
    assert all(r.final_text == "done" for r in results)  # type: ignore[union-attr]
    retried = [r for r in results if r.attempts > 1]  # type: ignore[union-attr]
    assert len(retried) >= BURST // 2, "the burst was refused, then admitted on a retry"
    assert took >= 1.0, "a refused run waited its retry_after_s (at least 1 s)"


def test_r75_an_overloaded_refusal_is_sent_again_with_the_same_request_after_the_pushback() -> None:
    channel = grpc_testing.channel(
        [pb.DESCRIPTOR.services_by_name["AgentService"]], grpc_testing.strict_real_time()
    )
    client = Client(channel=channel, retry=QUICK)
    reader = Reader(client.execute("s", "hi", agent=AGENT))
    _, first, rpc = take_execute(channel)
    # The trailer wins over retry_after_s (which alone would mean a whole second).
    rpc.terminate(
        trailers(grpc.StatusCode.RESOURCE_EXHAUSTED, "DAEMON_OVERLOADED", "busy", retry_after_s="1")
        + (("grpc-retry-pushback-ms", "300"),),
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "",
    )
    ended = time.monotonic()
    _, again, rpc = take_execute(channel)
    waited = time.monotonic() - ended
    assert again == first and first.request_id, "the retry sends the very same request"
    assert 0.3 <= waited < 0.9, f"came back after {waited:.3f}s, not the 300 ms pushback"
    rpc.send_response(done(1, "admitted"))
    rpc.terminate((), grpc.StatusCode.OK, "")
    result = reader.result()
    assert result.final_text == "admitted" and result.attempts == 2


@pytest.mark.parametrize(
    ("policy", "extra", "why"),
    [
        (RetryPolicy(overload_attempts=1), (), "overload retries off"),
        (RetryPolicy(overload_max_wait=0.5), (), "the wait would end past overload_max_wait"),
        (RetryPolicy(), (("grpc-retry-pushback-ms", "-1"),), "a negative pushback: do not retry"),
    ],
)
def test_an_overloaded_refusal_is_the_run_s_failure_when_the_policy_or_server_says_so(
    policy: RetryPolicy, extra: tuple[tuple[str, str], ...], why: str
) -> None:
    channel = grpc_testing.channel(
        [pb.DESCRIPTOR.services_by_name["AgentService"]], grpc_testing.strict_real_time()
    )
    reader = Reader(Client(channel=channel, retry=policy).execute("s", "hi", agent=AGENT))
    _, _, rpc = take_execute(channel)
    rpc.terminate(
        trailers(grpc.StatusCode.RESOURCE_EXHAUSTED, "DAEMON_OVERLOADED", "busy", retry_after_s="1")
        + extra,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "",
    )
    with pytest.raises(LuoshoError) as err:
        reader.result()
    assert err.value.reason == "DAEMON_OVERLOADED", why
    assert reader.run.attempts == 1, why


def test_refusals_wait_as_told_with_upward_jitter_and_give_up_at_overload_attempts() -> None:
    from luosho.client._retry import Refusals

    policy = RetryPolicy(overload_attempts=4, jitter=0.2)
    refusal = LuoshoError(
        grpc.StatusCode.RESOURCE_EXHAUSTED, "DAEMON_OVERLOADED", "busy", {"retry_after_s": "3"}
    )
    refusals = Refusals()
    waits = [policy.next_wait("s", refusal, 1, 0, refusals) for _ in range(4)]
    assert all(3.0 <= w <= 3.6 for w in waits[:3]) and waits[3] is None  # type: ignore[operator]
    assert len({round(w, 6) for w in waits[:3]}) > 1  # type: ignore[arg-type]
    # After events (the run started) it is not an admission refusal: no overload retry.
    assert policy.next_wait("s", refusal, 1, 2, Refusals()) is None
    # TOO_MANY_RUNS, the other admission refusal, comes back as told too.
    full = LuoshoError(
        grpc.StatusCode.RESOURCE_EXHAUSTED, "TOO_MANY_RUNS", "full", {"retry_after_s": "2"}
    )
    assert 2.0 <= policy.next_wait("s", full, 1, 0, Refusals()) <= 2.4  # type: ignore[operator]
