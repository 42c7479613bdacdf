"""Hypothesis-generated requests of every unary and stream RPC against a live daemon on a
file store: every answer is OK or a clean error (a code other than INTERNAL/UNKNOWN with
an ErrorInfo reason), a refused request leaves the store as it was, and the daemon keeps
answering. ``LUOSHOD_FUZZ_EXAMPLES`` sets the number of examples (default 1,000 per test,
derandomized so CI runs the same ones every time)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from luosho.v1 import agent_pb2 as pb
from luosho.v1 import agent_pb2_grpc as pb_grpc
from tests.support.harness import error_info
from tests.support.threaded_daemon import ThreadedDaemon, threaded_daemon

EXAMPLES = int(os.environ.get("LUOSHOD_FUZZ_EXAMPLES", "1000"))
FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
    ],
)
CLEAN = set(grpc.StatusCode) - {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}
MAX_PAYLOAD = 256 * 1024
# gRPC's own receive limit (app.py: ours + 64 KiB): past it the transport answers
# RESOURCE_EXHAUSTED before any handler runs, so without an ErrorInfo.
TRANSPORT_LIMIT = MAX_PAYLOAD + 65536

# -- strategies -------------------------------------------------------------------------------

text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=40)
ids = st.one_of(
    st.sampled_from(["s-1", "fz", "a" * 128, "a" * 129, "-x", "a b", "é", "", "s.fork-1", "0:_.-"]),
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,20}", fullmatch=True),
    text,
)
huge = st.integers(60_000, 70_000).map(lambda n: "c" * n)  # around the codec's 16-bit fields
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), text)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
json_text = st.one_of(
    json_values.map(json.dumps), text, st.sampled_from(["", "{", "NaN", "[1,]", '"\\ud800"'])
)
schemas = st.one_of(
    json_text,
    st.sampled_from(
        [
            '{"type": "object"}',
            '{"type": "nope"}',
            '{"type": 3}',
            '{"required": "x"}',
            '{"$ref": "#/nowhere"}',
            '{"properties": {"a": {"type": "string", "pattern": "("}}}',
            '{"minimum": "x"}',
            "true",
            "[]",
        ]
    ),
)
roles = st.sampled_from(list(pb.Role.values()) + [7, -1])
int32 = st.integers(-(2**31), 2**31 - 1)


@st.composite
def tool_calls(draw: Any) -> pb.ToolCall:
    return pb.ToolCall(
        id=draw(st.one_of(ids, huge)), name=draw(ids), arguments_json=draw(json_text)
    )


@st.composite
def messages(draw: Any) -> pb.Message:
    return pb.Message(
        role=draw(roles),
        content=draw(st.one_of(text, json_text)),
        tool_calls=draw(st.lists(tool_calls(), max_size=2)),
        tool_call_id=draw(st.one_of(ids, huge)),
        tool_name=draw(st.one_of(ids, huge)),
        is_error=draw(st.booleans()),
    )


@st.composite
def agents(draw: Any) -> pb.AgentSpec:
    spec = pb.AgentSpec(
        model=draw(
            st.sampled_from(["", "scripted:echo", "nope:x", "scripted", ":x", "scripted:"]) | text
        ),
        instructions=draw(text),
        tools=[
            pb.ToolSpec(
                name=draw(ids),
                description=draw(text),
                input_schema_json=draw(schemas),
                needs_approval=draw(st.booleans()),
            )
            for _ in range(draw(st.integers(0, 3)))
        ],
        on_agent_drift=draw(st.sampled_from(list(pb.AgentDriftPolicy.values()) + [9])),
        model_settings_json=draw(st.one_of(json_text, st.just('{"script": [{"text": "hi"}]}'))),
    )
    for field in ("max_steps", "tool_concurrency", "tool_timeout_ms"):
        if draw(st.booleans()):
            setattr(spec, field, draw(int32))
    if draw(st.booleans()):
        spec.approval_timeout_ms = draw(st.integers(-(2**63), 2**63 - 1))
    return spec


optional_agent = st.one_of(st.just({}), agents().map(lambda a: {"agent": a}))
page_tokens = st.one_of(text, st.sampled_from(["", "bz", "bzA", "czE", "o5"]))


@st.composite
def fork_patches(draw: Any) -> pb.ForkPatch:
    patch = pb.ForkPatch(
        replace_messages=draw(st.booleans()),
        messages=draw(st.lists(messages(), max_size=2)),
        append_input=draw(text),
    )
    if draw(st.booleans()):
        patch.business_state_json = draw(json_text)
    if draw(st.booleans()):
        patch.tool_result.CopyFrom(
            pb.ToolResultPatch(
                tool_call_id=draw(ids), result_json=draw(json_text), is_error=draw(st.booleans())
            )
        )
    return patch


@st.composite
def executes(draw: Any) -> pb.ExecuteRequest:
    request = pb.ExecuteRequest(
        session_id=draw(ids),
        input=draw(st.lists(messages(), max_size=3)),
        request_id=draw(text),
        **draw(optional_agent),
    )
    if draw(st.booleans()):
        request.business_state_json = draw(json_text)
    if draw(st.booleans()):
        request.history_limit = draw(int32)
    return request


def rpc(name: str, strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[tuple[str, Any]]:
    return strategy.map(lambda request: (name, request))


unary_requests = st.one_of(
    rpc(
        "SubmitToolResult",
        st.builds(
            pb.SubmitToolResultRequest,
            session_id=ids,
            tool_call_id=ids,
            result_json=json_text,
            is_error=st.booleans(),
        ),
    ),
    rpc("Cancel", st.builds(pb.CancelRequest, session_id=ids)),
    rpc("GetSession", st.builds(pb.GetSessionRequest, session_id=ids)),
    rpc(
        "ListSessions",
        st.builds(
            pb.ListSessionsRequest,
            status=st.integers(-1, 5),
            page_size=int32,
            page_token=page_tokens,
        ),
    ),
    rpc(
        "DeleteSession",
        st.builds(pb.DeleteSessionRequest, session_id=ids, keep_history=st.booleans()),
    ),
    rpc(
        "ListApprovals",
        st.builds(pb.ListApprovalsRequest, session_id=ids, page_size=int32, page_token=page_tokens),
    ),
    rpc(
        "History",
        st.builds(
            pb.HistoryRequest,
            session_id=ids,
            include_checkpoint=st.booleans(),
            page_size=int32,
            page_token=page_tokens,
        ),
    ),
    rpc(
        "Fork",
        st.builds(
            pb.ForkRequest,
            session_id=ids,
            from_step=int32,
            new_session_id=ids,
            patch=fork_patches(),
        ),
    ),
    rpc("Compare", st.builds(pb.CompareRequest, session_id_a=ids, session_id_b=ids)),
)
stream_requests = st.one_of(
    rpc("Execute", executes()),
    rpc(
        "Resume",
        st.builds(
            lambda sid, rid, a: pb.ResumeRequest(session_id=sid, request_id=rid, **a),
            ids,
            text,
            optional_agent,
        ),
    ),
    rpc(
        "Resolve",
        st.builds(
            lambda aid, ok, note, a: pb.ResolveRequest(
                approval_id=aid, approved=ok, note=note, **a
            ),
            ids,
            st.booleans(),
            text,
            optional_agent,
        ),
    ),
    rpc("Watch", st.builds(pb.WatchRequest, session_id=ids, after_seq=st.integers(0, 2**64 - 1))),
)


# -- the daemon -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadedDaemon]:
    # SQLite: the saves go through the binary codec, where a too-long field would fail.
    path: Path = tmp_path_factory.mktemp("fuzz") / "fuzz.db"
    with threaded_daemon(
        store=f"sqlite:///{path}", tool_timeout_s=0.5, max_payload_bytes=MAX_PAYLOAD
    ) as d:
        yield d


@pytest.fixture(scope="module")
def stub(daemon: ThreadedDaemon) -> Iterator[pb_grpc.AgentServiceStub]:
    with grpc.insecure_channel(daemon.address) as channel:
        # One session the requests can hit: finished, with history.
        list(
            pb_grpc.AgentServiceStub(channel).Execute(
                pb.ExecuteRequest(
                    session_id="s-1",
                    input=[pb.Message(role=pb.ROLE_USER, content="hi")],
                    agent=pb.AgentSpec(model="scripted:echo"),
                )
            )
        )
        yield pb_grpc.AgentServiceStub(channel)


def snapshot(stub: pb_grpc.AgentServiceStub) -> list[tuple[str, int, int]]:
    sessions = stub.ListSessions(pb.ListSessionsRequest(page_size=1000)).sessions
    return [(s.session_id, s.status, s.message_count) for s in sessions]


def check(stub: pb_grpc.AgentServiceStub, rpc: str, message: Any) -> None:
    before = snapshot(stub)
    try:
        answer = getattr(stub, rpc)(message, timeout=20)
        if not hasattr(answer, "ByteSize"):  # a stream: read it all
            list(answer)
    except grpc.RpcError as err:
        code, reason, _ = error_info(err)  # type: ignore[arg-type]
        assert code in CLEAN, f"{rpc} answered {code.name}: {err.details()}"
        if code is grpc.StatusCode.RESOURCE_EXHAUSTED and message.ByteSize() > TRANSPORT_LIMIT:
            return
        assert reason, f"{rpc} answered {code.name} without an ErrorInfo reason: {err.details()}"
        if code is grpc.StatusCode.INVALID_ARGUMENT:
            assert snapshot(stub) == before, f"{rpc} was refused ({reason}) but changed the store"


@FUZZ
@given(request=unary_requests)
def test_unary_rpcs_answer_cleanly(
    stub: pb_grpc.AgentServiceStub, request: tuple[str, Any]
) -> None:
    check(stub, *request)


@FUZZ
@given(request=stream_requests)
def test_stream_rpcs_answer_cleanly(
    stub: pb_grpc.AgentServiceStub, request: tuple[str, Any]
) -> None:
    check(stub, *request)


@pytest.mark.parametrize("where", ["tool_call_id", "tool_name", "call id"])
def test_tool_refs_beyond_the_codec_are_refused(stub: pb_grpc.AgentServiceStub, where: str) -> None:
    """Found by the fuzzing above: a 70 000-character tool call id reached the SQLite
    codec (16-bit lengths) and failed the save with INTERNAL."""
    big = "c" * 70_000
    call = pb.ToolCall(id=big if where == "call id" else "c1", name="t", arguments_json="{}")
    result = pb.Message(
        role=pb.ROLE_TOOL,
        content="1",
        tool_call_id=big if where == "tool_call_id" else "c1",
        tool_name=big if where == "tool_name" else "t",
    )
    request = pb.ExecuteRequest(
        session_id="huge-ref",
        input=[
            pb.Message(role=pb.ROLE_USER, content="hi"),
            pb.Message(role=pb.ROLE_ASSISTANT, tool_calls=[call]),
            result,
        ],
        agent=pb.AgentSpec(model="scripted:echo"),
    )
    with pytest.raises(grpc.RpcError) as err:
        list(stub.Execute(request))
    code, reason, metadata = error_info(err.value)  # type: ignore[arg-type]
    assert (code, reason, metadata["limit"]) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_MESSAGE",
        "1024",
    )


def test_daemon_still_serves_after_fuzzing(
    daemon: ThreadedDaemon, stub: pb_grpc.AgentServiceStub
) -> None:
    with grpc.insecure_channel(daemon.address) as channel:
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
    assert health.status == health_pb2.HealthCheckResponse.SERVING
    agent = pb.AgentSpec(model="scripted:echo")
    list(
        stub.Execute(
            pb.ExecuteRequest(
                session_id="after-fuzz",
                input=[pb.Message(role=pb.ROLE_USER, content="hi")],
                agent=agent,
            )
        )
    )
    assert (
        stub.GetSession(pb.GetSessionRequest(session_id="after-fuzz"))
        .checkpoint.messages[-1]
        .content
        == "hi"
    )
