"""Compaction (docs/reference/rules.md R85) over gRPC, on memory, SQLite and LMDB: by
threshold (a prune, then a summary when the prune is not enough), the transcript kept
whole with History holding what came before, a fork from before going on uncompacted, a
failing summary that does not fail the run, ``Compact`` by hand, the refusal of an
agent whose model has no known context window, and the summary call checked against the
limits before it is made (R79), a manual one against the session's only.

The agent's model is the scripted provider with a ``context_window`` setting; the
summaries are written by another scripted model (``scripted:sum``), whose calls the
daemon's call log counts."""

from __future__ import annotations

import json

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.store.verify import verify_session
from tests.support.compaction import FETCH, RESULT, SUMMARY, go, priced, spec
from tests.support.harness import (
    AheadClock,
    Harness,
    a_run_waiting_on_a_tool,
    assert_valid_transcript,
    error_info,
    watch,
)


def summary_calls(h: Harness) -> int:
    assert h.call_log is not None
    if not h.call_log.exists():
        return 0
    return sum(
        1 for line in h.call_log.read_text().splitlines() if json.loads(line)["model"] == "sum"
    )


async def test_r85_above_the_threshold_old_results_are_pruned_then_the_oldest_turns_summarized(
    h: Harness,
) -> None:
    log = await h.run("pages", go(), spec(), FETCH)
    assert log.error is None and log.done.finish_reason == pb.FINISH_REASON_STOP
    starts, dones = log.of("compaction.start"), log.of("compaction.done")
    assert len(starts) == len(dones) == 3
    # Each start comes before the step.start of the call it precedes, above the threshold.
    for s in starts:
        assert s.compaction_start.trigger == "threshold"
        assert s.compaction_start.tokens > s.compaction_start.threshold_tokens == 500
        following = log.events[log.events.index(s) + 2]
        assert (
            following.type == "step.start" and following.step_start.step == s.compaction_start.step
        )
    first, second, third = (d.compaction_done for d in dones)
    # 1: pruning the two results is enough; 2: the long turns need a summary.
    assert (first.step, first.pruned, first.summarized, first.error) == (3, 2, 0, "")
    assert first.tokens_after <= 500 < first.tokens_before
    assert second.step == 4 and second.pruned == 1 and second.summarized > 0
    assert second.summary_model == "scripted:sum" and second.usage.model_calls == 1
    assert second.tokens_after <= 500
    assert (third.step, third.pruned, third.summarized) == (5, 1, 0)
    assert summary_calls(h) == 1

    cp = await h.get("pages")
    assert_valid_transcript(cp)
    # The transcript is never rewritten: every result is whole, every turn there.
    results = [m for m in cp.messages if m.role == pb.ROLE_TOOL]
    assert len(results) == 4 and all(RESULT in m.content for m in results)
    assert cp.messages[1].pinned and cp.messages[1].content == "Read pages 1 to 4."
    assert cp.compaction.summary == SUMMARY and cp.compaction.count == 3
    # The summary's turns: all those before the newest one (the tail begins at a turn).
    assert cp.compaction.summarized_before == 8 and cp.compaction.pruned_before == 10
    # The model calls after the summary were sent far less than the transcript holds.
    turns = [m for m in cp.messages if m.role == pb.ROLE_ASSISTANT]
    whole = sum(len(m.content) for m in cp.messages) // 4
    assert turns[-1].usage.prompt_tokens < whole / 2
    # Five model turns and one summary call, counted in the usage.
    assert cp.total_usage.model_calls == 6
    by_model = (await h.stub.GetSession(pb.GetSessionRequest(session_id="pages"))).usage_by_model
    assert (by_model["scripted:pages"].model_calls, by_model["scripted:sum"].model_calls) == (5, 1)

    # History: each compaction is an entry of its own; those before hold no record.
    entries = [
        e
        async for e in _history(h, "pages")  # newest first
    ]
    marked = [e for e in entries if e.compaction]
    assert len(marked) == 3
    assert [e.checkpoint.compaction.count for e in marked] == [3, 2, 1]
    oldest_mark = entries.index(marked[-1])
    assert all(not e.checkpoint.HasField("compaction") for e in entries[oldest_mark + 1 :])
    # R91: every save, the compactions' and the pinned message's included, verifies.
    report = await verify_session(h.daemon.store, "pages")
    assert report.state == "ok", report.line()


async def _history(h: Harness, sid: str):  # type: ignore[no-untyped-def]
    resp = await h.stub.History(pb.HistoryRequest(session_id=sid, include_checkpoint=True))
    for e in resp.entries:
        yield e


async def test_r85_a_fork_from_before_the_compaction_goes_on_uncompacted(h: Harness) -> None:
    log = await h.run("src", go(), spec(), FETCH)
    assert log.done.finish_reason == pb.FINISH_REASON_STOP and log.of("compaction.done")
    forked = await h.stub.Fork(pb.ForkRequest(session_id="src", from_step=2, new_session_id="fork"))
    # The newest entry of step 2 is the first compaction's save; the one of step 1 is not.
    assert forked.checkpoint.HasField("compaction")
    assert forked.checkpoint.compaction.version == 0  # no save of the fork made it
    forked = await h.stub.Fork(
        pb.ForkRequest(session_id="src", from_step=1, new_session_id="early")
    )
    assert not forked.checkpoint.HasField("compaction")
    # Continued by the agent without compaction, every call is sent the whole transcript.
    plain = spec()
    plain.ClearField("compaction")
    log = await h.run("early", None, plain, FETCH, resume=True)
    assert log.error is None and log.done.finish_reason == pb.FINISH_REASON_STOP
    assert not log.of("compaction.start")
    cp = await h.get("early")
    assert not cp.HasField("compaction")
    last = [m for m in cp.messages if m.role == pb.ROLE_ASSISTANT][-1]
    sent = sum(len(m.content) for m in cp.messages[:-1]) // 4
    assert last.usage.prompt_tokens >= sent  # the whole transcript before the last turn
    src = await h.get("src")
    assert src.compaction.count == 3  # the source is as it was


async def test_r85_a_failing_summary_call_does_not_fail_the_run(h: Harness) -> None:
    log = await h.run("fails", go(), spec(summarizer=[{"error": "the summarizer is down"}]), FETCH)
    assert log.error is None and log.done.finish_reason == pb.FINISH_REASON_STOP
    dones = [d.compaction_done for d in log.of("compaction.done")]
    failed = [d for d in dones if d.error]
    assert failed and "the summarizer is down" in failed[0].error
    assert failed[0].summarized == 0
    cp = await h.get("fails")
    assert_valid_transcript(cp)
    assert cp.compaction.summary == "" and cp.compaction.summarized_before == 0
    assert cp.compaction.pruned_before > 0  # the prune before it stands


async def test_r85_an_agent_with_compaction_and_no_known_context_window_is_refused(
    h: Harness,
) -> None:
    log = await h.run("no-window", go(), spec(window=None), FETCH)
    assert log.error is not None
    code, reason, meta = error_info(log.error)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "CONTEXT_WINDOW_UNKNOWN")
    assert meta["model"] == "scripted:pages"
    bad = spec(compaction=pb.Compaction(threshold=1.5))
    code, reason, _ = error_info((await h.run("bad", go(), bad, FETCH)).error)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_COMPACTION")
    # Only the lead's transcript is compacted: a sub-agent asking for it is refused.
    lead = spec()
    lead.subagents.add(name="reader", description="reads", agent=spec())
    code, reason, _ = error_info((await h.run("sub", go(), lead, FETCH)).error)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_COMPACTION")


async def test_r85_compact_by_hand(h: Harness) -> None:
    # A window so large the threshold is never passed: nothing compacts by itself.
    agent = spec(window=1_000_000)
    log = await h.run("manual", go(), agent, FETCH)
    assert log.done.finish_reason == pb.FINISH_REASON_STOP and not log.of("compaction.start")
    before = await h.get("manual")

    pruned = await h.stub.Compact(
        pb.CompactRequest(session_id="manual", strategy=pb.COMPACTION_STRATEGY_PRUNE)
    )
    assert pruned.compacted and pruned.checkpoint.compaction.pruned_before > 0
    assert pruned.checkpoint.compaction.summary == ""
    assert pruned.checkpoint.version == before.version + 1
    both = await h.stub.Compact(pb.CompactRequest(session_id="manual"))
    assert both.compacted and both.checkpoint.compaction.summary == SUMMARY
    assert both.checkpoint.compaction.count == 2
    assert [m.content for m in both.checkpoint.messages] == [m.content for m in before.messages]
    assert both.checkpoint.total_usage.model_calls == before.total_usage.model_calls + 1

    # Its events are in the session's log, as a run's are.
    events = []
    async for resp in h.stub.Watch(pb.WatchRequest(session_id="manual", after_seq=0)):
        events.append(resp.event)
        if len([e for e in events if e.type == "compaction.done"]) == 2:
            break
    manual = [e for e in events if e.type.startswith("compaction.")]
    assert [e.type for e in manual] == ["compaction.start", "compaction.done"] * 2
    assert {e.compaction_start.trigger for e in manual if e.type == "compaction.start"} == {
        "manual"
    }

    # The protected tail and the summarized turns leave nothing more.
    again = await h.stub.Compact(pb.CompactRequest(session_id="manual"))
    assert not again.compacted and again.checkpoint.compaction.count == 2

    with pytest.raises(grpc.aio.AioRpcError) as e:
        await h.stub.Compact(pb.CompactRequest(session_id="nobody"))
    assert error_info(e.value)[:2] == (grpc.StatusCode.NOT_FOUND, "CHECKPOINT_NOT_FOUND")


async def test_r85_compact_is_refused_while_a_run_holds_the_session(h: Harness) -> None:
    waiting, _ = await a_run_waiting_on_a_tool(h, "busy")
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await h.stub.Compact(pb.CompactRequest(session_id="busy"))
    assert error_info(e.value)[:2] == (grpc.StatusCode.ABORTED, "SESSION_BUSY")
    waiting.cancel()


# -- R79: the summary call is checked against the limits before it is made -----------------


async def usage_by_model(h: Harness, sid: str) -> dict[str, pb.Usage]:
    got = await h.stub.GetSession(pb.GetSessionRequest(session_id=sid))
    return dict(got.usage_by_model)


async def test_r79_r85_a_summary_whose_worst_case_would_cross_a_limit_is_not_made(
    h: Harness,
) -> None:
    # The turns fit in $7 (each one's worst case too); a summary's worst case alone, its
    # input and 4,096 tokens written at $2,000 a million, is above $8.
    agent = priced(spec())
    agent.limits.session.cost_usd = 7.0
    log = await h.run("capped", go(), agent, FETCH)
    assert log.error is None and log.done.finish_reason == pb.FINISH_REASON_STOP
    assert not log.of("budget.exceeded")  # the turns themselves fit
    dones = [d.compaction_done for d in log.of("compaction.done")]
    refused = [d for d in dones if d.error]
    # Compaction 1 only prunes (no summary, no check); 2 and 3 would summarize.
    assert [d.step for d in refused] == [4, 5] and not dones[0].error
    for d in refused:
        assert d.error.startswith("the summary call was not made: ")
        assert "the session limit cost_usd=7 (used " in d.error and "its worst case " in d.error
        assert d.summarized == 0 and d.pruned == 1  # the prune before it stands
        assert d.usage.model_calls == 0 and d.summary_model == "scripted:sum"
    assert summary_calls(h) == 0  # no call was made
    assert "scripted:sum" not in await usage_by_model(h, "capped")
    cp = await h.get("capped")
    assert_valid_transcript(cp)
    assert cp.compaction.summary == "" and cp.compaction.summarized_before == 0
    assert cp.compaction.pruned_before > 0
    assert cp.total_usage.model_calls == 5  # the five turns, no summary
    assert 0 < cp.total_usage.cost_usd <= 7.0  # nothing spent past the cap

    # A summary in a run counts in the run's usage too: the run's limits apply to it.
    agent = priced(spec())
    agent.limits.run.cost_usd = 7.0
    log = await h.run("run-capped", go(), agent, FETCH)
    assert log.done.finish_reason == pb.FINISH_REASON_STOP and not log.of("budget.exceeded")
    errors = [d.compaction_done.error for d in log.of("compaction.done")]
    assert errors[0] == "" and all("the run limit cost_usd=7 (used " in e for e in errors[1:])
    assert summary_calls(h) == 0


async def test_r79_r85_a_summary_within_the_limits_is_made(h: Harness) -> None:
    # The same run with room for the summary's worst case: it is made, as without limits.
    agent = priced(spec())
    agent.limits.session.cost_usd = 20.0
    agent.limits.run.cost_usd = 20.0
    log = await h.run("room", go(), agent, FETCH)
    assert log.error is None and log.done.finish_reason == pb.FINISH_REASON_STOP
    dones = [d.compaction_done for d in log.of("compaction.done")]
    assert [d.error for d in dones] == ["", "", ""]
    assert dones[1].summarized > 0 and dones[1].usage.model_calls == 1
    assert summary_calls(h) == 1
    assert (await usage_by_model(h, "room"))["scripted:sum"].model_calls == 1
    cp = await h.get("room")
    assert cp.compaction.summary == SUMMARY
    assert cp.total_usage.model_calls == cp.usage.model_calls == 6
    assert cp.total_usage.cost_usd <= 20.0


async def test_r79_r85_compact_by_hand_checks_the_session_limits_only(h: Harness) -> None:
    # A window so large nothing compacts by itself; the session's cost cap leaves room
    # for the turns, not for a summary's worst case.
    agent = priced(spec(window=1_000_000))
    agent.limits.session.cost_usd = 9.0
    log = await h.run("tight", go(), agent, FETCH)
    assert log.done.finish_reason == pb.FINISH_REASON_STOP and not log.of("compaction.start")
    before = await h.get("tight")
    assert before.total_usage.cost_usd <= 9.0

    got = await h.stub.Compact(pb.CompactRequest(session_id="tight"))
    # The prune is saved; the summary was refused, and said so.
    assert got.compacted and got.checkpoint.compaction.pruned_before > 0
    assert got.checkpoint.compaction.summary == ""
    done = [e.compaction_done for e in await watch(h, "tight") if e.type == "compaction.done"]
    assert len(done) == 1 and done[0].trigger == "manual" and done[0].summarized == 0
    assert done[0].error.startswith(
        "the summary call was not made: it could cross the session limit cost_usd=9 (used "
    )
    assert summary_calls(h) == 0
    assert got.checkpoint.total_usage == before.total_usage  # nothing spent

    # The run's limits do not apply: its usage does not count a summary by hand. Past its
    # calls, cost and time (the clock an hour on), the summary is made.
    agent = priced(spec(window=1_000_000))
    agent.limits.run.model_calls = 5
    agent.limits.run.cost_usd = 9.0
    agent.limits.run.wall_clock_ms = 60_000
    agent.limits.session.cost_usd = 100.0
    log = await h.run("run-capped", go(), agent, FETCH)
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    h.daemon.engine.clock = AheadClock(3600)
    got = await h.stub.Compact(pb.CompactRequest(session_id="run-capped"))
    assert got.compacted and got.checkpoint.compaction.summary == SUMMARY
    done = [e.compaction_done for e in await watch(h, "run-capped") if e.type == "compaction.done"]
    assert [d.error for d in done] == [""] and done[0].usage.model_calls == 1
    assert summary_calls(h) == 1
    assert got.checkpoint.usage.model_calls == 5  # the run's usage has no summary in it
    assert got.checkpoint.total_usage.model_calls == 6
    assert got.checkpoint.total_usage.cost_usd <= 100.0


async def test_r81_r85_compact_by_hand_past_the_sessions_time_limit_makes_no_summary(
    h: Harness,
) -> None:
    # The session's wall-clock limit has passed (the clock an hour on): a summary by hand
    # is not made, and compaction.done says which limit, in whole milliseconds.
    agent = priced(spec(window=1_000_000))
    agent.limits.session.wall_clock_ms = 60_000
    log = await h.run("late", go(), agent, FETCH)
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    h.daemon.engine.clock = AheadClock(3600)
    got = await h.stub.Compact(pb.CompactRequest(session_id="late"))
    assert got.compacted and got.checkpoint.compaction.summary == ""
    done = [e.compaction_done for e in await watch(h, "late") if e.type == "compaction.done"]
    assert len(done) == 1
    said = done[0].error
    assert said.startswith(
        "the summary call was not made: the session limit wall_clock_ms=60000 has passed ("
    ), said
    elapsed = int(said.rsplit("(", 1)[1].split(" ")[0])
    assert 3_600_000 <= elapsed < 3_700_000
    assert summary_calls(h) == 0


async def test_r78_r85_a_cost_limit_with_an_unpriced_summarizing_model_is_refused_at_start(
    h: Harness,
) -> None:
    # The summary is a model call counted like any: under a cost limit its model needs a
    # price (or a provider that reports cost), or the limit could not be kept.
    agent = priced(spec())
    summarizing = json.loads(agent.compaction.model_settings_json)
    del summarizing["price"]
    agent.compaction.model_settings_json = json.dumps(summarizing)
    agent.limits.session.cost_usd = 100.0
    log = await h.run("unpriced", go(), agent, FETCH)
    assert log.error is not None and log.events == []
    code, reason, meta = error_info(log.error)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "COST_LIMIT_WITHOUT_PRICE")
    assert meta["model"] == "scripted:sum"
    assert "summarizing model 'scripted:sum' has no price" in log.error.details()
    assert h.model_calls("unpriced") == 0
