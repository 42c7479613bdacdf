"""Bad input gets INVALID_ARGUMENT (or RESOURCE_EXHAUSTED) with a specific reason, and
changes nothing."""

from __future__ import annotations

import json

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.server.app import Config
from tests.support.harness import Harness, agent, error_info, user

pytestmark = pytest.mark.asyncio

GOOD = agent([{"text": "ok"}])


def spec_with(**changes) -> pb.AgentSpec:
    a = pb.AgentSpec()
    a.CopyFrom(GOOD)
    for k, v in changes.items():
        if k == "tools":
            del a.tools[:]
            a.tools.extend(v)
        else:
            setattr(a, k, v)
    return a


CASES = {
    "session id with a space": (dict(session_id="a b"), "INVALID_SESSION_ID"),
    "empty session id": (dict(session_id=""), "INVALID_SESSION_ID"),
    "session id too long": (dict(session_id="s" * 129), "INVALID_SESSION_ID"),
    "session id starting with a dot": (dict(session_id=".hidden"), "INVALID_SESSION_ID"),
    "business state not JSON": (dict(business_state_json="{nope"), "INVALID_JSON"),
    "settings not JSON": (dict(agent=spec_with(model_settings_json="[1,")), "INVALID_JSON"),
    "settings not an object": (dict(agent=spec_with(model_settings_json="[1]")), "INVALID_JSON"),
    "schema not JSON": (
        dict(agent=spec_with(tools=[pb.ToolSpec(name="t", input_schema_json="{")])),
        "INVALID_JSON",
    ),
    "schema not a JSON Schema": (
        dict(agent=spec_with(tools=[pb.ToolSpec(name="t", input_schema_json='{"type": 12}')])),
        "INVALID_TOOL_SCHEMA",
    ),
    "duplicate tool names": (
        dict(agent=spec_with(tools=[pb.ToolSpec(name="t"), pb.ToolSpec(name="t")])),
        "DUPLICATE_TOOL_NAME",
    ),
    "bad tool name": (
        dict(agent=spec_with(tools=[pb.ToolSpec(name="no spaces")])),
        "INVALID_TOOL_NAME",
    ),
    "negative max_steps": (dict(agent=spec_with(max_steps=-1)), "INVALID_MAX_STEPS"),
    "zero tool_concurrency": (
        dict(agent=spec_with(tool_concurrency=0)),
        "INVALID_TOOL_CONCURRENCY",
    ),
    "zero tool timeout": (dict(agent=spec_with(tool_timeout_ms=0)), "INVALID_TOOL_TIMEOUT"),
    "unknown drift policy": (
        dict(agent=spec_with(on_agent_drift=9)),
        "INVALID_DRIFT_POLICY",
    ),  # found by fuzzing
    "no model": (dict(agent=spec_with(model="")), "INVALID_MODEL"),
    "model without provider": (dict(agent=spec_with(model="gpt")), "INVALID_MODEL"),
    "unknown provider": (dict(agent=spec_with(model="nope:x")), "UNKNOWN_PROVIDER"),
    "scripted model without script": (
        dict(agent=spec_with(model="scripted:ghost", model_settings_json="")),
        "MODEL_NOT_FOUND",
    ),
    "script not a list": (
        dict(agent=spec_with(model_settings_json='{"script": 3}')),
        "INVALID_SCRIPT",
    ),
    "message without role": (dict(input=[pb.Message(content="x")]), "INVALID_MESSAGE"),
    "tool message not JSON": (
        dict(input=[pb.Message(role=pb.ROLE_TOOL, tool_call_id="c", content="{")]),
        "INVALID_JSON",
    ),
    "no agent for a new session": (dict(agent=None), "AGENT_REQUIRED"),
    "no input for a new session": (
        dict(input=[], agent=spec_with(instructions="")),
        "INPUT_REQUIRED",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
async def test_bad_execute_request_is_refused_and_changes_nothing(h: Harness, case: str) -> None:
    fields, reason = CASES[case]
    req = pb.ExecuteRequest(session_id="bad", input=[user("hi")], agent=GOOD)
    for k, v in fields.items():
        if v is None:
            req.ClearField(k)
        elif k == "input":
            del req.input[:]
            req.input.extend(v)
        elif isinstance(v, pb.AgentSpec):
            req.agent.CopyFrom(v)
        else:
            setattr(req, k, v)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        async for _ in h.stub.Execute(req):
            pass
    code, got, meta = error_info(err.value)
    assert (code, got) == (grpc.StatusCode.INVALID_ARGUMENT, reason), err.value.details()
    listed = await h.stub.ListSessions(pb.ListSessionsRequest())
    assert list(listed.sessions) == []
    assert h.model_calls() == 0


@pytest.fixture
def config(config: Config) -> Config:
    config.max_payload_bytes = 64 * 1024
    return config


async def test_oversized_payload_is_refused_with_the_limit(h: Harness) -> None:
    big = "x" * (70 * 1024)
    log = await h.run("big", big, GOOD)
    code, reason, meta = error_info(log.error)
    assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "PAYLOAD_TOO_LARGE")
    assert meta["limit"] == str(64 * 1024) and int(meta["size"]) > 70 * 1024
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await h.submit("big", "c1", json.dumps(big))
    assert error_info(err.value)[1] == "PAYLOAD_TOO_LARGE"


async def test_bad_unary_requests(h: Harness) -> None:
    async def reason_of(coro) -> tuple[grpc.StatusCode, str]:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await coro
        return error_info(err.value)[:2]

    bad = grpc.StatusCode.INVALID_ARGUMENT
    assert await reason_of(h.submit("s", "c", "not json")) == (bad, "INVALID_JSON")
    assert await reason_of(h.submit("s", "", "1")) == (bad, "INVALID_TOOL_CALL_ID")
    assert await reason_of(h.stub.GetSession(pb.GetSessionRequest(session_id="x/y"))) == (
        bad,
        "INVALID_SESSION_ID",
    )
    assert await reason_of(h.stub.Cancel(pb.CancelRequest())) == (bad, "INVALID_SESSION_ID")
    assert await reason_of(h.stub.ListSessions(pb.ListSessionsRequest(page_token="%%%"))) == (
        bad,
        "INVALID_PAGE_TOKEN",
    )
    assert await reason_of(h.stub.ListSessions(pb.ListSessionsRequest(page_size=-1))) == (
        bad,
        "INVALID_PAGE_SIZE",
    )
    assert await reason_of(h.stub.ListSessions(pb.ListSessionsRequest(status=42))) == (
        bad,
        "INVALID_STATUS",
    )
    assert await reason_of(h.stub.DeleteSession(pb.DeleteSessionRequest(session_id=""))) == (
        bad,
        "INVALID_SESSION_ID",
    )
    assert await reason_of(h.stub.GetSession(pb.GetSessionRequest(session_id="none"))) == (
        grpc.StatusCode.NOT_FOUND,
        "CHECKPOINT_NOT_FOUND",
    )
    resume = await h.run("none", None, resume=True)
    assert error_info(resume.error)[:2] == (grpc.StatusCode.NOT_FOUND, "CHECKPOINT_NOT_FOUND")
