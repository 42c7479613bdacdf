"""R89's races, made to happen at will: two daemons in the test's event loop share a
SQLite file, and a pause put in one daemon's store read holds a request at the moment the
other daemon takes the session."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from luosho.v1 import agent_pb2 as pb
from luoshod.server.app import Config, Daemon
from tests.support.harness import Harness, agent, calls

SPEC = [calls(("add", {"a": 1})), calls(("add", {"a": 2})), {"text": "three"}]


def config(url: str, owner: str) -> Config:
    return Config(
        listen=["127.0.0.1:0"], store=url, lease_owner=owner, tool_timeout_s=30, drain_timeout_s=1
    )


async def test_r89_a_result_sent_while_another_daemon_takes_the_session_is_forwarded_there(
    tmp_path: Path,
) -> None:
    """A result reaches daemon A while no daemon holds the session (its run was stopped
    with its call pending): A finds no holder to forward to. Before A reads the session,
    daemon B resumes it and hands the call out again. A forwards the result to B, whose
    run takes it (ACCEPTED) and goes on, rather than telling the caller to submit it to B."""
    url = f"sqlite:///{tmp_path}/shared.db"
    first = Daemon(config(url, "daemon-b"))
    await first.start()
    h = Harness(first.addresses[0], first)
    handed: asyncio.Queue[pb.ToolCall] = asyncio.Queue()

    def seen(e: pb.Event) -> None:
        if e.type == "tool.call":
            handed.put_nowait(e.tool_call.call)

    running = asyncio.create_task(h.run("s", "go", agent(SPEC), {}, on_event=seen))
    call = await asyncio.wait_for(handed.get(), 30)
    await first.stop()  # the run ends with its call pending; its lease is released
    await running
    await h.close()

    a, b = Daemon(config(url, "daemon-a")), Daemon(config(url, "daemon-b"))
    await a.start()
    await b.start()
    ha, hb = Harness(a.addresses[0], a), Harness(b.addresses[0], b)
    try:
        # A's first read of the session waits until B has taken it.
        reading, go_on = asyncio.Event(), asyncio.Event()
        load = a.store.load

        async def paused_load(sid: str, *args: Any, **kw: Any) -> Any:
            if not go_on.is_set():
                reading.set()
                await go_on.wait()
            return await load(sid, *args, **kw)

        a.store.load = paused_load  # type: ignore[method-assign,assignment]
        submitted = asyncio.create_task(ha.submit("s", call.id, "1"))
        await asyncio.wait_for(reading.wait(), 30)
        resumed = asyncio.create_task(
            hb.run("s", agent=agent(SPEC), tools={}, resume=True, on_event=seen)
        )
        again = await asyncio.wait_for(handed.get(), 30)
        assert again.id == call.id
        go_on.set()
        assert await asyncio.wait_for(submitted, 30) == pb.SUBMIT_OUTCOME_ACCEPTED
        second = await asyncio.wait_for(handed.get(), 30)
        assert await hb.submit("s", second.id, "2") == pb.SUBMIT_OUTCOME_ACCEPTED
        log = await asyncio.wait_for(resumed, 30)
        assert log.error is None and log.done is not None and log.done.final_text == "three"
    finally:
        await ha.close()
        await hb.close()
        await a.stop()
        await b.stop()
