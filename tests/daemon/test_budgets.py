"""Limits on spend and time through the gRPC API (docs/reference/rules.md R78–R81), on every
store of ``h`` (memory, an SQLite file, LMDB). The scripted provider reports each turn's
tokens (and, where a test says so, its cost) and counts its calls in the daemon's call log,
so "no further model call" is read where the calls are made. Time is moved by giving the
engine a clock ahead of the real one."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.server.app import Config, Daemon
from tests.support.harness import (
    AheadClock,
    Harness,
    RunLog,
    agent,
    assert_valid_transcript,
    calls,
    error_info,
)

#: USD per million tokens of the scripted model in these tests.
PRICE = {"prompt_per_mtok": 1000.0, "completion_per_mtok": 2000.0}


def priced(spec: pb.AgentSpec, price: dict | None = PRICE, **settings: object) -> pb.AgentSpec:
    """``spec`` with the scripted model's price (and other model settings)."""
    s = json.loads(spec.model_settings_json)
    if price is not None:
        s["price"] = price
    s.update(settings)
    spec.model_settings_json = json.dumps(s)
    return spec


def tool_turns(n: int, prompt: int = 100, completion: int = 10) -> list[dict]:
    """``n`` turns each calling ``add`` once, each reporting its tokens."""
    turns = [calls(("add", {"a": i})) for i in range(n)]
    for t in turns:
        t["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion}
    return turns


def add(args: dict) -> int:
    return 1


def move_clock(daemon: Daemon, ahead: float) -> AheadClock:
    clock = AheadClock(ahead)
    daemon.engine.clock = clock
    return clock


async def refused(h: Harness, session_id: str, spec: pb.AgentSpec) -> tuple:
    log = await h.run(session_id, "go", spec, {"add": add})
    assert log.error is not None and log.events == []
    return (*error_info(log.error), log.error.details())


def logged_calls(call_log: Path | None, session_id: str) -> int:
    """The scripted model calls of a session, read from the daemon's call log."""
    assert call_log is not None
    lines = call_log.read_text().splitlines() if call_log.exists() else []
    return sum(1 for x in lines if json.loads(x)["session_id"] == session_id)


def budget_events(log: RunLog) -> list[pb.BudgetExceeded]:
    return [e.budget_exceeded for e in log.events if e.type == "budget.exceeded"]


# -- R78: the limits, their checks at the door, the price ----------------------------------


async def test_r78_limits_are_kept_with_the_agent_and_negative_ones_are_refused(
    h: Harness,
) -> None:
    spec = agent([{"text": "hi"}])
    spec.limits.run.model_calls = 5
    spec.limits.session.total_tokens = 10_000
    spec.limits.run.wall_clock_ms = 60_000
    log = await h.run("kept", "go", spec)
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    cp = await h.get("kept")
    assert cp.agent.limits == spec.limits
    assert not cp.agent.limits.run.HasField("cost_usd")  # unset: no cap
    assert cp.run_started_at.seconds > 0 and cp.session_started_at == cp.run_started_at

    bad = agent([{"text": "hi"}])
    bad.limits.session.output_tokens = -1
    code, reason, meta, details = await refused(h, "negative", bad)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_LIMITS")
    assert meta["field"] == "agent.limits.session.output_tokens"
    assert ">= 0" in details


async def test_r78_a_cost_limit_on_a_model_without_a_price_is_refused_at_start(
    h: Harness,
) -> None:
    spec = agent([{"text": "hi"}])
    spec.limits.run.cost_usd = 1.0
    code, reason, meta, details = await refused(h, "unpriced", spec)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "COST_LIMIT_WITHOUT_PRICE")
    assert meta["model"] == "scripted:test" and "no price" in details
    assert h.model_calls("unpriced") == 0
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await h.get("unpriced")  # nothing was stored
    assert err.value.code() == grpc.StatusCode.NOT_FOUND

    # A sub-agent under the lead's cost limit needs a price too.
    lead = priced(agent([{"text": "hi"}]))
    lead.limits.session.cost_usd = 1.0
    lead.subagents.add(name="w", description="works", agent=agent([{"text": "x"}]))
    code, reason, meta, _ = await refused(h, "unpriced-sub", lead)
    assert (reason, meta["model"]) == ("COST_LIMIT_WITHOUT_PRICE", "scripted:test")

    # A provider that reports each call's cost needs no price; a priced model neither.
    reported = agent([{"text": "hi", "usage": {"prompt_tokens": 1, "cost_usd": 0.25}}])
    reported.limits.run.cost_usd = 1.0
    assert (await h.run("reported", "go", reported)).done.usage.cost_usd == 0.25
    ok = priced(agent([{"text": "hi"}]), max_tokens=50)
    ok.limits.run.cost_usd = 1.0
    assert (await h.run("priced", "go", ok)).done.finish_reason == pb.FINISH_REASON_STOP


async def test_r78_cost_comes_from_the_price_table_with_cache_tokens_apart(h: Harness) -> None:
    price = {**PRICE, "cached_input_per_mtok": 100.0, "cache_write_per_mtok": 1250.0}
    turn = {
        "text": "done",
        "usage": {
            "prompt_tokens": 1000,
            "completion_tokens": 100,
            "cached_input_tokens": 600,
            "cache_write_tokens": 200,
            "reasoning_tokens": 40,
        },
    }
    spec = priced(agent([turn]), price)
    spec.limits.run.cost_usd = 10.0
    log = await h.run("cache", "go", spec)
    usage = log.done.usage
    # 200 plain prompt tokens, 600 read from the cache, 200 written to it, 100 out.
    want = (200 * 1000 + 600 * 100 + 200 * 1250 + 100 * 2000) / 1e6
    assert usage.cost_usd == pytest.approx(want)
    assert (usage.cached_input_tokens, usage.cache_write_tokens, usage.reasoning_tokens) == (
        600,
        200,
        40,
    )
    cp = await h.get("cache")
    assert cp.total_usage == usage  # saved with the turn it paid for


# -- R79: the check before each call --------------------------------------------------------


async def test_r79_a_call_that_could_cross_the_cost_limit_is_not_made_and_resume_goes_on(
    h: Harness,
) -> None:
    # Each call costs (100·1000 + 10·2000) / 10⁶ = 0.12 USD; its worst case is its input
    # estimate (a few dozen tokens) and 50 tokens out (max_tokens): about 0.13. After four
    # calls (0.48) the fifth could cross 0.5.
    spec = priced(agent(tool_turns(6)), max_tokens=50)
    spec.on_agent_drift = pb.AGENT_DRIFT_POLICY_ERROR  # raising a limit is not drift
    spec.limits.run.cost_usd = 0.5
    log = await h.run("cost", "go", spec, {"add": add})
    assert log.error is None, log.error
    assert log.done.finish_reason == pb.FINISH_REASON_BUDGET_EXCEEDED
    assert log.done.status == pb.CHECKPOINT_STATUS_IN_PROGRESS  # as Cancel leaves it
    [tripped] = budget_events(log)
    assert (tripped.scope, tripped.limit, tripped.value) == ("run", "cost_usd", 0.5)
    assert tripped.used == pytest.approx(0.48) and tripped.used + tripped.worst_case > 0.5
    assert 0.1 < tripped.worst_case < 0.2
    assert tripped.usage.model_calls == 4 and log.done.usage.model_calls == 4
    assert h.model_calls("cost") == 4  # the fifth call was never made
    assert log.events[-2].type == "budget.exceeded" and log.events[-1].type == "run.done"
    assert "step.start" not in [e.type for e in log.events[-3:]]
    cp = await h.get("cost")
    assert cp.finish_reason == pb.FINISH_REASON_BUDGET_EXCEEDED
    assert_valid_transcript(cp)
    assert cp.usage.cost_usd == pytest.approx(0.48)

    # The same limit again: stopped before any call.
    again = await h.run("cost", None, spec, {"add": add}, resume=True)
    assert again.done.finish_reason == pb.FINISH_REASON_BUDGET_EXCEEDED
    assert h.model_calls("cost") == 4

    # Raised: Resume goes on from there, with the usage so far (never started again).
    spec.limits.run.cost_usd = 5.0
    resumed = await h.run("cost", None, spec, {"add": add}, resume=True)
    assert resumed.error is None, resumed.error
    assert resumed.done.finish_reason == pb.FINISH_REASON_STOP
    assert h.model_calls("cost") == 7  # six scripted turns and the end of the script
    cp = await h.get("cost")
    assert cp.usage.model_calls == 7 and cp.total_usage.model_calls == 7
    assert cp.usage.cost_usd > 6 * 0.12  # and the last turn's, priced from its estimate


async def test_r79_the_worst_case_is_the_input_estimate_plus_max_tokens(h: Harness) -> None:
    # Without max_tokens a call may write 4096 tokens: an output cap of 100 stops the first.
    spec = agent([{"text": "hi"}])
    spec.limits.run.output_tokens = 100
    log = await h.run("worst", "go", spec)
    assert log.done.finish_reason == pb.FINISH_REASON_BUDGET_EXCEEDED
    [tripped] = budget_events(log)
    assert (tripped.limit, tripped.used, tripped.worst_case) == ("output_tokens", 0, 4096)
    assert h.model_calls("worst") == 0
    # With max_tokens under the cap the call is made.
    spec = priced(agent([{"text": "hi"}]), price=None, max_tokens=64)
    spec.limits.run.output_tokens = 100
    assert (await h.run("fits", "go", spec)).done.finish_reason == pb.FINISH_REASON_STOP
    # The input estimate counts: a long input against an input cap.
    spec = agent([{"text": "hi"}])
    spec.limits.session.input_tokens = 100
    log = await h.run("long", "x" * 2000, spec)
    [tripped] = budget_events(log)
    assert (tripped.scope, tripped.limit) == ("session", "input_tokens")
    assert tripped.worst_case > 400


async def test_r79_the_session_budget_counts_across_runs(h: Harness) -> None:
    spec = agent([{"text": "one", "usage": {"prompt_tokens": 1, "completion_tokens": 1}}])
    spec.limits.session.model_calls = 2
    spec.limits.run.model_calls = 5
    for n in range(2):
        log = await h.run("life", f"input {n}", spec)
        assert log.done.finish_reason == pb.FINISH_REASON_STOP
    third = await h.run("life", "input 3", spec)
    assert third.done.finish_reason == pb.FINISH_REASON_BUDGET_EXCEEDED
    [tripped] = budget_events(third)
    assert (tripped.scope, tripped.limit, tripped.used) == ("session", "model_calls", 2)
    assert h.model_calls("life") == 2


# -- R80: sub-agents ------------------------------------------------------------------------


def worker(script: list[dict], **kw) -> pb.SubAgent:
    return pb.SubAgent(name="worker", description="works", agent=agent(script, **kw))


def task(prompt: str) -> tuple[str, dict]:
    return ("task", {"agent": "worker", "prompt": prompt, "description": "d"})


async def test_r80_parallel_subagents_cannot_together_overspend_the_leads_limit(
    h: Harness,
) -> None:
    # The lead's first call leaves 2 calls of its limit of 3; four tasks run side by side,
    # each wanting one slow call. Without reservations all four would pass the check.
    slow = {"text": "done", "delay_ms": 300, "usage": {"prompt_tokens": 5, "completion_tokens": 5}}
    lead = agent([calls(*(task(f"part {i}") for i in range(4))), {"text": "all done"}])
    lead.subagents.append(worker([slow]))
    lead.tool_concurrency = 4
    lead.limits.run.model_calls = 3
    log = await h.run("parallel", "go", lead)
    assert log.error is None, log.error
    assert h.model_calls("parallel") == 3  # the lead's and two workers': never more
    assert log.done.finish_reason == pb.FINISH_REASON_BUDGET_EXCEEDED
    assert log.done.usage.model_calls == 3
    tripped = budget_events(log)
    assert tripped and all(
        (b.scope, b.limit, list(b.path)) == ("ancestor", "model_calls", []) for b in tripped
    )
    cp = await h.get("parallel")
    assert_valid_transcript(cp)  # every task call has its result (R3)
    results = [m for m in cp.messages if m.role == pb.ROLE_TOOL]
    assert len(results) == 4
    assert sum("model_calls=3" in m.content for m in results) == 2
    assert sum("all done" in m.content or "done" in m.content for m in results) >= 2


async def test_r80_parallel_subagents_under_a_cost_limit_stay_under_it(h: Harness) -> None:
    # Each worker call costs at most (its input estimate + max_tokens 100) at the price:
    # about 0.2 USD worst case; the lead allows 0.5 in all, so at most two run at once.
    slow = {"text": "ok", "delay_ms": 200, "usage": {"prompt_tokens": 20, "completion_tokens": 20}}
    sub = worker([slow])
    priced(sub.agent, max_tokens=100)
    lead = priced(
        agent([calls(*(task(f"p{i}") for i in range(5))), {"text": "end"}]), max_tokens=10
    )
    lead.subagents.append(sub)
    lead.tool_concurrency = 5
    lead.limits.run.cost_usd = 0.5
    log = await h.run("costly", "go", lead)
    assert log.error is None, log.error
    cp = await h.get("costly")
    assert cp.usage.cost_usd <= 0.5
    assert log.done.finish_reason == pb.FINISH_REASON_BUDGET_EXCEEDED
    assert 1 < h.model_calls("costly") < 6
    assert_valid_transcript(cp)


async def test_r80_a_subagents_own_limit_ends_its_task_and_the_lead_goes_on(h: Harness) -> None:
    sub = worker(tool_turns(3) + [{"text": "never"}])
    sub.agent.limits.run.model_calls = 2
    lead = agent([calls(task("work")), {"text": "lead done"}])
    lead.subagents.append(sub)
    log = await h.run("own", "go", lead, {"add": add})
    assert log.error is None, log.error
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    [tripped] = budget_events(log)
    assert (tripped.scope, tripped.limit) == ("run", "model_calls")
    event = next(e for e in log.events if e.type == "budget.exceeded")
    assert list(event.subagent.path) == ["worker"]
    cp = await h.get("own")
    result = next(m for m in cp.messages if m.role == pb.ROLE_TOOL)
    assert result.is_error and "budget_exceeded" in result.content
    assert h.model_calls("own") == 2 + 2  # the worker's two, the lead's two


async def test_r80_a_subagents_limit_counts_its_own_subagents_calls(h: Harness) -> None:
    # lead → worker (2 calls at most) → helper: the worker's first call, then its task to
    # the helper, whose second call would be the worker's third.
    helper = pb.SubAgent(
        name="helper", description="helps", agent=agent(tool_turns(3) + [{"text": "h"}])
    )
    sub = worker([calls(("task", {"agent": "helper", "prompt": "help", "description": "d"}))])
    sub.agent.subagents.append(helper)
    sub.agent.limits.run.model_calls = 2
    lead = agent([calls(task("work")), {"text": "lead done"}])
    lead.subagents.append(sub)
    lead.max_subagent_depth = 2
    log = await h.run("nested", "go", lead, {"add": add})
    assert log.error is None, log.error
    assert log.done.finish_reason == pb.FINISH_REASON_STOP  # the lead goes on
    [tripped] = budget_events(log)
    assert (tripped.scope, tripped.limit, list(tripped.path)) == (
        "ancestor",
        "model_calls",
        ["worker"],
    )
    assert tripped.usage.model_calls == 2  # the worker's own call and the helper's
    assert h.model_calls("nested") == 2 + 2  # worker 1, helper 1, the lead's 2
    cp = await h.get("nested")
    assert_valid_transcript(cp)
    result = next(m for m in cp.messages if m.role == pb.ROLE_TOOL)
    assert result.is_error and "budget_exceeded" in result.content


# -- R81: time from stored times ------------------------------------------------------------


async def test_r81_paused_time_on_an_approval_does_not_count_unless_asked(
    h: Harness, daemon: Daemon
) -> None:
    clock = move_clock(daemon, 0)
    for counted in (False, True):
        sid = f"paused-{counted}"
        spec = agent(tool_turns(1))
        spec.tools[0].needs_approval = True
        spec.limits.run.wall_clock_ms = 60_000
        spec.limits.count_paused_time = counted
        paused = await h.run(sid, "go", spec)
        assert paused.done.finish_reason == pb.FINISH_REASON_AWAITING_APPROVAL
        clock.ahead += 3600  # an hour waiting for the reviewer
        log = RunLog()
        async for resp in h.stub.Resolve(
            pb.ResolveRequest(approval_id=paused.done.approval_id, approved=True)
        ):
            log.events.append(resp.event)
            if resp.event.type == "tool.call":
                await h.submit(sid, resp.event.tool_call.call.id, "1")
        want = pb.FINISH_REASON_DEADLINE_EXCEEDED if counted else pb.FINISH_REASON_STOP
        assert log.done.finish_reason == want
        cp = await h.get(sid)
        assert cp.run_paused_ms >= 3_600_000


async def test_r81_a_fork_keeps_its_usage_and_its_clock_starts_at_the_fork(
    h: Harness, daemon: Daemon
) -> None:
    clock = move_clock(daemon, 0)
    spec = agent(tool_turns(3))
    spec.limits.run.wall_clock_ms = 60_000
    spec.limits.run.model_calls = 10
    log = await h.run("source", "go", spec, {"add": add})
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    clock.ahead += 3600  # an hour later the source's minute is long gone
    forked = await h.stub.Fork(pb.ForkRequest(session_id="source", from_step=2))
    assert forked.checkpoint.usage.model_calls == 2  # R44: the usage up to step 2 is kept
    log = await h.run(forked.session_id, None, spec, {"add": add}, resume=True)
    assert log.error is None, log.error
    assert log.done.finish_reason == pb.FINISH_REASON_STOP  # its own minute, from the fork
    cp = await h.get(forked.session_id)
    assert cp.usage.model_calls == 4 and cp.run_started_at.seconds >= time.time() + 3000


async def test_r81_a_daemon_started_after_the_deadline_ends_the_run(config: Config) -> None:
    if config.store == "memory://":
        pytest.skip("a second daemon reads what the first saved: a store on disk")
    first = Daemon(config)
    await first.start()
    h = Harness(first.addresses[0], first, config.scripted_call_log)
    spec = agent(tool_turns(3))
    spec.limits.run.wall_clock_ms = 60_000
    spec.tool_timeout_ms = 600_000
    try:
        # The run hands out its first call, which nobody answers; the daemon goes away.
        log = await h.run("late", "go", spec, stop_at=lambda e: e.type == "tool.call")
        assert log.dropped
        await asyncio.sleep(0.2)
    finally:
        await h.close()
        await first.stop()
    calls_before = logged_calls(config.scripted_call_log, "late")
    second = Daemon(config)
    await second.start()
    move_clock(second, 120)  # it starts two minutes later: past the run's minute
    h = Harness(second.addresses[0], second, config.scripted_call_log)
    try:
        log = await h.run("late", None, spec, {"add": add}, resume=True)
        assert log.error is None, log.error
        assert log.done.finish_reason == pb.FINISH_REASON_DEADLINE_EXCEEDED
        assert [e.type for e in log.events] == [
            "run.start",
            "budget.exceeded",
            "tool.result",
            "run.done",
        ]
        [tripped] = budget_events(log)
        assert (tripped.scope, tripped.limit, tripped.worst_case) == ("run", "wall_clock_ms", 0)
        assert tripped.used >= 120_000
        assert h.model_calls("late") == calls_before  # no further model call
        cp = await h.get("late")
        assert_valid_transcript(cp)
        last = cp.messages[-1]
        assert last.role == pb.ROLE_TOOL and last.is_error and "wall_clock_ms" in last.content
        # A higher limit and Resume: the run goes on from there.
        spec.limits.run.wall_clock_ms = 3_600_000
        log = await h.run("late", None, spec, {"add": add}, resume=True)
        assert log.done.finish_reason == pb.FINISH_REASON_STOP
    finally:
        await h.close()
        await second.stop()
