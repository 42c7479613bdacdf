"""The Python client's ``if_busy`` and queue (R68, R69) against the real daemon: an input
sent with ``if_busy="enqueue"`` while the session waits on a tool runs after it, the queue
is read with ``queue()`` and an input removed with ``dequeue_input()``."""

from __future__ import annotations

import asyncio

import pytest

from luosho.client import Agent, AsyncClient, LuoshoError, Tool
from luosho.v1 import agent_pb2
from luoshod.server.app import Daemon

pytestmark = pytest.mark.asyncio

AGENT = Agent(
    "scripted:busy",
    tools=[Tool("wait", input_schema={"type": "object"})],
    model_settings={
        "script": [
            {"tool_calls": [{"name": "wait", "arguments": {}}]},
            {"text": "first"},
            {"text": "second"},
        ]
    },
)


async def test_python_client_enqueues_lists_and_dequeues(daemon: Daemon) -> None:
    release = asyncio.Event()

    async def wait(args: dict) -> str:
        await release.wait()
        return "done"

    async with AsyncClient(daemon.addresses[0]) as client:
        first = client.execute("py-q", "one", agent=AGENT, tools={"wait": wait})
        started = asyncio.create_task(first.__anext__())
        await started  # run.start: the session is busy
        with pytest.raises(ValueError):
            client.execute("py-q", "x", agent=AGENT, if_busy="sometimes")
        second = client.execute("py-q", "two", agent=AGENT, if_busy="enqueue", request_id="two")
        third = client.execute("py-q", "three", agent=AGENT, if_busy="enqueue", request_id="three")
        assert (await second.__anext__()).type == "input.queued"
        assert (await third.__anext__()).type == "input.queued"
        assert [q.request_id for q in await client.queue("py-q")] == ["two", "three"]
        whole = await client.session("py-q")  # one GetSession: checkpoint and queue together
        assert [q.request_id for q in whole.queue] == ["two", "three"]
        assert whole.checkpoint.session_id == "py-q" and not whole.HasField("last_model_failure")
        assert await client.dequeue_input("py-q", "three") is True
        assert await client.dequeue_input("py-q", "three") is False
        with pytest.raises(LuoshoError) as err:
            await third
        assert err.value.reason == "INPUT_DEQUEUED"
        release.set()
        assert (await first).final_text == "first"
        assert (await second).final_text == "second"
        assert await client.queue("py-q") == []
        cp = await client.get_session("py-q")
        assert [m.content for m in cp.messages if m.role == agent_pb2.ROLE_USER] == ["one", "two"]
