"""Fallback models (docs/reference/rules.md R82) with real providers against fake model
servers on loopback (every test runs once per wire format). The agent's model
``llm:model-a`` and its fallback ``llm:test-model`` are two models of one provider entry;
the fake server fails the requests that name ``model-a`` and answers the others, so which
model took each turn is read at the model's end of the wire."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest

from luosho.client import Agent, AsyncClient, ProviderFallback
from luosho.v1 import agent_pb2 as pb
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.harness import Harness, assert_valid_transcript, calls, error_info
from tests.support.model_fakes import FakeServer, Fault, Seen, turn
from tests.support.providers import KEY_ENV, MODEL, StartDaemon, add, llm_agent, provider_toml

pytestmark = pytest.mark.asyncio

A, B = "llm:model-a", f"llm:{MODEL}"
#: One failure opens a model's circuit, for long enough that every later run finds it open.
CIRCUIT = {"circuit_failures": 1, "circuit_open_s": 30.0, "failure_backoff_max_s": 30.0}


def fail_model_a(fake: FakeServer, status: int, error_type: str) -> None:
    def rule(seen: Seen) -> Fault | None:
        return Fault(status, error_type) if seen.body["model"] == "model-a" else None

    fake.rule = rule


def sent_to(fake: FakeServer, model: str) -> int:
    return sum(1 for s in fake.requests if s.body["model"] == model)


def with_fallbacks(*fallbacks: str) -> pb.AgentSpec:
    spec = llm_agent()
    spec.model = A
    spec.fallback_models.extend(fallbacks)
    return spec


async def test_r82_a_model_down_after_its_retries_hands_the_same_turn_to_the_fallback(
    fake: FakeServer, llm_daemon: StartDaemon
) -> None:
    h = await llm_daemon(config={"metrics_listen": "127.0.0.1:0"}, **CIRCUIT)
    fail_model_a(fake, 503, "overloaded_error")
    fake.script = [turn("", ("add", {"a": 1, "b": 2})), turn("3")]
    log = await h.run("fb", "add 1 and 2", with_fallbacks(B), {"add": add})
    assert log.error is None, log.error
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    assert log.done.final_text == "3"
    # Step 1: the model's first attempt and its 3 retries (FAST: max_retries 3), then the
    # fallback takes the same step; step 2: the model's circuit is open, so no request of
    # it is made and the fallback answers at once.
    assert log.types == [
        "run.start",
        "step.start",
        "provider.retry",
        "provider.retry",
        "provider.retry",
        "provider.fallback",
        "model.turn",
        "tool.call",
        "tool.result",
        "step.done",
        "step.start",
        "provider.fallback",
        "model.turn",
        "step.done",
        "run.done",
    ]
    retries = [e.provider_retry for e in log.of("provider.retry")]
    assert [(r.step, r.model, r.attempt) for r in retries] == [(1, A, 1), (1, A, 2), (1, A, 3)]
    assert all("503" in r.error and r.delay_ms >= 0 for r in retries)
    first, second = (e.provider_fallback for e in log.of("provider.fallback"))
    assert (first.step, first.from_model, first.to_model) == (1, A, B)
    assert (first.reason, first.error_type) == ("PROVIDER_ERROR", "overloaded_error")
    assert "4 attempt(s)" in first.error
    assert (second.step, second.from_model, second.to_model) == (2, A, B)
    assert second.error_type in ("circuit_open", "session_backoff")
    assert sent_to(fake, "model-a") == 4 and sent_to(fake, MODEL) == 2
    # Each turn records the model that produced it, in the stream and in the checkpoint.
    assert [e.model_turn.message.model for e in log.of("model.turn")] == [B, B]
    cp = await h.get("fb")
    assert [m.model for m in cp.messages if m.role == pb.ROLE_ASSISTANT] == [B, B]
    assert_valid_transcript(cp)
    # A fallback is not drift: the fingerprint names the agent's model.
    assert log.events[0].run_start.fingerprint.model == A
    # /metrics counts them by model.
    metrics = h.daemon.observe.metrics
    assert metrics is not None
    sample = metrics.registry.get_sample_value
    assert sample("luoshod_model_retries_total", {"model": A}) == 3
    assert sample("luoshod_model_fallbacks_total", {"from_model": A, "to_model": B}) == 2

    # A later run of the daemon finds the model's circuit open: it goes to the fallback at
    # once, without a request of the model or a retry.
    later = await h.run("later", "add 1 and 2", with_fallbacks(B), {"add": add})
    assert later.done.finish_reason == pb.FINISH_REASON_STOP
    assert later.of("provider.retry") == []
    skipped = [e.provider_fallback for e in later.of("provider.fallback")]
    assert [(f.from_model, f.to_model, f.error_type) for f in skipped] == [
        (A, B, "circuit_open"),
        (A, B, "circuit_open"),
    ]
    assert sent_to(fake, "model-a") == 4
    # Compare and History show the model of each step: the fallback's.
    compared = await h.stub.Compare(pb.CompareRequest(session_id_a="fb", session_id_b="later"))
    assert [s.model for s in compared.a] == [B, B] == [s.model for s in compared.b]
    history = await h.stub.History(pb.HistoryRequest(session_id="fb", include_checkpoint=True))
    newest = max(history.entries, key=lambda e: e.version).checkpoint
    turns = [m for m in newest.messages if m.role == pb.ROLE_ASSISTANT]
    assert [m.model for m in turns] == [B, B]


async def test_r82_a_refused_request_does_not_fall_back(
    fake: FakeServer, llm_daemon: StartDaemon
) -> None:
    h = await llm_daemon()
    fail_model_a(fake, 400, "invalid_request_error")
    fake.script = [turn("never")]
    log = await h.run("refused", "hi", with_fallbacks(B))
    code, reason, _ = error_info(log.error)
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "PROVIDER_REJECTED")
    assert log.of("provider.fallback") == [] and log.of("provider.retry") == []
    assert sent_to(fake, "model-a") == 1 and sent_to(fake, MODEL) == 0


async def test_r82_without_fallbacks_the_run_fails_as_before_and_each_retry_is_an_event(
    fake: FakeServer, llm_daemon: StartDaemon
) -> None:
    h = await llm_daemon()
    fail_model_a(fake, 503, "overloaded_error")
    log = await h.run("alone", "hi", with_fallbacks())
    code, reason, meta = error_info(log.error)
    assert (code, reason) == (grpc.StatusCode.UNAVAILABLE, "PROVIDER_ERROR")
    assert meta["model"] == "model-a"
    assert [e.provider_retry.attempt for e in log.of("provider.retry")] == [1, 2, 3]
    assert log.of("provider.fallback") == []
    assert sent_to(fake, MODEL) == 0


async def test_r82_every_model_down_fails_the_run_with_the_last_ones_error(
    fake: FakeServer, llm_daemon: StartDaemon
) -> None:
    h = await llm_daemon()
    fake.rule = lambda seen: Fault(503, "overloaded_error")
    log = await h.run("all-down", "hi", with_fallbacks(B))
    code, reason, meta = error_info(log.error)
    assert (code, reason) == (grpc.StatusCode.UNAVAILABLE, "PROVIDER_ERROR")
    assert meta["model"] == MODEL
    assert [
        (f.from_model, f.to_model)
        for f in (e.provider_fallback for e in log.of("provider.fallback"))
    ] == [(A, B)]
    assert sent_to(fake, "model-a") == 4 and sent_to(fake, MODEL) == 4


async def test_r82_a_sub_agents_model_falls_back_inside_its_task(
    fake: FakeServer, llm_daemon: StartDaemon
) -> None:
    h = await llm_daemon()
    fail_model_a(fake, 503, "overloaded_error")
    fake.script = [turn("the helper's answer")]
    helper = with_fallbacks(B)
    helper.ClearField("tools")
    lead = pb.AgentSpec(
        model="scripted:lead",
        instructions="You delegate.",
        model_settings_json=json.dumps(
            {
                "script": [
                    calls(("task", {"agent": "helper", "prompt": "help", "description": "d"})),
                    {"text": "thanks"},
                ]
            }
        ),
        subagents=[pb.SubAgent(name="helper", description="helps", agent=helper)],
    )
    log = await h.run("sub", "go", lead)
    assert log.error is None, log.error
    assert log.done.final_text == "thanks"
    [switch] = log.of("provider.fallback")
    assert switch.subagent.name == "helper"
    assert (switch.provider_fallback.from_model, switch.provider_fallback.to_model) == (A, B)
    assert [e.subagent.name for e in log.of("provider.retry")] == ["helper"] * 3
    [result] = [e.tool_result for e in log.of("tool.result")]
    assert not result.is_error and "the helper's answer" in result.result_json
    cp = await h.get("sub")
    [task] = list(cp.tasks) or list(cp.subagents)
    assert [m.model for m in task.messages if m.role == pb.ROLE_ASSISTANT] == [B]


async def test_r82_fallbacks_are_checked_as_the_model_is(
    fake: FakeServer, llm_daemon: StartDaemon
) -> None:
    h = await llm_daemon()
    for fallbacks, want in [
        (["nope:x"], "UNKNOWN_PROVIDER"),
        (["no-colon"], "INVALID_MODEL"),
        ([A], "INVALID_FALLBACK_MODELS"),
        ([B, B], "INVALID_FALLBACK_MODELS"),
    ]:
        log = await h.run("checked", "hi", with_fallbacks(*fallbacks))
        code, reason, _ = error_info(log.error)
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, want), fallbacks
    assert fake.requests == []


async def test_r82_changing_the_fallbacks_is_not_agent_drift(
    fake: FakeServer, llm_daemon: StartDaemon
) -> None:
    h = await llm_daemon()
    fake.script = [turn("one"), turn("two")]
    first = await h.run("same", "hi", with_fallbacks(B))
    spec = with_fallbacks()
    spec.on_agent_drift = pb.AGENT_DRIFT_POLICY_ERROR
    again = await h.run("same", "again", spec)
    assert again.error is None, again.error
    assert again.of("agent.drift") == []
    assert first.events[0].run_start.fingerprint.hash == again.events[0].run_start.fingerprint.hash


async def test_r82_the_python_client_reads_the_retries_and_the_switch(
    fake: FakeServer, llm_daemon: StartDaemon
) -> None:
    h = await llm_daemon()
    fail_model_a(fake, 503, "overloaded_error")
    fake.script = [turn("from the fallback")]
    async with AsyncClient(h.daemon.addresses[0]) as client:
        result = await client.execute(
            "client", "hi", agent=Agent(model=A, fallback_models=[B], instructions="hi")
        )
    assert result.final_text == "from the fallback"
    assert [(r.model, r.attempt) for r in result.retries] == [(A, 1), (A, 2), (A, 3)]
    [switch] = result.fallbacks
    assert isinstance(switch, ProviderFallback)
    assert (switch.from_model, switch.to_model, switch.error_type) == (A, B, "overloaded_error")
    assert switch.subagent == ()


async def test_r82_a_fallback_turn_survives_a_kill9_before_the_next_turn(
    fake: FakeServer, tmp_path: Path
) -> None:
    config = tmp_path / "luoshod.toml"
    config.write_text(provider_toml(fake))
    args = ("--store", db_url(tmp_path), "--config", str(config), "--lease-owner", "d1")
    env = {KEY_ENV: fake.key}
    fail_model_a(fake, 503, "overloaded_error")
    fake.script = [turn("", ("add", {"a": 1, "b": 2})), turn("3")]
    first = DaemonProcess(*args, env=env).start()
    try:
        h = Harness(first.address)

        async def kill_at_the_tool_call(e: pb.Event) -> None:
            if e.type == "tool.call":  # the fallback's turn is saved (R1), no result yet
                first.kill9()

        log = await h.run("crash", "add", with_fallbacks(B), on_event=kill_at_the_tool_call)
        assert log.error is not None and log.error.code() == grpc.StatusCode.UNAVAILABLE
        assert [e.type for e in log.of("provider.fallback")] == ["provider.fallback"]
        await h.close()
    finally:
        first.stop()
    assert fake.answered() == [0]

    second = DaemonProcess(*args, env=env).start()
    try:
        h = Harness(second.address)
        cp = await h.get("crash")
        saved = cp.messages[-1]
        assert saved.role == pb.ROLE_ASSISTANT and saved.model == B
        assert list(cp.agent.fallback_models) == [B]  # saved with the agent
        # Resumed without an agent: the saved one, fallbacks included.
        log = await h.run("crash", None, None, {"add": add}, resume=True)
        assert log.error is None, log.error
        assert log.done.final_text == "3"
        assert log.of("agent.drift") == []
        # The saved turn was not asked again; the next one fell back again (a new daemon
        # knows nothing of the old one's circuit, so it tried the model first).
        assert fake.answered() == [0, 1]
        [switch] = [e.provider_fallback for e in log.of("provider.fallback")]
        assert (switch.step, switch.from_model, switch.to_model) == (2, A, B)
        cp = await h.get("crash")
        assert_valid_transcript(cp)
        assert [m.model for m in cp.messages if m.role == pb.ROLE_ASSISTANT] == [B, B]
        await h.close()
    finally:
        second.stop()


async def test_r82_the_limits_check_the_fallbacks_call_at_its_own_price(
    fake: FakeServer, llm_daemon: StartDaemon
) -> None:
    cheap = {"prompt_per_mtok": 0.15, "completion_per_mtok": 0.6}
    dear = {"prompt_per_mtok": 100.0, "completion_per_mtok": 1000.0}
    h = await llm_daemon(prices={"model-a": cheap, MODEL: dear})
    fail_model_a(fake, 503, "overloaded_error")
    fake.script = [turn("answered", usage=(1000, 100))]
    spec = with_fallbacks(B)
    spec.ClearField("tools")
    spec.model_settings_json = json.dumps({"max_tokens": 500})
    # The model's worst case fits 0.4 USD; the fallback's (500 output tokens alone at
    # 1000 USD a million: 0.5 USD) does not: its call is not made.
    spec.limits.run.cost_usd = 0.4
    log = await h.run("dear", "hi", spec)
    assert log.error is None, log.error
    assert log.types[-3:] == ["provider.fallback", "budget.exceeded", "run.done"]
    assert log.done.finish_reason == pb.FINISH_REASON_BUDGET_EXCEEDED
    [tripped] = [e.budget_exceeded for e in log.of("budget.exceeded")]
    assert tripped.limit == "cost_usd" and tripped.worst_case > 0.5
    assert sent_to(fake, MODEL) == 0
    # Raised: the fallback answers, and its call costs its own price.
    spec.limits.run.cost_usd = 2.0
    log = await h.run("dear", None, spec, resume=True)
    assert log.done.finish_reason == pb.FINISH_REASON_STOP, log.error
    assert log.done.usage.cost_usd == pytest.approx((1000 * 100.0 + 100 * 1000.0) / 1e6)
