"""The engine on its own: no server, no disk (memory store, scripted provider)."""

from __future__ import annotations

import asyncio
import json

import pytest

from luoshod.domain import AgentSpec, Message, Role, Status, ToolSpec
from luoshod.engine.events import Event
from luoshod.engine.fingerprint import drift, fingerprint
from luoshod.engine.merge import merge_input
from luoshod.engine.run import Engine, RunControl, RunRequest, ToolOutcome
from luoshod.providers import ProviderRegistry, ScriptedProvider
from luoshod.store.memory import MemoryStore

U, A, S = Role.USER, Role.ASSISTANT, Role.SYSTEM


def m(role: Role, text: str) -> Message:
    return Message(role, text)


class AutoTools:
    """A ToolPort that answers every call at once with its arguments."""

    def __init__(self, sink: list[Event]) -> None:
        self.sink = sink
        self.futures: dict[str, asyncio.Future[ToolOutcome]] = {}

    def expect(self, call_id: str) -> asyncio.Future[ToolOutcome]:
        fut = self.futures[call_id] = asyncio.get_running_loop().create_future()
        return fut

    def forget(self, call_id: str) -> None:
        self.futures.pop(call_id, None)

    async def emit(self, event: Event, encoded: bytes | None = None) -> None:
        self.sink.append(event)
        if event.type == "tool.call":
            call = event.data["call"]
            self.futures[call.id].set_result(ToolOutcome(call.arguments_json))


async def test_engine_runs_without_a_server() -> None:
    store = MemoryStore()
    engine = Engine(store, ProviderRegistry([ScriptedProvider()]))
    script = [{"tool_calls": [{"name": "echo", "arguments": {"x": 1}}]}, {"text": "fin"}]
    spec = AgentSpec(
        "scripted:t", "sys", (ToolSpec("echo"),), model_settings_json=json.dumps({"script": script})
    )
    events: list[Event] = []
    port = AutoTools(events)
    out = await engine.run(RunRequest("e1", [m(U, "hi")], spec), port, port, RunControl())
    assert out.final_text == "fin" and out.status is Status.FINISHED
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    cp = await store.load("e1")
    assert [x.role for x in cp.messages] == [S, U, A, Role.TOOL, A]
    assert cp.messages[3].content == '{"x": 1}'


@pytest.mark.parametrize(
    ("stored", "incoming", "finished", "expected"),
    [
        ([m(S, "s"), m(U, "q"), m(A, "a")], [m(U, "q2")], True, [m(U, "q2")]),  # R14
        ([m(S, "s"), m(U, "q"), m(A, "a")], [m(U, "q"), m(A, "a"), m(U, "q2")], True, [m(U, "q2")]),  # R15
        ([m(U, "q"), m(A, "a")], [m(U, "q")], True, [m(U, "q")]),  # R16
        ([m(U, "q"), m(A, "a")], [m(S, "new"), m(U, "q2")], True, [m(U, "q2")]),  # R17
        ([m(U, "q"), m(A, "a")], [m(U, "q")], False, []),  # R13 retry
        ([m(U, "q1"), m(A, "a"), m(U, "q2"), m(A, "b")], [m(U, "q2")], False, []),  # R13
        ([m(U, "q"), m(A, "a")], [], False, []),  # empty input only resumes
        ([m(U, "q"), m(A, "a")], [m(U, "other")], False, [m(U, "other")]),  # R12
    ],
)
def test_merge(stored, incoming, finished, expected) -> None:
    assert merge_input(stored, incoming, finished=finished) == expected


def test_r46_fingerprint_ignores_tool_order_and_key_order() -> None:
    a = AgentSpec("p:m", "x", (ToolSpec("a", input_schema_json='{"type":"object","title":"t"}'), ToolSpec("b")))
    b = AgentSpec("p:m", "x", (ToolSpec("b"), ToolSpec("a", input_schema_json='{"title":"t","type":"object"}')))
    assert fingerprint(a) == fingerprint(b)
    c = AgentSpec("p:n", "y", (ToolSpec("a", input_schema_json='{"type":"string"}'), ToolSpec("c")))
    d = drift(fingerprint(a), fingerprint(c))
    assert (d.model_from, d.model_to) == ("p:m", "p:n")
    assert (d.tools_added, d.tools_removed, d.tools_changed) == (("c",), ("b",), ("a",))
    assert d.instructions_changed
    assert drift(None, fingerprint(a)) is None  # R50
