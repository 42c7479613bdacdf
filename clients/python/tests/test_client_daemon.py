"""The Python client (clients/python) against the real daemon: a multi-step run with a
client tool, a client crash and a resume from a fresh client, typed errors."""

from __future__ import annotations

import asyncio
import json

import pytest

from luosho.client import (
    Agent,
    AsyncClient,
    CheckpointNotFoundError,
    Client,
    InvalidArgumentError,
    SessionBusyError,
    Tool,
)
from luoshod.server.app import Daemon

SCRIPT = [
    {"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]},
    {"tool_calls": [{"name": "add", "arguments": {"a": 5, "b": 10}}]},
    {"text": "15"},
]
AGENT = Agent(
    "scripted:calc",
    instructions="Add things.",
    tools=[Tool("add", input_schema={"type": "object", "required": ["a", "b"]})],
    model_settings={"script": SCRIPT},
)


def add(args: dict) -> int:
    return args["a"] + args["b"]


@pytest.mark.asyncio
async def test_async_client_runs_tools_and_returns_the_result(daemon: Daemon) -> None:
    async with AsyncClient(daemon.addresses[0]) as client:
        run = client.execute(
            "py-1", "add 2+3, then +10", agent=AGENT, tools={"add": add}, business_state={"k": 1}
        )
        types = [e.type async for e in run]
        result = await run
        assert result.finish_reason == "stop" and result.final_text == "15"
        assert result.step_index == 3 and result.usage.model_calls == 3
        assert types.count("tool.call") == 2 and types[-1] == "run.done"
        cp = await client.get_session("py-1")
        assert [m.content for m in cp.messages if m.tool_call_id] == ["5", "15"]
        assert json.loads(cp.business_state_json) == {"k": 1}
        assert [s.session_id async for s in client.list_sessions()] == ["py-1"]
        with pytest.raises(CheckpointNotFoundError):
            await client.get_session("nope")
        with pytest.raises(InvalidArgumentError) as err:
            await client.execute("bad id", "x", agent=AGENT)
        assert err.value.reason == "INVALID_SESSION_ID"
        assert await client.delete_session("py-1")


@pytest.mark.asyncio
async def test_client_crash_mid_run_then_a_fresh_client_resumes(daemon: Daemon) -> None:
    async with AsyncClient(daemon.addresses[0]) as first:
        run = first.execute("py-crash", "go", agent=AGENT, tools={})  # no tool: it never answers
        async with run:
            async for event in run:
                if event.type == "tool.call":
                    break  # the client "crashes" while holding a tool call
    run_state = daemon.runs.get("py-crash")
    if run_state is not None:
        await asyncio.wait_for(run_state.done.wait(), 10)
    async with AsyncClient(daemon.addresses[0]) as second:
        result = await second.resume("py-crash", tools={"add": add})
        assert result.ran and result.final_text == "15"
        cp = await second.get_session("py-crash")
        assert [r.call.id for r in cp.tool_calls] == ["call_0_0", "call_1_0"]


@pytest.mark.asyncio
async def test_session_busy_is_a_typed_error(daemon: Daemon) -> None:
    release = asyncio.Event()

    async def slow_add(args: dict) -> int:
        await release.wait()
        return add(args)

    async with AsyncClient(daemon.addresses[0]) as client:
        first = client.execute("py-busy", "go", agent=AGENT, tools={"add": slow_add})
        events = first.__aiter__()
        while (await events.__anext__()).type != "tool.call":
            pass
        with pytest.raises(SessionBusyError) as err:
            await client.execute("py-busy", "again", agent=AGENT)
        assert err.value.metadata["session_id"] == "py-busy"
        release.set()
        assert (await first).final_text == "15"


@pytest.mark.asyncio
async def test_blocking_client(daemon: Daemon) -> None:
    def blocking() -> tuple[str, int]:
        with Client(daemon.addresses[0]) as client:
            result = client.execute("py-sync", "go", agent=AGENT, tools={"add": add}).result()
            return result.final_text, client.get_session("py-sync").status

    # The daemon serves on this test's event loop; the blocking client runs in a thread.
    text, status = await asyncio.to_thread(blocking)
    assert text == "15" and status == 3  # CHECKPOINT_STATUS_FINISHED


@pytest.mark.asyncio
async def test_r53_a_tool_result_the_daemon_refuses_is_a_typed_invalid_argument(
    daemon: Daemon,
) -> None:
    """R53's refusal reaches the caller as InvalidArgumentError, its reason INVALID_MESSAGE
    and the message's index and call id in the metadata; and the client sends only the
    tool messages it was given (none of its own)."""
    async with AsyncClient(daemon.addresses[0]) as client:
        orphan = {
            "role": "tool",
            "tool_call_id": "call_x_9",
            "tool_name": "add",
            "content": {"bar": 1},
        }
        with pytest.raises(InvalidArgumentError) as err:
            await client.execute("py-r53", ["Read gauge G-1", orphan], agent=AGENT)
        assert err.value.reason == "INVALID_MESSAGE"
        assert (
            err.value.metadata["index"] == "1" and err.value.metadata["tool_call_id"] == "call_x_9"
        )
        with pytest.raises(CheckpointNotFoundError):
            await client.get_session("py-r53")
        done = await client.execute("py-r53b", "go", agent=AGENT, tools={"add": add})
        assert done.final_text == "15"
        answered = {"role": "tool", "tool_call_id": "call_0_0", "tool_name": "add", "content": "9"}
        with pytest.raises(InvalidArgumentError) as err:
            await client.execute("py-r53b", [answered], agent=AGENT)
        assert (err.value.reason, err.value.metadata["index"]) == ("INVALID_MESSAGE", "0")
