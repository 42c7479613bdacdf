"""The JSON API against a real daemon over real HTTP: every RPC it maps, with bad input
of each kind answered by a clean 4xx carrying the ErrorInfo reason (never a trace)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.config import Secret
from luoshod.http.rpc import CallContext, RpcFailure
from tests.support.console import Console, ConsoleFactory, assert_error

API = "/api/v1"


async def test_list_sessions_pages_and_filters(console: Console) -> None:
    await console.finished_trip("trip-1")
    await console.finished_trip("trip-2")
    await console.paused_refund("refund-1")

    status, body = await console.get(f"{API}/sessions", params={"page_size": "2"})
    assert status == 200
    first = [s["session_id"] for s in body["sessions"]]
    assert len(first) == 2 and body["next_page_token"]
    status, body = await console.get(
        f"{API}/sessions", params={"page_size": "2", "page_token": body["next_page_token"]}
    )
    assert status == 200 and body["next_page_token"] == ""
    assert sorted(first + [s["session_id"] for s in body["sessions"]]) == [
        "refund-1",
        "trip-1",
        "trip-2",
    ]

    status, body = await console.get(f"{API}/sessions", params={"status": "finished"})
    assert status == 200 and sorted(s["session_id"] for s in body["sessions"]) == [
        "trip-1",
        "trip-2",
    ]
    assert body["sessions"][0]["status"] == "CHECKPOINT_STATUS_FINISHED"
    assert body["sessions"][0]["finish_reason"] == "FINISH_REASON_STOP"
    status, body = await console.get(
        f"{API}/sessions", params={"status": "CHECKPOINT_STATUS_AWAITING_APPROVAL"}
    )
    assert [s["session_id"] for s in body["sessions"]] == ["refund-1"] and body["sessions"][0][
        "approval_id"
    ]
    status, body = await console.get(f"{API}/sessions", params={"status": "in-progress"})
    assert status == 200 and body["sessions"] == []


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ({"status": "paused"}, "INVALID_STATUS"),
        ({"page_size": "ten"}, "INVALID_PAGE_SIZE"),
        ({"page_size": "-1"}, "INVALID_PAGE_SIZE"),
        ({"page_size": "99999999999"}, "INVALID_PAGE_SIZE"),
        ({"page_token": "not-a-token"}, "INVALID_PAGE_TOKEN"),
        ({"colour": "red"}, "INVALID_REQUEST"),
    ],
)
async def test_list_sessions_bad_query(
    console: Console, query: dict[str, str], reason: str
) -> None:
    status, body = await console.get(f"{API}/sessions", params=query)
    assert_error(status, body, 400, "INVALID_ARGUMENT", reason)


async def test_get_session(console: Console) -> None:
    await console.finished_trip("trip-1")
    status, body = await console.get(f"{API}/sessions/trip-1")
    assert status == 200
    cp = body["checkpoint"]
    assert cp["session_id"] == "trip-1" and cp["status"] == "CHECKPOINT_STATUS_FINISHED"
    assert [m["role"] for m in cp["messages"]] == [
        "ROLE_SYSTEM",
        "ROLE_USER",
        "ROLE_ASSISTANT",
        "ROLE_TOOL",
        "ROLE_ASSISTANT",
    ]
    assert cp["agent"]["model"] == "scripted:trip"
    assert cp["usage"]["model_calls"] == "2"  # int64 as a string: the proto JSON mapping

    status, body = await console.get(f"{API}/sessions/nobody")
    body = assert_error(status, body, 404, "NOT_FOUND", "CHECKPOINT_NOT_FOUND")
    assert body["metadata"] == {"session_id": "nobody"}
    status, body = await console.get(f"{API}/sessions/bad%20id!")
    assert_error(status, body, 400, "INVALID_ARGUMENT", "INVALID_SESSION_ID")


async def test_history(console: Console) -> None:
    await console.finished_trip("trip-1")
    status, body = await console.get(f"{API}/sessions/trip-1/history", params={"page_size": "2"})
    assert status == 200 and len(body["entries"]) == 2 and body["next_page_token"]
    assert body["entries"][0]["status"] == "CHECKPOINT_STATUS_FINISHED"
    assert body["entries"][0].get("checkpoint") is None
    status, body = await console.get(
        f"{API}/sessions/trip-1/history", params={"include_checkpoint": "true"}
    )
    versions = [int(e["version"]) for e in body["entries"]]
    assert (
        versions == sorted(versions, reverse=True)
        and body["entries"][0]["checkpoint"]["session_id"] == "trip-1"
    )

    status, body = await console.get(
        f"{API}/sessions/trip-1/history", params={"include_checkpoint": "maybe"}
    )
    assert_error(status, body, 400, "INVALID_ARGUMENT", "INVALID_INCLUDE_CHECKPOINT")
    status, body = await console.get(f"{API}/sessions/trip-1/history", params={"page_token": "%%%"})
    assert_error(status, body, 400, "INVALID_ARGUMENT", "INVALID_PAGE_TOKEN")


async def test_fork_and_compare(console: Console) -> None:
    await console.finished_trip("trip-1")
    patch = {
        "tool_result": {"tool_call_id": "call_0_0", "result_json": json.dumps({"sky": "rain"})}
    }
    status, body = await console.post(
        f"{API}/sessions/trip-1/fork", {"from_step": 1, "patch": patch}
    )
    assert status == 200, body
    assert (
        body["session_id"] == "trip-1.fork-1"
        and body["checkpoint"]["status"] == "CHECKPOINT_STATUS_IN_PROGRESS"
    )
    tool = [m for m in body["checkpoint"]["messages"] if m["role"] == "ROLE_TOOL"]
    assert json.loads(tool[0]["content"]) == {"sky": "rain"}
    # lowerCamelCase, the canonical proto JSON names, is read too.
    status, body = await console.post(
        f"{API}/sessions/trip-1/fork", {"fromStep": 1, "newSessionId": "what-if"}
    )
    assert status == 200 and body["session_id"] == "what-if"

    status, body = await console.get(
        f"{API}/compare", params={"session_id_a": "trip-1", "session_id_b": "trip-1.fork-1"}
    )
    assert status == 200
    assert body["diverged_at"] == 1 and len(body["a"]) == 2 and len(body["b"]) == 1
    assert body["drift"]["finish_reason_a"] == "FINISH_REASON_STOP"
    status, body = await console.get(
        f"{API}/compare", params={"session_id_a": "trip-1", "session_id_b": "what-if"}
    )
    assert status == 200 and "diverged_at" in body

    status, body = await console.post(f"{API}/sessions/trip-1/fork", {"from_step": 7})
    body = assert_error(status, body, 404, "NOT_FOUND", "CHECKPOINT_NOT_FOUND")
    assert "1" in body["message"]  # the kept steps are listed
    status, body = await console.post(
        f"{API}/sessions/trip-1/fork", {"from_step": 1, "new_session_id": "what-if"}
    )
    assert_error(status, body, 409, "ALREADY_EXISTS", "SESSION_EXISTS")
    status, body = await console.post(
        f"{API}/sessions/trip-1/fork",
        {
            "from_step": 1,
            "patch": {"tool_result": {"tool_call_id": "call_9_9", "result_json": "{}"}},
        },
    )
    assert status == 400 and body["code"] == "INVALID_ARGUMENT", body
    status, body = await console.post(
        f"{API}/sessions/trip-1/fork", {"from_step": 1, "patch": {"business_state_json": "{nope"}}
    )
    assert_error(status, body, 400, "INVALID_ARGUMENT", "INVALID_JSON")
    status, body = await console.post(f"{API}/sessions/trip-1/fork", {"from_step": "one"})
    assert_error(status, body, 400, "INVALID_ARGUMENT", "INVALID_REQUEST")
    status, body = await console.post(
        f"{API}/sessions/trip-1/fork", {"from_step": 1, "colour": "red"}
    )
    assert_error(status, body, 400, "INVALID_ARGUMENT", "INVALID_REQUEST")
    status, body = await console.post(f"{API}/sessions/trip-1/fork", [1, 2])
    assert_error(status, body, 400, "INVALID_ARGUMENT", "INVALID_REQUEST")
    status, body = await console.post(
        f"{API}/sessions/trip-1/fork", {"session_id": "other", "from_step": 1}
    )
    assert_error(status, body, 400, "INVALID_ARGUMENT", "INVALID_REQUEST")
    status, body = await console.post(
        f"{API}/sessions/trip-1/fork",
        data=b"{not json",
        headers={"Content-Type": "application/json"},
    )
    assert_error(status, body, 400, "INVALID_ARGUMENT", "INVALID_JSON")
    status, body = await console.post(
        f"{API}/sessions/trip-1/fork",
        data=b"from_step=1",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert_error(status, body, 400, "INVALID_ARGUMENT", "UNSUPPORTED_MEDIA_TYPE")

    status, body = await console.get(f"{API}/compare", params={"session_id_a": "trip-1"})
    assert_error(status, body, 400, "INVALID_ARGUMENT", "INVALID_SESSION_ID")
    status, body = await console.get(
        f"{API}/compare", params={"session_id_a": "trip-1", "session_id_b": "nobody"}
    )
    assert_error(status, body, 404, "NOT_FOUND", "CHECKPOINT_NOT_FOUND")


async def test_approvals_list_and_resolve(console: Console) -> None:
    first = await console.paused_refund("refund-1")
    second = await console.paused_refund("refund-2")
    status, body = await console.get(f"{API}/approvals")
    assert status == 200
    assert [a["approval_id"] for a in body["approvals"]] == [first, second]  # oldest first
    a = body["approvals"][0]
    assert a["tool_call"]["name"] == "refund" and json.loads(a["tool_call"]["arguments_json"]) == {
        "order": 42
    }
    status, body = await console.get(f"{API}/approvals", params={"session_id": "refund-2"})
    assert [a["approval_id"] for a in body["approvals"]] == [second]

    # Rejected: the model reads the rejection as the call's result and the run finishes.
    status, lines = await console.post(
        f"{API}/approvals/{first}/resolve", {"approved": False, "note": "no receipt"}
    )
    assert status == 200, lines
    types = [line["event"]["type"] for line in lines]
    assert types[0] == "run.start" and types[-1] == "run.done", types
    result = next(
        line["event"]["tool_result"] for line in lines if line["event"]["type"] == "tool.result"
    )
    assert json.loads(result["result_json"])["note"] == "no receipt"
    assert lines[-1]["event"]["run_done"]["finish_reason"] == "FINISH_REASON_STOP"

    status, body = await console.post(f"{API}/approvals/{first}/resolve", {"approved": True})
    assert_error(status, body, 404, "NOT_FOUND", "APPROVAL_NOT_FOUND")
    status, body = await console.post(f"{API}/approvals/{second}/resolve", {"approved": "yes"})
    assert_error(status, body, 400, "INVALID_ARGUMENT", "INVALID_REQUEST")
    status, body = await console.get(f"{API}/approvals", params={"session_id": "no good"})
    assert_error(status, body, 400, "INVALID_ARGUMENT", "INVALID_SESSION_ID")
    status, body = await console.get(f"{API}/approvals", params={"page_size": "x"})
    assert_error(status, body, 400, "INVALID_ARGUMENT", "INVALID_PAGE_SIZE")
    # Still pending, untouched by the refusals.
    status, body = await console.get(f"{API}/approvals")
    assert [a["approval_id"] for a in body["approvals"]] == [second]


async def test_resolve_approved_streams_until_the_app_answers(console: Console) -> None:
    """Approved, the call goes to the app (here the test, answering over gRPC) while the
    HTTP caller reads the run's events as they come."""
    approval = await console.paused_refund("refund-1")
    async with console.http.post(
        f"{console.base}{API}/approvals/{approval}/resolve",
        json={"approved": True, "note": "ok by Ana"},
    ) as r:
        assert r.status == 200 and r.content_type == "application/x-ndjson"
        seen = []
        async for raw in r.content:
            event = json.loads(raw)["event"]
            seen.append(event["type"])
            if event["type"] == "tool.call":
                await console.app.submit(
                    "refund-1", event["tool_call"]["call"]["id"], '{"refunded": 42}'
                )
    assert seen[0] == "run.start" and "tool.result" in seen and seen[-1] == "run.done", seen
    cp = await console.app.get("refund-1")
    assert (
        cp.status == pb.CHECKPOINT_STATUS_FINISHED
        and cp.messages[-1].content == "Done with the refund."
    )


async def test_a_caller_who_leaves_interrupts_the_run(console: Console) -> None:
    """As with a gRPC disconnect: the run stops at its next boundary, the session stays
    in progress with the approved call unanswered, and is free for the app's Resume."""
    approval = await console.paused_refund("refund-1")
    async with console.http.post(
        f"{console.base}{API}/approvals/{approval}/resolve", json={"approved": True}
    ) as r:
        async for raw in r.content:
            if json.loads(raw)["event"]["type"] == "tool.call":
                break
        r.close()
    await asyncio.wait_for(_until_idle(console, "refund-1"), 10)
    cp = await console.app.get("refund-1")
    assert cp.status == pb.CHECKPOINT_STATUS_IN_PROGRESS
    assert cp.messages[-1].role == pb.ROLE_ASSISTANT  # the approved call has no result yet


async def _until_idle(console: Console, session_id: str) -> None:
    while console.daemon.runs.get(session_id) is not None:
        await asyncio.sleep(0.02)


async def test_resume_and_cancel(console: Console) -> None:
    await console.finished_trip("trip-1")
    status, lines = await console.post(f"{API}/sessions/trip-1/resume")
    assert status == 200 and lines == []  # a finished session: no run
    status, body = await console.post(f"{API}/sessions/nobody/resume", {})
    assert_error(status, body, 404, "NOT_FOUND", "CHECKPOINT_NOT_FOUND")
    status, body = await console.post(f"{API}/sessions/trip-1/cancel")
    assert (status, body) == (200, {"cancelled": False})
    status, body = await console.post(f"{API}/sessions/bad%20id/cancel")
    assert_error(status, body, 400, "INVALID_ARGUMENT", "INVALID_SESSION_ID")

    # A run waiting for a tool: Cancel aborts it (R3) and the stream ends aborted.
    started = asyncio.Event()
    waiting = pb.AgentSpec(
        model="scripted:wait",
        tools=[pb.ToolSpec(name="get_weather")],
        model_settings_json=json.dumps(
            {"script": [{"tool_calls": [{"name": "get_weather", "arguments": {}}]}, {"text": "ok"}]}
        ),
    )
    run = asyncio.create_task(
        console.app.run(
            "trip-2",
            "Plan a day in Lisbon",
            waiting,
            on_event=lambda e: started.set() if e.type == "tool.call" else None,
        )
    )
    await asyncio.wait_for(started.wait(), 10)
    status, body = await console.post(f"{API}/sessions/trip-2/cancel", {})
    assert (status, body) == (200, {"cancelled": True})
    log = await asyncio.wait_for(run, 10)
    assert log.done is not None and log.done.finish_reason == pb.FINISH_REASON_ABORTED


async def test_delete(console: Console) -> None:
    await console.finished_trip("trip-1")
    status, body = await console.delete(f"{API}/sessions/trip-1", params={"keep_history": "true"})
    assert (status, body) == (200, {"deleted": True})
    status, body = await console.get(f"{API}/sessions/trip-1")
    assert status == 404
    status, body = await console.get(f"{API}/sessions/trip-1/history")
    assert status == 200 and body["entries"]  # kept
    status, body = await console.delete(f"{API}/sessions/trip-1")
    assert (status, body) == (200, {"deleted": False})
    status, body = await console.delete(
        f"{API}/sessions/trip-1", params={"keep_history": "perhaps"}
    )
    assert_error(status, body, 400, "INVALID_ARGUMENT", "INVALID_KEEP_HISTORY")


async def test_delete_of_a_busy_session_is_refused(console: Console) -> None:
    approval = await console.paused_refund("refund-1")
    async with console.http.post(
        f"{console.base}{API}/approvals/{approval}/resolve", json={"approved": True}
    ) as r:
        async for raw in r.content:
            if json.loads(raw)["event"]["type"] == "tool.call":
                status, body = await console.delete(f"{API}/sessions/refund-1")
                assert_error(status, body, 409, "ABORTED", "SESSION_BUSY")
                await console.app.submit(
                    "refund-1", json.loads(raw)["event"]["tool_call"]["call"]["id"], "{}"
                )


async def test_payload_limits(make_console: ConsoleFactory) -> None:
    console = await make_console(max_payload_bytes=32 * 1024)
    await console.finished_trip("trip-1")
    # Over the service's limit: its own check answers.
    big = {"from_step": 1, "patch": {"append_input": "x" * 40_000}}
    status, body = await console.post(f"{API}/sessions/trip-1/fork", big)
    body = assert_error(status, body, 413, "RESOURCE_EXHAUSTED", "PAYLOAD_TOO_LARGE")
    assert body["metadata"]["limit"] == str(32 * 1024)
    # Far over it: the HTTP layer stops reading.
    huge = {"from_step": 1, "patch": {"append_input": "x" * 200_000}}
    status, body = await console.post(f"{API}/sessions/trip-1/fork", huge)
    assert_error(status, body, 413, "RESOURCE_EXHAUSTED", "PAYLOAD_TOO_LARGE")


async def test_unknown_routes_and_methods_answer_json(console: Console) -> None:
    status, body = await console.get(f"{API}/nothing-here")
    assert_error(status, body, 404, "NOT_FOUND", "NO_SUCH_ROUTE")
    status, body = await console.post(f"{API}/sessions", {})
    assert_error(status, body, 405, "UNIMPLEMENTED", "METHOD_NOT_ALLOWED")
    status, body = await console.post(f"{API}/sessions/trip-1/fork?from_step=1", {})
    assert_error(status, body, 400, "INVALID_ARGUMENT", "INVALID_REQUEST")


async def test_a_decision_taken_over_http_is_audited_with_its_caller(
    make_console: ConsoleFactory, caplog: pytest.LogCaptureFixture
) -> None:
    """The console's deletes and decisions name their caller in the audit log as gRPC's
    do: the token by the start of its SHA-256 (never the token), and the HTTP peer."""
    console = await make_console(token="s3cret-token", auth_tokens=(Secret("s3cret-token"),))
    await console.finished_trip("trip-1")
    with caplog.at_level(logging.INFO, logger="luoshod.audit"):
        status, body = await console.delete(f"{API}/sessions/trip-1")
    assert (status, body) == (200, {"deleted": True})
    digest = hashlib.sha256(b"s3cret-token").hexdigest()[:8]
    [line] = [r.getMessage() for r in caplog.records if r.name == "luoshod.audit"]
    assert "delete" in line and "trip-1" in line, line
    assert f"by='token sha256:{digest}'" in line and "peer=http:127.0.0.1" in line, line
    assert "s3cret-token" not in line


async def test_a_status_without_error_info_answers_an_enum_reason() -> None:
    """Every answer's reason is an ErrorReason name: a status that carries no ErrorInfo of
    luoshod's (gRPC's own, or one from outside the service) answers INTERNAL, its gRPC code
    kept in ``code``."""

    class Bare(grpc.Status):
        code = grpc.StatusCode.DEADLINE_EXCEEDED
        details = "deadline"
        trailing_metadata = ()

    with pytest.raises(RpcFailure) as caught:
        await CallContext().abort_with_status(Bare())
    body = caught.value.body()
    assert (body["code"], body["reason"], body["message"]) == (
        "DEADLINE_EXCEEDED",
        "INTERNAL",
        "deadline",
    )
    assert "ERROR_REASON_" + body["reason"] in pb.ErrorReason.DESCRIPTOR.values_by_name
