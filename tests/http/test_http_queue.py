"""The JSON API and the queue (R69): GET /api/v1/sessions/{id} shows the inputs queued on
a paused session, DELETE /api/v1/sessions/{id}/queue/{request_id} removes one."""

from __future__ import annotations

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.console import Console
from tests.support.harness import error_info, user, users

API = "/api/v1"


async def test_the_queue_over_http(console: Console) -> None:
    await console.paused_refund("refund-q")
    cp = await console.app.get("refund-q")
    request = pb.ExecuteRequest(
        session_id="refund-q",
        input=[user("also this")],
        agent=cp.agent,
        if_busy=pb.IF_BUSY_ENQUEUE,
        request_id="later",
    )
    stream = console.app.stub.Execute(request)
    first = await stream.read()
    assert first.event.type == "input.queued"
    status, body = await console.get(f"{API}/sessions/refund-q")
    assert status == 200
    assert [(q["request_id"], q["if_busy"]) for q in body["queue"]] == [
        ("later", "IF_BUSY_ENQUEUE")
    ]
    status, body = await console.delete(f"{API}/sessions/refund-q/queue/later")
    assert (status, body) == (200, {"removed": True})
    status, body = await console.delete(f"{API}/sessions/refund-q/queue/later")
    assert (status, body) == (200, {"removed": False})
    status, body = await console.delete(f"{API}/sessions/bad%20id!/queue/later")
    assert status == 400 and body["reason"] == "INVALID_SESSION_ID"
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stream.read()
    assert error_info(err.value)[:2] == (grpc.StatusCode.ABORTED, "INPUT_DEQUEUED")
    assert users(await console.app.get("refund-q")) == ["Refund order 42"]
