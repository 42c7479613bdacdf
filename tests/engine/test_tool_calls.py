"""docs/reference/rules.md R20–R25 and the tool path (concurrency, timeouts), in the engine."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter

import pytest

from luoshod.domain import FinishReason, Role, Status
from tests.support.engine_harness import (
    EngineHarness,
    agent,
    assert_valid_transcript,
    calls,
    tool_results,
)

SCRIPT = [calls(("add", {"a": k}), ("add", {"a": k + 10})) for k in range(5)] + [{"text": "done"}]


async def test_r20_r21_r22_r24_after_any_sequence_of_crashes_aborts_and_resumes(
    h: EngineHarness,
) -> None:
    rng = random.Random(20)
    executed: Counter[str] = Counter()
    accepted: set[str] = set()
    handed_out_after_accept: list[str] = []
    spec = agent(SCRIPT, tool_concurrency=2)
    sid = "r20"
    taken: list[str] = []
    for attempt in range(40):
        action = (
            ("crash", "abort")[attempt] if attempt < 2 else rng.choice(["crash", "abort", "finish"])
        )
        taken.append(action)
        budget = rng.randint(1, 4)

        def on_event(e, port, control, action=action) -> None:
            nonlocal budget
            if e.type != "tool.call":
                return
            call = e.data["call"]
            if call.id in accepted:
                handed_out_after_accept.append(call.id)
            budget -= 1
            if budget < 0 and action == "abort":
                control.abort()
                return
            executed[call.id] += 1
            if port.deliver(call.id, json.dumps(1)):
                accepted.add(call.id)

        stop = None
        if action == "crash":
            counter = iter(range(budget, -1, -1))
            stop = lambda e: e.type == "tool.call" and next(counter) == 0  # noqa: E731
        await h.run(sid, "go" if attempt == 0 else [], spec, on_event=on_event, stop_at=stop)
        cp = await h.get(sid)
        assert_valid_transcript(cp)
        if cp.status is Status.FINISHED:
            break
    else:
        pytest.fail("the run never finished")
    assert len(taken) > 2, taken
    assert handed_out_after_accept == []  # R21: a recorded result never runs again
    results = [m.tool_call_id for m in tool_results(cp)]
    assert len(results) == len(set(results)) == 10  # R20: exactly one result per call
    assistant_turns = sum(1 for m in cp.messages if m.role is Role.ASSISTANT)
    assert h.model_calls(sid) == assistant_turns  # R22: no model turn generated twice


async def test_r22_a_checkpointed_turn_is_not_generated_again(h: EngineHarness) -> None:
    spec = agent([calls(("add", {"a": 1})), {"text": "ok"}])
    await h.run("r22", "go", spec, stop_at=lambda e: e.type == "tool.call")  # crash after the turn
    assert h.model_calls("r22") == 1
    log = await h.run("r22", [], spec, {"add": lambda a: 1})
    assert log.types[:2] == ["run.start", "tool.call"]  # the saved turn's call, no model call first
    assert h.model_calls("r22") == 2 and log.done["final_text"] == "ok"


async def test_r24_a_call_lost_in_a_crash_reruns_with_the_same_id(h: EngineHarness) -> None:
    spec = agent([calls(("add", {"a": 1})), {"text": "ok"}])
    ids: list[str] = []

    def first_call(e) -> bool:
        if e.type == "tool.call":
            ids.append(e.data["call"].id)
            return True
        return False

    await h.run("r24", "go", spec, stop_at=first_call)  # the client dies while the tool runs
    log = await h.run("r24", [], spec, {"add": lambda a: 1})
    assert [c["call"].id for c in log.of("tool.call")] == ids == ["call_0_0"]
    assert log.done["finish_reason"] is FinishReason.STOP


async def test_r23_provider_always_sees_a_valid_transcript(h: EngineHarness) -> None:
    # An interrupted, redirected, resumed run: the transcript stays valid at every save.
    spec = agent(SCRIPT[:2] + [{"text": "done"}])
    await h.run("r23", "go", spec, {"add": lambda a: 1}, stop_at=lambda e: e.type == "tool.call")
    await h.run("r23", "change of plan", spec, {"add": lambda a: 1})
    entries = await h.history("r23")
    assert len(entries) > 3
    for entry in entries:
        assert_valid_transcript(entry.checkpoint)


async def test_r25_invalid_arguments_and_undeclared_tools_get_error_results(
    h: EngineHarness,
) -> None:
    schema = {
        "add": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    }
    script = [
        calls(("add", {"a": "one"}), ("nope", {}), ("add", {}), ("add", {"a": 1})),
        {"text": "ok"},
    ]
    log = await h.run("r25", "go", agent(script, schema), {"add": lambda a: a["a"]})
    assert [c["call"].id for c in log.of("tool.call")] == ["call_0_3"]  # the client sees only this
    results = log.of("tool.result")
    assert [r["is_error"] for r in results] == [True, True, True, False]
    assert "input schema" in json.loads(results[0]["result_json"])["error"]
    assert "unknown tool 'nope'" in json.loads(results[1]["result_json"])["error"]
    assert "'a' is a required property" in json.loads(results[2]["result_json"])["details"][0]
    assert_valid_transcript(await h.get("r25"))


async def test_tool_concurrency_bounds_calls_handed_out(h: EngineHarness) -> None:
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
    assert [json.loads(r["result_json"]) for r in log.of("tool.result")] == [0, 1, 2, 3, 4]


async def test_tool_timeout_records_an_error_result_and_the_run_goes_on(h: EngineHarness) -> None:
    spec = agent([calls(("add", {})), {"text": "ok"}], tool_timeout_ms=50)
    log = await h.run("tmo", "go", spec)  # nobody answers
    assert log.of("tool.call")[0]["timeout_ms"] == 50
    result = log.of("tool.result")[0]
    assert result["is_error"] and "tool timeout" in json.loads(result["result_json"])["error"]
    assert log.done["finish_reason"] is FinishReason.STOP


async def test_tool_errors_reported_by_the_client_reach_the_transcript(h: EngineHarness) -> None:
    def boom(args):
        raise RuntimeError("disk on fire")

    log = await h.run("terr", "go", agent([calls(("add", {})), {"text": "ok"}]), {"add": boom})
    result = log.of("tool.result")[0]
    assert result["is_error"] and json.loads(result["result_json"]) == {"error": "disk on fire"}
    (recorded,) = tool_results(await h.get("terr"))
    assert recorded.is_error and json.loads(recorded.content) == {"error": "disk on fire"}
