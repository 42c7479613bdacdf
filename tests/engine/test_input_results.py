"""docs/reference/rules.md R53: tool results sent as ``Execute`` input, in the engine.

The three cases of issue 14 first (each passed blindly before R53), then the edges: a
result is accepted only as stored history the merge recognises, or as the answer to a
pending call the run would ask the client for; everything else is ``INVALID_MESSAGE``
naming the input index and the call id, and changes nothing.
"""

from __future__ import annotations

import json

from luoshod.domain import Message, Role, Status
from luoshod.engine.events import Event
from luoshod.errors import InvalidArgument
from tests.support.engine_harness import (
    EngineHarness,
    agent,
    assert_valid_transcript,
    calls,
    tool_results,
    user,
)

GAUGE = [calls(("read_gauge", {"id": "G-1"})), {"text": "the bar is read"}]
TWO = [calls(("read_gauge", {"id": "G-1"}), ("read_gauge", {"id": "G-2"})), {"text": "both read"}]


def tool(call_id: str, body: object, name: str = "read_gauge") -> Message:
    return Message(Role.TOOL, json.dumps(body), (), call_id, name)


def spec(script=GAUGE, **kw):  # type: ignore[no-untyped-def]
    return agent(script, ("read_gauge",), **kw)


class Gauge:
    """The client's tool: counts the calls it runs."""

    def __init__(self) -> None:
        self.ran: list[dict] = []

    def __call__(self, args: dict) -> dict:
        self.ran.append(args)
        return {"bar": 1}


def at_first_call(e: Event) -> bool:
    return e.type == "tool.call"


def refused(log, index: int, call_id: str) -> None:  # type: ignore[no-untyped-def]
    assert isinstance(log.error, InvalidArgument), log.error
    assert log.error.reason == "INVALID_MESSAGE"
    assert log.error.metadata["index"] == str(index)
    assert log.error.metadata["tool_call_id"] == call_id
    assert f"input[{index}]" in log.error.message and call_id in log.error.message
    assert log.events == []


async def test_r53_a_result_in_a_new_session_is_refused(h: EngineHarness) -> None:
    """Issue 14, case 1: the model was called with an orphan tool result."""
    log = await h.run("r53n", [user("Read gauge G-1"), tool("call_x_9", {"bar": 1})], spec())
    refused(log, 1, "call_x_9")
    assert await h.store.load("r53n") is None
    assert h.model_calls("r53n") == 0


async def test_r53_a_result_after_a_finished_run_is_refused(h: EngineHarness) -> None:
    """Issue 14, case 2: ``call_0_0`` got a second result, after a text turn."""
    gauge = Gauge()
    done = await h.run("r53f", "Read gauge G-1", spec(), {"read_gauge": gauge})
    assert done.done["status"] is Status.FINISHED
    before = await h.get("r53f")
    model_calls = h.model_calls("r53f")
    log = await h.run("r53f", [tool("call_0_0", {"bar": 9})], spec())
    refused(log, 0, "call_0_0")
    after = await h.get("r53f")
    assert after.version == before.version and after.messages == before.messages
    assert h.model_calls("r53f") == model_calls


async def test_r53_a_result_for_the_pending_call_is_recorded_and_not_asked_again(
    h: EngineHarness,
) -> None:
    """Issue 14, case 3: the run asked for ``call_0_0`` again and then appended the input
    too, two results for one call. Now the input's result is that call's result."""
    gauge = Gauge()
    first = await h.run(
        "r53u", "Read gauge G-1", spec(), {"read_gauge": gauge}, stop_at=at_first_call
    )
    assert first.dropped and gauge.ran == []
    model_calls = h.model_calls("r53u")
    log = await h.run("r53u", [tool("call_0_0", {"bar": 5})], spec(), {"read_gauge": gauge})
    assert log.error is None and log.done["final_text"] == "the bar is read"
    assert log.of("tool.call") == [] and gauge.ran == []
    assert [(r["tool_call_id"], r["result_json"]) for r in log.of("tool.result")] == [
        ("call_0_0", json.dumps({"bar": 5}))
    ]
    cp = await h.get("r53u")
    results = tool_results(cp)
    assert [(r.tool_call_id, r.tool_name, json.loads(r.content)) for r in results] == [
        ("call_0_0", "read_gauge", {"bar": 5})
    ]
    assert_valid_transcript(cp)
    assert h.model_calls("r53u") == model_calls + 1  # only the turn after the result
    # Recorded like a submitted result: saved before the next model call (R2), and
    # that model call saw it.
    saved = [
        e.checkpoint for e in reversed(await h.history("r53u")) if e.status is Status.IN_PROGRESS
    ]
    assert [len(tool_results(c)) for c in saved][-1] == 1


async def test_r53_results_for_some_pending_calls_the_rest_is_asked(h: EngineHarness) -> None:
    gauge = Gauge()
    await h.run("r53p", "read both", spec(TWO), {"read_gauge": gauge}, stop_at=at_first_call)
    log = await h.run(
        "r53p",
        [tool("call_0_1", {"bar": 7}), user("and tell me")],
        spec(TWO),
        {"read_gauge": gauge},
    )
    assert log.error is None
    assert [c["call"].id for c in log.of("tool.call")] == ["call_0_0"]  # call_0_1 not asked
    cp = await h.get("r53p")
    assert [(m.role, m.tool_call_id) for m in cp.messages[2:5]] == [
        (Role.ASSISTANT, ""),
        (Role.TOOL, "call_0_0"),
        (Role.TOOL, "call_0_1"),
    ]
    assert json.loads(cp.messages[4].content) == {"bar": 7}
    assert cp.messages[5] == user("and tell me")  # R12: after the results
    assert_valid_transcript(cp)


async def test_r53_a_second_result_unknown_call_or_result_after_new_input_is_refused(
    h: EngineHarness,
) -> None:
    gauge = Gauge()
    seen: list[Event] = []

    def at_second_call(e: Event) -> bool:
        seen.extend([e] if e.type == "tool.call" else [])
        return len(seen) == 2

    await h.run("r53e", "read both", spec(TWO), {"read_gauge": gauge}, stop_at=at_second_call)
    cp = await h.get("r53e")
    assert [r.tool_call_id for r in tool_results(cp)] == ["call_0_0"]
    cases = [
        ([tool("call_0_0", {"bar": 2})], 0, "call_0_0"),  # it has a result
        ([tool("call_9_9", {"bar": 2})], 0, "call_9_9"),  # unknown
        ([tool("call_0_1", {"bar": 2}), tool("call_0_1", {"bar": 3})], 1, "call_0_1"),  # twice
        ([user("wait"), tool("call_0_1", {"bar": 2})], 1, "call_0_1"),  # after new input
        # the stored history re-sent, then a second result for an answered call
        (cp.messages[1:] + [tool("call_0_0", {"bar": 4})], 3, "call_0_0"),
    ]
    for input_, index, call_id in cases:
        log = await h.run("r53e", input_, spec(TWO), {"read_gauge": gauge})
        refused(log, index, call_id)
        after = await h.get("r53e")
        assert after.version == cp.version and after.messages == cp.messages
    assert gauge.ran == [{"id": "G-1"}]


async def test_r53_a_gated_call_cannot_be_answered_past_its_approval(h: EngineHarness) -> None:
    gated = spec(needs_approval=("read_gauge",))
    first = await h.run("r53g", "Read gauge G-1", gated)
    assert first.done["status"] is Status.AWAITING_APPROVAL
    cp = await h.get("r53g")
    # Paused: R9 refuses any Execute. Put it back in progress as a crash before the pause would.
    cp.status, cp.approval_id, cp.version = Status.IN_PROGRESS, "", cp.version + 1
    await h.store.save(cp, stored_messages=len(cp.messages))
    log = await h.run("r53g", [tool("call_0_0", {"bar": 1})], gated)
    refused(log, 0, "call_0_0")


async def test_r53_stored_history_with_its_results_is_recognised(h: EngineHarness) -> None:
    """R15 and R13 still hold when the re-sent history holds tool results."""
    gauge = Gauge()
    await h.run("r53h", "Read gauge G-1", spec(), {"read_gauge": gauge})
    cp = await h.get("r53h")
    history = cp.messages[1:]  # without the system message
    assert any(m.role is Role.TOOL for m in history)
    log = await h.run("r53h", history + [user("again")], spec(GAUGE + [{"text": "again done"}]))
    assert log.error is None and log.done["final_text"] == "again done"
    after = await h.get("r53h")
    assert after.messages[: len(cp.messages)] == cp.messages
    assert after.messages[len(cp.messages)] == user("again")
    assert_valid_transcript(after)
