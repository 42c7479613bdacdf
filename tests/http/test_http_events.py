"""``Watch`` as Server-Sent Events: live events of a run as they are written, resumable
with ``Last-Event-ID`` (the event's ``seq``), refusals as clean 4xx."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.support.console import Console, ConsoleFactory, assert_error, sse, trip_agent


async def test_a_run_arrives_live_then_resumes_from_last_event_id(console: Console) -> None:
    url = f"{console.base}/api/v1/sessions/trip-1/events"
    frames: list[dict[str, Any]] = []
    seen_call = asyncio.Event()

    async def watch() -> None:
        async with console.http.get(url, params={"follow": "true"}) as r:
            assert r.status == 200 and r.content_type == "text/event-stream"
            assert r.headers["Cache-Control"] == "no-store"
            async for frame in sse(r):
                frames.append(frame)
                if frame["event"] == "tool.call":
                    seen_call.set()
                if frame["event"] == "run.done":
                    return

    watcher = asyncio.create_task(watch())
    await asyncio.sleep(0)  # the watcher subscribes before or after the run: both work

    async def weather(args: dict[str, Any]) -> dict[str, Any]:
        # The app answers only once the page saw the call: the run cannot go on (nor end)
        # unless its events reach the event stream while it runs.
        await asyncio.wait_for(seen_call.wait(), 10)
        return {"sky": "sunny"}

    await console.app.run("trip-1", "Plan a day in Lisbon", trip_agent(), {"get_weather": weather})
    await asyncio.wait_for(watcher, 10)
    types = [f["event"] for f in frames]
    assert types[0] == "run.start" and types[-1] == "run.done" and "tool.call" in types, types
    seqs = [int(f["id"]) for f in frames]
    assert seqs == list(range(1, len(frames) + 1))
    assert all(json.loads(f["data"])["seq"] == f["id"] for f in frames)
    assert json.loads(frames[-1]["data"])["run_done"]["final_text"] == "Lisbon is sunny today."

    # A reconnecting EventSource sends the last id it saw: only what came after it.
    async with console.http.get(url, headers={"Last-Event-ID": "3"}) as r:
        again = [f async for f in sse(r)]
    assert [int(f["id"]) for f in again[:-1]] == seqs[3:]
    assert again[-1]["event"] == "end"  # no run is active and follow is off
    async with console.http.get(url, params={"after_seq": str(seqs[-1])}) as r:
        assert [f["event"] async for f in sse(r)] == ["end"]


async def test_bad_cursors_and_ids_are_refused(make_console: ConsoleFactory) -> None:
    console = await make_console(event_log_limit=4)
    await console.finished_trip("trip-1")
    api = "/api/v1/sessions"
    status, body = await console.get(f"{api}/trip-1/events", headers={"Last-Event-ID": "two"})
    assert_error(status, body, 400, "INVALID_ARGUMENT", "INVALID_LAST_EVENT_ID")
    status, body = await console.get(f"{api}/trip-1/events", params={"after_seq": "-1"})
    assert_error(status, body, 400, "INVALID_ARGUMENT", "INVALID_AFTER_SEQ")
    status, body = await console.get(f"{api}/trip-1/events", headers={"Last-Event-ID": "1"})
    body = assert_error(status, body, 400, "OUT_OF_RANGE", "EVENTS_OUT_OF_RANGE")
    assert int(body["metadata"]["oldest_kept_seq"]) > 2
    status, body = await console.get(f"{api}/bad%20id/events")
    assert_error(status, body, 400, "INVALID_ARGUMENT", "INVALID_SESSION_ID")


async def test_a_stopping_daemon_ends_the_stream_with_an_error_event(
    make_console: ConsoleFactory,
) -> None:
    """SIGTERM's drain: a followed stream gets SHUTTING_DOWN (reconnect with your cursor)
    and the daemon stops at once, not after a proxy's timeout."""
    console = await make_console()
    await console.finished_trip("trip-1")
    async with console.http.get(
        f"{console.base}/api/v1/sessions/trip-1/events", params={"follow": "true"}
    ) as r:
        frames = sse(r)
        while (await anext(frames))["event"] != "run.done":
            pass
        started = asyncio.get_running_loop().time()
        stopping = asyncio.create_task(console.daemon.stop())
        last = await asyncio.wait_for(anext(frames), 10)
        assert last["event"] == "error" and json.loads(last["data"])["reason"] == "SHUTTING_DOWN", (
            last
        )
        await asyncio.wait_for(stopping, 10)
    assert asyncio.get_running_loop().time() - started < 5
