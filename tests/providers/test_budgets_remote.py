"""Limits on spend (docs/reference/rules.md R78, R79) with real providers against fake model
servers on loopback (every test runs once per wire format): the price table prices each
call, and the fake server counts the requests it answered, so "no further model call" is
read at the model's end of the wire."""

from __future__ import annotations

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.harness import assert_valid_transcript, error_info
from tests.support.model_fakes import FakeServer, turn
from tests.support.providers import PRICE, StartDaemon, add, llm_agent

pytestmark = pytest.mark.asyncio


def cost(prompt: int, completion: int) -> float:
    return (prompt * PRICE["prompt_per_mtok"] + completion * PRICE["completion_per_mtok"]) / 1e6


async def test_r79_a_run_over_its_cost_limit_makes_no_further_call_at_the_model_server(
    fake: FakeServer, llm_daemon: StartDaemon
) -> None:
    h = await llm_daemon()
    # Each call costs 0.00045 USD; its worst case (a small input, max_tokens 500) about
    # 0.0003. After two calls (0.0009) a third could cross 0.001.
    fake.script = [turn("", ("add", {"a": i, "b": 1}), usage=(1000, 500)) for i in range(5)]
    spec = llm_agent(settings={"max_tokens": 500})
    spec.limits.run.cost_usd = 0.001
    log = await h.run("spend", "add", spec, {"add": add})
    assert log.error is None, log.error
    assert log.done.finish_reason == pb.FINISH_REASON_BUDGET_EXCEEDED
    assert len(fake.requests) == 2  # the model server saw two calls, not three
    [tripped] = [e.budget_exceeded for e in log.events if e.type == "budget.exceeded"]
    assert (tripped.limit, tripped.value) == ("cost_usd", 0.001)
    assert tripped.used == pytest.approx(2 * cost(1000, 500))
    cp = await h.get("spend")
    assert cp.usage.cost_usd == pytest.approx(2 * cost(1000, 500))
    assert_valid_transcript(cp)
    # Resume with the same limit: still no request reaches the server.
    again = await h.run("spend", None, spec, {"add": add}, resume=True)
    assert again.done.finish_reason == pb.FINISH_REASON_BUDGET_EXCEEDED
    assert len(fake.requests) == 2
    # Raised: the run goes on with the next call.
    spec.limits.run.cost_usd = 0.01
    fake.script = fake.script[:3] + [turn("done")]
    resumed = await h.run("spend", None, spec, {"add": add}, resume=True)
    assert resumed.done.finish_reason == pb.FINISH_REASON_STOP
    assert len(fake.requests) == 4


async def test_r78_a_cost_limit_on_an_unpriced_model_never_reaches_the_server(
    fake: FakeServer, llm_daemon: StartDaemon
) -> None:
    h = await llm_daemon(prices={"another-model": PRICE})
    fake.script = [turn("hi")]
    spec = llm_agent()
    spec.limits.session.cost_usd = 5.0
    log = await h.run("unpriced", "hi", spec)
    code, reason, meta = error_info(log.error)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "COST_LIMIT_WITHOUT_PRICE")
    assert meta["model"] == "llm:test-model"
    assert fake.requests == []


async def test_r78_cache_and_reasoning_tokens_are_counted_apart_and_priced(
    fake: FakeServer, llm_daemon: StartDaemon
) -> None:
    price = {**PRICE, "cached_input_per_mtok": 0.015, "cache_write_per_mtok": 0.3}
    h = await llm_daemon(prices={"test-model": price})
    reasoning = 0 if fake.kind == "anthropic" else 30  # Anthropic counts none apart
    write = 0 if fake.kind == "openai_responses" else 200  # the Responses API reports none
    fake.script = [turn("done", usage=(1000, 100), cache=(600, write), reasoning=reasoning)]
    spec = llm_agent(settings={"max_tokens": 200})
    spec.limits.run.cost_usd = 1.0
    log = await h.run("cached", "hi", spec)
    usage = log.done.usage
    assert (usage.prompt_tokens, usage.completion_tokens) == (1000, 100)
    assert (usage.cached_input_tokens, usage.cache_write_tokens) == (600, write)
    assert usage.reasoning_tokens == reasoning
    want = ((400 - write) * 0.15 + 600 * 0.015 + write * 0.3 + 100 * 0.6) / 1e6
    assert usage.cost_usd == pytest.approx(want)
    assert (await h.get("cached")).total_usage == usage


async def test_r78_a_cost_the_server_reports_wins_over_the_price_table(
    fake: FakeServer, llm_daemon: StartDaemon
) -> None:
    if fake.kind != "openai":
        pytest.skip("a reported cost comes on OpenAI-compatible servers (OpenRouter)")
    h = await llm_daemon()
    fake.script = [turn("done", usage=(1000, 100), cost=0.25)]
    log = await h.run("reported", "hi", llm_agent())
    assert log.done.usage.cost_usd == 0.25  # not the table's 0.00021
