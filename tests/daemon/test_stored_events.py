"""The stored form of events (luoshod/server/stored_events.py): what the log's key and the
event itself say is left out, and every event reads back exactly as it was emitted (Watch
from any seq returns the events of before this form); an event stored whole (by an
earlier luoshod) reads as it is. End to end, tests/daemon/test_watch.py and the sub-agent tests
watch runs through the daemon with this form in the log."""

from __future__ import annotations

import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.engine import events as ev
from luoshod.engine.events import Event, SubagentTag
from luoshod.server import convert, stored_events

WORKER = SubagentTag("worker", 1, ("worker",), "task_33")
HELPER = SubagentTag("helper", 2, ("worker", "helper"), "task_34")

EVENTS = [
    Event("s", "r1", 1, 1700000000.25, ev.STEP_START, {"step": 1}),
    Event("s", "r1", 2, 1700000000.5, ev.STEP_DONE, {"step": 1}, WORKER),
    Event("s", "r1", 3, 1700000001.0, ev.TEXT_DELTA, {"step": 2, "text": "hé"}, HELPER),
    Event(
        "s",
        "r1",
        4,
        1700000002.0,
        ev.TOOL_RESULT,
        {
            "step": 6,
            "tool_call_id": "call_32_0/call_5_0",
            "tool_name": "work",
            "result_json": '{"ok":5}',
        },
        WORKER,
    ),
]


@pytest.mark.parametrize(
    "event", EVENTS, ids=lambda e: f"{e.type}-{e.subagent.depth if e.subagent else 0}"
)
def test_an_event_reads_back_exactly_and_is_stored_without_what_the_log_says(event: Event) -> None:
    full = convert.event_pb(event)
    data = stored_events.encode(event)
    assert stored_events.decode(data, "s", event.seq) == full
    stored = pb.Event.FromString(data)
    assert (stored.session_id, stored.seq, stored.type) == ("", 0, "")
    if event.subagent:
        assert (stored.subagent.name, stored.subagent.depth) == ("", 0)
        assert list(stored.subagent.path) == list(event.subagent.path)
    assert len(data) < len(full.SerializeToString())


def test_a_tag_that_its_path_does_not_tell_is_stored_whole() -> None:
    odd = Event(
        "s",
        "r1",
        5,
        1.0,
        ev.STEP_START,
        {"step": 1},
        SubagentTag("alias", 1, ("worker",), "task_1"),
    )
    data = stored_events.encode(odd)
    assert pb.Event.FromString(data).subagent.name == "alias"
    assert stored_events.decode(data, "s", 5) == convert.event_pb(odd)


def test_an_event_stored_whole_by_an_earlier_luoshod_reads_as_it_is() -> None:
    full = convert.event_pb(EVENTS[3])
    assert stored_events.decode(full.SerializeToString(), "s", 4) == full
