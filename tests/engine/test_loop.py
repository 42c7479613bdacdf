"""The loop as a whole: what a run emits, in which order, and what it leaves stored."""

from __future__ import annotations

from luoshod.domain import Role, Status
from tests.support.engine_harness import EngineHarness, agent, calls


async def test_a_run_numbers_its_events_and_leaves_a_valid_transcript(h: EngineHarness) -> None:
    spec = agent([calls(("echo", {"x": 1})), {"text": "fin"}], ["echo"], instructions="sys")
    log = await h.run("e1", "hi", spec, {"echo": lambda args: args})
    assert log.outcome.final_text == "fin" and log.outcome.status is Status.FINISHED
    assert [e.seq for e in log.events] == list(range(1, len(log.events) + 1))
    assert log.types == [
        "run.start",
        "step.start",
        "model.turn",
        "tool.call",
        "tool.result",
        "step.done",
        "step.start",
        "model.turn",
        "step.done",
        "run.done",
    ]
    cp = await h.get("e1")
    assert [x.role for x in cp.messages] == [
        Role.SYSTEM,
        Role.USER,
        Role.ASSISTANT,
        Role.TOOL,
        Role.ASSISTANT,
    ]
    assert cp.messages[3].content == '{"x": 1}'
    assert cp.last_seq == len(log.events)  # the next run numbers after these
    page = await h.store.read_events("e1", after_seq=0, limit=100)
    assert [s.seq for s in page.events] == [e.seq for e in log.events]  # each one durable
