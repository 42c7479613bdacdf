"""The stored form of events (luoshod/server/stored_events.py): what the log's key and the
event itself say is left out, and every event reads back exactly as it was emitted (Watch
from any seq returns the events of before this form); an event stored whole (by an
earlier luoshod) reads as it is. End to end, tests/daemon/test_watch.py and the sub-agent tests
watch runs through the daemon with this form in the log."""

from __future__ import annotations

import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.domain import Message, ReasoningBlock, Role, ToolCall, Usage
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


@pytest.mark.parametrize(
    "event",
    [
        *EVENTS,
        Event("s", "r1", 5, 1.0, ev.STEP_START, {"step": 1}, SubagentTag("alias", 1, ("w",), "t")),
    ],
    ids=lambda e: f"{e.seq}-{e.type}",
)
def test_the_event_sent_is_the_one_built_for_the_log_and_the_log_reads_it_back(
    event: Event,
) -> None:
    data, wire = stored_events.encode_wire(event)
    assert wire == convert.event_pb(event)
    assert stored_events.decode(data, "s", event.seq) == wire
    assert data == stored_events.encode(event)


def test_a_steps_events_are_built_as_their_messages_say() -> None:
    """The five events of every step are built from dicts (convert.event_pb's fast path):
    the same messages, byte for byte, as built from their parts."""
    call = ToolCall("call_3_0", "work", '{"i": 3}')
    usage = Usage(10, 9, 19, 1, 0.5, 2, 1, 3)
    turn = Message(
        Role.ASSISTANT,
        "hé",
        (call,),
        model="scripted:bench",
        usage=usage,
        reasoning=(ReasoningBlock("scripted", "{}", "why"),),
        pinned=True,
    )
    time = pb.Event(time=convert.timestamp(1700000000.123456)).time
    base = {"session_id": "s", "run_id": "r1", "time": time}
    cases = [
        (ev.STEP_START, {"step": 4}, {"step_start": pb.StepStart(step=4)}),
        (
            ev.MODEL_TURN,
            {"step": 4, "message": turn, "usage": usage},
            {
                "model_turn": pb.ModelTurn(
                    step=4, message=convert.message_pb(turn), usage=convert.usage_pb(usage)
                )
            },
        ),
        (
            ev.TOOL_CALL,
            {"step": 4, "call": call, "timeout_ms": 30000, "attempt": 2, "executor": "daemon"},
            {
                "tool_call": pb.ToolCallRequested(
                    step=4,
                    call=convert.tool_call_pb(call),
                    timeout_ms=30000,
                    attempt=2,
                    executor=pb.TOOL_EXECUTOR_DAEMON,
                )
            },
        ),
        (
            ev.TOOL_RESULT,
            {
                "step": 4,
                "tool_call_id": "c",
                "tool_name": "w",
                "result_json": "1",
                "is_error": True,
            },
            {
                "tool_result": pb.ToolResult(
                    step=4, tool_call_id="c", tool_name="w", result_json="1", is_error=True
                )
            },
        ),
        (ev.STEP_DONE, {"step": 0}, {"step_done": pb.StepDone(step=0)}),
    ]
    for seq, (type_, data, payload) in enumerate(cases, 1):
        for tag in (None, HELPER):
            built = convert.event_pb(Event("s", "r1", seq, 1700000000.123456, type_, data, tag))
            parts = pb.Event(
                **base,
                seq=seq,
                type=type_,
                subagent=pb.SubAgentTag(name="helper", depth=2, path=HELPER.path, task_id="task_34")
                if tag
                else None,
                **payload,
            )
            assert built.SerializeToString() == parts.SerializeToString()
            assert built == parts
