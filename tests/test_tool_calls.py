"""SEMANTICS.md R20–R26 and the client-executed tool path (concurrency, timeouts)."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter

import grpc
import pytest
from luosho.v1 import agent_pb2 as pb

from support import Harness, agent, assert_valid_transcript, calls, error_info

pytestmark = pytest.mark.asyncio

SCRIPT = [calls(("add", {"a": k}), ("add", {"a": k + 10})) for k in range(5)] + [{"text": "done"}]


async def test_r20_r21_r22_r24_after_any_sequence_of_crashes_aborts_and_resumes(h: Harness) -> None:
    rng = random.Random(20)
    executed: Counter[str] = Counter()
    accepted: set[str] = set()
    handed_out_after_accept: list[str] = []
    spec = agent(SCRIPT, tool_concurrency=2)
    sid = "r20"
    first = True
    taken: list[str] = []
    for attempt in range(40):
        action = ("crash", "abort")[attempt] if attempt < 2 else rng.choice(["crash", "abort", "finish"])
        taken.append(action)
        budget = rng.randint(1, 4)

        async def on_event(e: pb.Event, action=action) -> None:
            nonlocal budget
            if e.type != "tool.call":
                return
            call = e.tool_call.call
            if call.id in accepted:
                handed_out_after_accept.append(call.id)
            budget -= 1
            if budget < 0 and action == "abort":
                await h.stub.Cancel(pb.CancelRequest(session_id=sid))
                return
            executed[call.id] += 1
            if await h.submit(sid, call.id, json.dumps(1)) == pb.SUBMIT_OUTCOME_ACCEPTED:
                accepted.add(call.id)

        stop = None
        if action == "crash":
            counter = iter(range(budget, -1, -1))
            stop = lambda e: e.type == "tool.call" and next(counter) == 0  # noqa: E731
        log = await h.run(sid, "go" if first else [], spec, on_event=on_event, stop_at=stop)
        first = False
        await h.idle(sid)
        cp = await h.get(sid)
        assert_valid_transcript(cp)
        if cp.status == pb.CHECKPOINT_STATUS_FINISHED:
            break
    else:
        pytest.fail("the run never finished")
    assert len(taken) > 2, taken
    assert handed_out_after_accept == []  # R21: a recorded result never runs again
    results = [m.tool_call_id for m in cp.messages if m.role == pb.ROLE_TOOL]
    assert len(results) == len(set(results)) == 10  # R20: exactly one result per call
    assistant_turns = sum(1 for m in cp.messages if m.role == pb.ROLE_ASSISTANT)
    assert h.model_calls(sid) == assistant_turns  # R22: no model turn generated twice


async def test_r24_a_call_lost_in_a_crash_reruns_with_the_same_id(h: Harness) -> None:
    spec = agent([calls(("add", {"a": 1})), {"text": "ok"}])
    ids: list[str] = []

    def first_call(e: pb.Event) -> bool:
        if e.type == "tool.call":
            ids.append(e.tool_call.call.id)
            return True
        return False

    await h.run("r24", "go", spec, stop_at=first_call)  # the client dies while the tool runs
    await h.idle("r24")
    log = await h.run("r24", [], spec, {"add": lambda a: 1})
    assert [e.tool_call.call.id for e in log.of("tool.call")] == ids == ["call_0_0"]
    assert log.done.finish_reason == pb.FINISH_REASON_STOP


async def test_r23_provider_always_sees_a_valid_transcript(h: Harness) -> None:
    # An interrupted, redirected, resumed run: the transcript stays valid at every save.
    spec = agent(SCRIPT[:2] + [{"text": "done"}])
    await h.run("r23", "go", spec, {"add": lambda a: 1}, stop_at=lambda e: e.type == "tool.call")
    await h.idle("r23")
    await h.run("r23", "change of plan", spec, {"add": lambda a: 1})
    for entry in await h.daemon.store.history("r23"):
        from luoshod.server.convert import checkpoint_pb

        assert_valid_transcript(checkpoint_pb(entry.checkpoint))


async def test_r25_invalid_arguments_and_undeclared_tools_get_error_results(h: Harness) -> None:
    schema = {"add": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}
    script = [
        calls(("add", {"a": "one"}), ("nope", {}), ("add", {}), ("add", {"a": 1})),
        {"text": "ok"},
    ]
    log = await h.run("r25", "go", agent(script, schema), {"add": lambda a: a["a"]})
    assert [e.tool_call.call.id for e in log.of("tool.call")] == ["call_0_3"]
    results = [e.tool_result for e in log.of("tool.result")]
    assert [r.is_error for r in results] == [True, True, True, False]
    assert "input schema" in json.loads(results[0].result_json)["error"]
    assert "unknown tool 'nope'" in json.loads(results[1].result_json)["error"]
    assert "'a' is a required property" in json.loads(results[2].result_json)["details"][0]
    assert_valid_transcript(await h.get("r25"))


async def test_r26_resubmission_changes_nothing_and_unknown_calls_are_not_found(h: Harness) -> None:
    outcomes = []

    async def answer_twice(e: pb.Event) -> None:
        if e.type == "tool.call":
            c = e.tool_call.call.id
            outcomes.append(await h.submit("r26", c, "1"))
            outcomes.append(await h.submit("r26", c, "2"))

    await h.run("r26", "go", agent([calls(("add", {})), {"text": "ok"}]), on_event=answer_twice)
    assert outcomes == [pb.SUBMIT_OUTCOME_ACCEPTED, pb.SUBMIT_OUTCOME_DUPLICATE]
    assert await h.submit("r26", "call_0_0", "3") == pb.SUBMIT_OUTCOME_DUPLICATE  # after the run
    cp = await h.get("r26")
    assert [m.content for m in cp.messages if m.role == pb.ROLE_TOOL] == ["1"]
    for sid, call_id in (("r26", "call_9_9"), ("no-such-session", "call_0_0")):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await h.submit(sid, call_id, "1")
        assert error_info(err.value)[:2] == (grpc.StatusCode.NOT_FOUND, "TOOL_CALL_NOT_FOUND")


async def test_submit_for_a_call_no_run_awaits_is_refused(h: Harness) -> None:
    spec = agent([calls(("add", {})), {"text": "ok"}])
    await h.run("nw", "go", spec, stop_at=lambda e: e.type == "tool.call")
    await h.idle("nw")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await h.submit("nw", "call_0_0", "1")
    code, reason, meta = error_info(err.value)
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "TOOL_CALL_NOT_PENDING")
    assert meta["tool_call_id"] == "call_0_0"


async def test_tool_concurrency_bounds_calls_handed_out(h: Harness) -> None:
    script = [calls(*[("add", {"a": k}) for k in range(5)]), {"text": "ok"}]
    out: list[str] = []
    release = asyncio.Event()
    max_out = 0

    async def slow(args):
        nonlocal max_out
        out.append("x")
        max_out = max(max_out, len(out))
        if len(out) >= 2:
            release.set()
        await release.wait()
        out.pop()
        return args["a"]

    log = await h.run("conc", "go", agent(script, tool_concurrency=2), {"add": slow})
    assert max_out == 2
    assert [json.loads(e.tool_result.result_json) for e in log.of("tool.result")] == [0, 1, 2, 3, 4]


async def test_tool_timeout_records_an_error_result_and_the_run_goes_on(h: Harness) -> None:
    spec = agent([calls(("add", {})), {"text": "ok"}], tool_timeout_ms=200)
    log = await h.run("tmo", "go", spec)  # nobody answers
    assert log.of("tool.call")[0].tool_call.timeout_ms == 200
    result = log.of("tool.result")[0].tool_result
    assert result.is_error and "tool timeout" in json.loads(result.result_json)["error"]
    assert log.done.finish_reason == pb.FINISH_REASON_STOP


async def test_tool_errors_reported_by_the_client_reach_the_transcript(h: Harness) -> None:
    def boom(args):
        raise RuntimeError("disk on fire")

    log = await h.run("terr", "go", agent([calls(("add", {})), {"text": "ok"}]), {"add": boom})
    result = log.of("tool.result")[0].tool_result
    assert result.is_error and json.loads(result.result_json) == {"error": "disk on fire"}
