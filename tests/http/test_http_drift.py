"""Issue 20 over the JSON API of a real daemon: the sessions list filtered by an id prefix
(paged), the drift of a session's last resume in its summary and checkpoint, and a resume
refused for drift recorded as an ``agent.drift`` event (``refused``) in its event log."""

from __future__ import annotations

import json
from typing import Any

from luosho.v1 import agent_pb2 as pb
from tests.support.console import Console, assert_error, sse, trip_agent

API = "/api/v1"
SKY = {"get_weather": lambda a: {"sky": "sunny"}}


async def crashed_trip(console: Console, session_id: str) -> None:
    """A trip whose app went away at its tool call: in progress, resumable."""
    log = await console.app.run(
        session_id, "Plan a day in Lisbon", trip_agent(), stop_at=lambda e: e.type == "tool.call"
    )
    assert log.dropped
    await console.app.idle(session_id)


def drifted_agent(policy: int = pb.AGENT_DRIFT_POLICY_WARN) -> pb.AgentSpec:
    spec = trip_agent()
    spec.model = "scripted:trip-v2"
    spec.instructions = "You are a careful travel agent."
    spec.on_agent_drift = policy
    return spec


async def list_ids(console: Console, **params: str) -> list[list[str]]:
    pages, token = [], ""
    while True:
        status, body = await console.get(f"{API}/sessions", params={**params, "page_token": token})
        assert status == 200, body
        pages.append([s["session_id"] for s in body["sessions"]])
        token = body["next_page_token"]
        if not token:
            return pages


async def test_the_id_filter_is_a_prefix_paged_like_the_list(console: Console) -> None:
    for sid in ("trip-1", "trip-2", "trip-10", "trips", "atrip"):
        await console.finished_trip(sid)
    await console.paused_refund("trip-refund")
    assert await list_ids(console, session_id_prefix="trip-", page_size="2") == [
        ["trip-1", "trip-10"],
        ["trip-2", "trip-refund"],
    ]
    assert await list_ids(console, session_id_prefix="trip") == [
        ["trip-1", "trip-10", "trip-2", "trip-refund", "trips"]
    ]
    assert await list_ids(console, session_id_prefix="trip-1") == [["trip-1", "trip-10"]]
    assert await list_ids(console, session_id_prefix="trip", status="awaiting-approval") == [
        ["trip-refund"]
    ]
    assert await list_ids(console, session_id_prefix="nobody") == [[]]
    status, body = await console.get(f"{API}/sessions", params={"session_id_prefix": "trip 1"})
    body = assert_error(status, body, 400, "INVALID_ARGUMENT", "INVALID_SESSION_ID")
    assert body["metadata"]["field"] == "session_id_prefix"


async def test_a_warned_resume_shows_in_the_summary_and_the_checkpoint(console: Console) -> None:
    await crashed_trip(console, "drift-1")
    await console.finished_trip("calm-1")
    log = await console.app.run("drift-1", agent=drifted_agent(), tools=SKY, resume=True)
    assert log.types[:2] == ["run.start", "agent.drift"] and log.done is not None

    status, body = await console.get(f"{API}/sessions")
    by_id = {s["session_id"]: s for s in body["sessions"]}
    assert by_id["calm-1"].get("last_drift") is None
    want = {
        "model_from": "scripted:trip",
        "model_to": "scripted:trip-v2",
        "instructions_changed": True,
        "tools_added": [],
        "tools_removed": [],
        "tools_changed": [],
        "refused": False,
    }
    assert by_id["drift-1"]["last_drift"] == want
    status, body = await console.get(f"{API}/sessions/drift-1")
    assert status == 200 and body["checkpoint"]["last_drift"] == want


async def test_a_refused_resume_is_an_event_of_the_session_and_changes_nothing_else(
    console: Console,
) -> None:
    await crashed_trip(console, "strict-1")
    status, before = await console.get(f"{API}/sessions/strict-1")
    status, history_before = await console.get(f"{API}/sessions/strict-1/history")
    body = json.loads(json.dumps({"agent": _json(drifted_agent(pb.AGENT_DRIFT_POLICY_ERROR))}))
    status, answer = await console.post(f"{API}/sessions/strict-1/resume", body)
    answer = assert_error(status, answer, 409, "FAILED_PRECONDITION", "AGENT_DRIFT")
    assert answer["metadata"]["model_to"] == "scripted:trip-v2"
    status, after = await console.get(f"{API}/sessions/strict-1")
    assert after == before  # the checkpoint, its version and updated time as they were
    status, history = await console.get(f"{API}/sessions/strict-1/history")
    assert history == history_before and len(history["entries"]) == 1  # R1's save, no other

    async with console.http.get(f"{console.base}{API}/sessions/strict-1/events") as r:
        frames = [f async for f in sse(r) if f["event"] != "end"]  # "end": the replay's end
    last = frames[-1]
    assert last["event"] == "agent.drift", [f["event"] for f in frames]
    event = json.loads(last["data"])
    assert event["agent_drift"]["refused"] is True
    assert (
        event["agent_drift"]["model_to"] == "scripted:trip-v2"
        and event["agent_drift"]["instructions_changed"]
    )
    assert event["run_id"] == before["checkpoint"]["run_id"]
    assert int(last["id"]) == int(frames[-2]["id"]) + 1

    # The app's own agent resumes: its events come after the refusal, nothing drifted.
    log = await console.app.run("strict-1", agent=trip_agent(), tools=SKY, resume=True)
    assert log.done is not None and "agent.drift" not in log.types
    assert log.events[0].seq == int(last["id"]) + 1
    status, body = await console.get(f"{API}/sessions/strict-1")
    assert body["checkpoint"].get("last_drift") is None


def _json(spec: pb.AgentSpec) -> Any:
    from google.protobuf import json_format

    return json_format.MessageToDict(spec, preserving_proto_field_name=True)
