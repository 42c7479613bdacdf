"""What stops a model call that keeps failing from being made again and again: a refusal
no retry can fix ends the run with PROVIDER_REJECTED (never retried, by the daemon or a
client); a transient failure backs the session off and, repeated, opens the model's
circuit, whoever starts the next run (``luoshod/providers/guard.py``); the clients count
progress, not events, and honour ``retry_after_s``.

The guard's own rules are tested with a clock the test moves; the rest through a real
daemon, a real HTTP fake of each wire format and the Python client's default retries.
"""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest

from luosho.client import AsyncClient, ProviderError, ProviderRejectedError
from luosho.v1 import agent_pb2 as pb
from luoshod.errors import ProviderError as DaemonProviderError
from luoshod.errors import ProviderRejected
from luoshod.providers.guard import GuardPolicy, ModelGuard
from tests.support.harness import error_info
from tests.support.model_fakes import FakeServer, Fault, Seen, turn
from tests.support.providers import StartDaemon, llm_agent

pytestmark = pytest.mark.asyncio

LOOKUP = {"lookup": {"type": "object"}}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def guard_with_clock() -> tuple[ModelGuard, Clock]:
    clock = Clock()
    return ModelGuard(monotonic=clock, wall=clock), clock


def transient() -> DaemonProviderError:
    return DaemonProviderError("503", provider="p", model="m", status=503, transient="true")


def permanent() -> ProviderRejected:
    return ProviderRejected("400", provider="p", model="m", status=400, transient="false")


def refused(
    guard: ModelGuard, policy: GuardPolicy, session: str = "s", scope: str = ""
) -> DaemonProviderError | None:
    try:
        guard.before_call(policy, "p", "m", session, scope)
    except DaemonProviderError as e:
        return e
    return None


# -- the guard's rules, on a clock the test moves ---------------------------------------------


async def test_a_sessions_backoff_doubles_to_its_cap_and_ends_at_its_next_answer() -> None:
    guard, clock = guard_with_clock()
    policy = GuardPolicy(failure_backoff_base_s=1, failure_backoff_max_s=5, circuit_failures=100)
    waits = []
    for _ in range(5):
        assert refused(guard, policy) is None
        error = transient()
        guard.failed(policy, error, "p", "m", "s", "")
        waits.append(float(error.metadata["retry_after_s"]))
        clock.now += 0.5
        held = refused(guard, policy)
        assert held is not None and held.metadata["error_type"] == "session_backoff"
        assert held.metadata["transient"] == "true" and held.metadata["attempts"] == "0"
        clock.now += waits[-1]  # the wait the failure named is enough
    assert waits == [1, 2, 4, 5, 5]
    assert refused(guard, policy, session="other") is None  # per session
    assert refused(guard, policy, scope="task-1") is None  # and per sub-agent task
    failure = guard.last_failure("s")
    assert failure is not None and failure.failures == 5 and failure.reason == "PROVIDER_ERROR"
    guard.succeeded("p", "m", "s", "")
    assert guard.last_failure("s") is None
    assert refused(guard, policy) is None


async def test_a_wait_still_to_come_is_never_said_as_zero() -> None:
    guard, clock = guard_with_clock()
    policy = GuardPolicy(failure_backoff_base_s=1)
    guard.failed(policy, transient(), "p", "m", "s", "")
    clock.now += 1 - 0.0001  # 0.1 ms left
    held = refused(guard, policy)
    assert held is not None and held.metadata["retry_after_s"] == "0.001"


async def test_a_permanent_failure_backs_the_session_off_but_names_no_retry() -> None:
    guard, clock = guard_with_clock()
    policy = GuardPolicy(failure_backoff_base_s=2)
    error = permanent()
    guard.failed(policy, error, "p", "m", "s", "")
    assert "retry_after_s" not in error.metadata  # nobody is to retry it
    failure = guard.last_failure("s")
    assert failure is not None and failure.reason == "PROVIDER_REJECTED"
    assert failure.not_before - failure.at == 2
    assert refused(guard, policy) is not None
    clock.now += 2
    assert refused(guard, policy) is None


async def test_the_circuit_opens_after_failures_in_a_row_of_any_sessions_and_one_call_probes() -> (
    None
):
    guard, clock = guard_with_clock()
    policy = GuardPolicy(
        failure_backoff_base_s=0.001,
        circuit_failures=3,
        circuit_open_s=10,
        failure_backoff_max_s=60,
    )
    for n in range(3):
        assert refused(guard, policy, session=f"s{n}") is None
        guard.failed(policy, transient(), "p", "m", f"s{n}", "")
    held = refused(guard, policy, session="fresh")
    assert held is not None and held.metadata["error_type"] == "circuit_open"
    assert float(held.metadata["retry_after_s"]) == 10
    clock.now += 10
    assert refused(guard, policy, session="probe") is None  # one call probes...
    assert refused(guard, policy, session="other") is not None  # ...the others wait for it
    guard.failed(
        policy, transient(), "p", "m", "probe", ""
    )  # the probe failed: open, twice as long
    clock.now += 10
    assert refused(guard, policy, session="fresh") is not None
    clock.now += 10
    assert refused(guard, policy, session="probe2") is None
    guard.released("p", "m")  # the probe's run was cancelled: the next call probes
    assert refused(guard, policy, session="probe3") is None
    guard.succeeded("p", "m", "probe3", "")  # an answer closes it
    assert refused(guard, policy, session="fresh") is None
    assert refused(guard, policy, session="other") is None


async def test_a_permanent_answer_closes_the_circuit() -> None:
    guard, _ = guard_with_clock()
    policy = GuardPolicy(circuit_failures=2)
    guard.failed(policy, transient(), "p", "m", "a", "")
    guard.failed(policy, permanent(), "p", "m", "b", "")  # the provider is up
    guard.failed(policy, transient(), "p", "m", "c", "")
    assert refused(guard, policy, session="d") is None


# -- through a daemon and the Python client -------------------------------------------------


def refuse_continuations(fake: FakeServer) -> None:
    fake.script = [turn("", ("lookup", {}))]
    fake.rule = lambda seen: (
        Fault(
            400, "invalid_request_error", message="messages.1.content.0.type: Expected `thinking`"
        )
        if seen.turn >= 1
        else None
    )


async def test_a_refused_continuation_ends_the_run_after_one_call_and_get_session_says_why(
    fake: FakeServer, llm_daemon: StartDaemon
) -> None:
    h = await llm_daemon()
    refuse_continuations(fake)
    looked_up = []
    async with AsyncClient(h.daemon.addresses[0]) as client:  # default retries
        run = client.execute(
            "refused",
            "look it up",
            agent=llm_agent(LOOKUP),
            tools={"lookup": lambda args: looked_up.append(1) or "found"},
        )
        with pytest.raises(ProviderRejectedError) as err:
            await run
        e = err.value
        assert isinstance(e, ProviderError) and e.code == grpc.StatusCode.FAILED_PRECONDITION
        assert e.status == 400 and "Expected `thinking`" in e.provider_message
        assert (e.metadata["provider"], e.metadata["model"], e.metadata["error_type"]) == (
            "llm",
            "test-model",
            "invalid_request_error",
        )
        # Exactly one model call for the continuation, and the tool ran once.
        assert [s.turn for s in fake.requests] == [0, 1] and looked_up == [1]
        failure = await client.last_model_failure("refused")
    assert failure is not None and failure.reason == "PROVIDER_REJECTED" and failure.failures == 1
    assert (
        failure.metadata["status"] == "400" and "Expected" in failure.metadata["provider_message"]
    )
    assert failure.retry_not_before.ToNanoseconds() > failure.failed_at.ToNanoseconds()


# One wire format, as the minute-long test below: the session's backoff and the refusal
# before a run starts are RemoteProvider's, the same for every wire; what a wire gives
# them (a 503 read as a transient ProviderError named overloaded_error) is checked on
# every wire by the circuit test below.
@pytest.mark.parametrize("fake", ["anthropic"], indirect=True)
async def test_a_client_retrying_in_a_tight_loop_cannot_outpace_the_sessions_backoff(
    fake: FakeServer, llm_daemon: StartDaemon
) -> None:
    # The daemon's own floors at their defaults; one HTTP attempt a model call.
    h = await llm_daemon(
        max_retries=0, failure_backoff_base_s=1.0, failure_backoff_max_s=60.0, circuit_open_s=30.0
    )
    fake.rule = lambda seen: Fault(503, "overloaded_error")
    started = time.monotonic()
    codes: dict[str, int] = {}
    while time.monotonic() - started < 5.5:  # a client of its own, ignoring retry_after_s
        log = await h.run("loop", "hi", llm_agent())
        code, reason, meta = error_info(log.error)
        assert (code, reason) == (grpc.StatusCode.UNAVAILABLE, "PROVIDER_ERROR")
        assert float(meta["retry_after_s"]) > 0
        codes[meta["error_type"]] = codes.get(meta["error_type"], 0) + 1
    # Calls at 0 s, then no sooner than 1 s and 3 s after it (1 s, 2 s, then 4 s backoff).
    at = [s.at - fake.requests[0].at for s in fake.requests]
    assert len(at) == 3, at
    assert at[1] >= 1.0 and at[2] >= 3.0
    assert codes["overloaded_error"] == 3 and codes["session_backoff"] > 10, codes
    # A refused attempt starts no run: the session's log holds the three runs that called
    # the model, not one a refusal (their run.start and step.start).
    logged = [r.event async for r in h.stub.Watch(pb.WatchRequest(session_id="loop", follow=False))]
    assert [e.type for e in logged].count("run.start") == 3, [e.type for e in logged]


async def test_runs_of_many_sessions_stop_calling_a_failing_model_once_its_circuit_opens(
    fake: FakeServer, llm_daemon: StartDaemon
) -> None:
    h = await llm_daemon(max_retries=0, circuit_failures=3, circuit_open_s=30.0)
    fake.rule = lambda seen: Fault(503, "overloaded_error")
    kinds = []
    for n in range(12):
        log = await h.run(f"many-{n}", "hi", llm_agent())
        kinds.append(error_info(log.error)[2]["error_type"])
    assert len(fake.requests) == 3
    assert kinds == ["overloaded_error"] * 3 + ["circuit_open"] * 9


# One wire format is enough for a minute-long test: the guard is above the wire, and each
# wire's part (a 503 is transient, retried, then a ProviderError) is tested on every wire by
# the circuit test above and tests/providers/test_provider_failures.py.
@pytest.mark.parametrize("fake", ["anthropic"], indirect=True)
async def test_a_provider_down_for_a_minute_costs_a_bounded_number_of_calls_then_the_run_finishes(
    fake: FakeServer, llm_daemon: StartDaemon
) -> None:
    """The defaults: 5 HTTP attempts a model call (4 retries, 0.5 s doubling with jitter:
    at least 3.75 s), then the session waits 1, 2, 4, 8 s between runs and the circuit opens
    for 30 s after 5 failed calls in a row: at most 5 failed runs in the outage's minute,
    25 calls, then the 2 that succeed."""
    h = await llm_daemon(
        timeout_s=60.0,
        max_retries=4,
        backoff_base_s=0.5,
        backoff_max_s=30.0,
        failure_backoff_base_s=1.0,
        failure_backoff_max_s=60.0,
        circuit_failures=5,
        circuit_open_s=30.0,
    )
    fake.script = [turn("", ("lookup", {})), turn("done")]
    first: list[float] = []

    def down_for_a_minute(seen: Seen) -> Fault | None:
        first.append(seen.at) if not first else None
        return Fault(503, "overloaded_error") if seen.at - first[0] < 60 else None

    fake.rule = down_for_a_minute
    async with AsyncClient(h.daemon.addresses[0]) as client:  # default retries
        result = await asyncio.wait_for(
            client.execute(
                "outage", "hi", agent=llm_agent(LOOKUP), tools={"lookup": lambda args: "found"}
            ),
            180,
        )
    failed = sum(1 for s in fake.requests if s.status != 200 or s.fault is not None)
    print(
        f"model calls: {len(fake.requests)} ({failed} failed) over "
        f"{fake.requests[-1].at - first[0]:.1f}s"
    )
    assert result.final_text == "done"
    assert failed <= 25 and fake.answered() == [0, 1]


async def test_a_sub_agents_answer_does_not_clear_the_leads_failure() -> None:
    guard, clock = guard_with_clock()
    policy = GuardPolicy()
    guard.failed(policy, transient(), "p", "m", "s", "")
    clock.now += 1
    guard.failed(policy, transient(), "p", "m", "s", "task_1")
    assert guard.last_failure("s").at == clock.now  # the newest: the sub-agent's
    guard.succeeded("p", "m", "s", "task_1")
    lead = guard.last_failure("s")
    assert lead is not None and lead.at == clock.now - 1  # the lead's failure is still shown
    guard.succeeded("p", "m", "s", "")
    assert guard.last_failure("s") is None


async def test_asking_whether_a_call_may_be_made_takes_no_probe() -> None:
    guard, clock = guard_with_clock()
    policy = GuardPolicy(circuit_failures=1, circuit_open_s=10.0)
    guard.failed(policy, transient(), "p", "m", "s", "")
    clock.now += 60  # past the backoff and the open circuit: the next call probes
    guard.before_call(policy, "p", "m", "other", "", probe=False)
    guard.before_call(policy, "p", "m", "other", "", probe=False)  # asking twice: still free
    guard.before_call(policy, "p", "m", "other", "")  # the call itself takes the probe
    assert refused(guard, policy, "third") is not None  # the others wait for its answer
