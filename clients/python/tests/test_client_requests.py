"""What the client sends: agents, input shapes, business state (no server needed)."""

from __future__ import annotations

import pytest

from luosho.client import (
    UNSET,
    Agent,
    Tool,
    ToolResultPatch,
    message_from_dict,
    message_to_dict,
)
from luosho.client._requests import (
    approvals_query,
    execute_request,
    fork_request,
    history_query,
    list_sessions_query,
    normalize_metadata,
    resolve_request,
    resume_request,
    watch_request,
)
from luosho.client._result import build_result
from luosho.v1 import agent_pb2


def test_agent_to_proto() -> None:
    agent = Agent(
        "openai:gpt-4o-mini",
        instructions="Be brief.",
        tools=[
            Tool("search", "Search the web", {"type": "object", "required": ["q"]}, True),
            agent_pb2.ToolSpec(name="raw"),
        ],
        max_steps=5,
        tool_concurrency=2,
        on_agent_drift="error",
        model_settings={"temperature": 0.2},
        tool_timeout_ms=1500,
        approval_timeout_ms=90_000,
    )
    spec = agent.to_proto()

    assert spec.model == "openai:gpt-4o-mini" and spec.instructions == "Be brief."
    assert spec.tools[0] == agent_pb2.ToolSpec(
        name="search",
        description="Search the web",
        input_schema_json='{"type":"object","required":["q"]}',
        needs_approval=True,
    )
    assert spec.tools[1].name == "raw"
    assert (spec.max_steps, spec.tool_concurrency, spec.tool_timeout_ms) == (5, 2, 1500)
    assert spec.approval_timeout_ms == 90_000
    assert spec.on_agent_drift == agent_pb2.AGENT_DRIFT_POLICY_ERROR
    assert spec.model_settings_json == '{"temperature":0.2}'


def test_agent_defaults_leave_optional_fields_unset() -> None:
    spec = Agent("scripted:x").to_proto()

    for name in ("max_steps", "tool_concurrency", "tool_timeout_ms", "approval_timeout_ms"):
        assert not spec.HasField(name)
    assert spec.on_agent_drift == agent_pb2.AGENT_DRIFT_POLICY_WARN
    assert spec.model_settings_json == "" and list(spec.tools) == []
    assert Tool("t").to_proto().input_schema_json == ""


def test_unknown_drift_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="on_agent_drift"):
        Agent("scripted:x", on_agent_drift="loud")  # type: ignore[arg-type]


def test_raw_agent_spec_is_sent_as_is() -> None:
    spec = agent_pb2.AgentSpec(model="scripted:raw", max_steps=0)
    assert execute_request("s", None, agent=spec, business_state=UNSET, request_id="").agent == spec
    assert resume_request("s", agent=None, request_id="r").HasField("agent") is False


@pytest.mark.parametrize(
    ("state", "has", "json"),
    [
        (UNSET, False, ""),
        (None, True, "null"),
        ({"cart": [1, 2]}, True, '{"cart":[1,2]}'),
        ("x", True, '"x"'),
    ],
    ids=["omitted", "none-is-null", "object", "string"],
)
def test_business_state(state: object, has: bool, json: str) -> None:
    request = execute_request("s", "hi", agent=None, business_state=state, request_id="r1")
    assert request.HasField("business_state_json") is has
    assert request.business_state_json == json
    assert request.request_id == "r1"


def test_input_shapes() -> None:
    user = agent_pb2.Message(role=agent_pb2.ROLE_USER, content="hi")
    raw = agent_pb2.Message(role=agent_pb2.ROLE_SYSTEM, content="sys")

    def sent(input: object) -> list[agent_pb2.Message]:
        return list(
            execute_request("s", input, agent=None, business_state=UNSET, request_id="").input
        )

    assert sent("hi") == [user]
    assert sent({"role": "user", "content": "hi"}) == [user]
    assert sent(raw) == [raw]
    assert (
        sent([raw, "hi", {"role": "assistant", "content": "yo"}])[2].role
        == agent_pb2.ROLE_ASSISTANT
    )
    assert sent(None) == []
    with pytest.raises(ValueError, match="role"):
        sent({"role": "robot", "content": "x"})
    with pytest.raises(TypeError):
        sent([42])


def test_message_dicts_round_trip() -> None:
    assistant = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c1", "name": "add", "arguments_json": '{"a":1}'}],
    }
    tool = {
        "role": "tool",
        "content": "3",
        "tool_call_id": "c1",
        "tool_name": "add",
        "is_error": True,
    }
    for message in (assistant, tool):
        assert message_to_dict(message_from_dict(message)) == message
    shorthand = message_from_dict(
        {"role": "assistant", "tool_calls": [{"id": "c", "name": "n", "arguments": {"b": 2}}]}
    )
    assert shorthand.tool_calls[0].arguments_json == '{"b":2}'


def test_metadata_pairs() -> None:
    assert normalize_metadata({"Authorization": "Bearer t"}) == (("authorization", "Bearer t"),)
    assert normalize_metadata([("x-a", "1")]) == (("x-a", "1"),)
    assert normalize_metadata(None) is None


def test_history_limit_is_sent_only_when_given() -> None:
    def request(**kwargs: object) -> agent_pb2.ExecuteRequest:
        return execute_request("s", "hi", agent=None, business_state=UNSET, request_id="", **kwargs)

    assert not request().HasField("history_limit")
    zero = request(history_limit=0)
    assert zero.HasField("history_limit") and zero.history_limit == 0


def test_resolve_request() -> None:
    request = resolve_request(
        "ap-1", False, note="too much", agent=Agent("scripted:x"), request_id="r"
    )
    assert (request.approval_id, request.approved, request.note) == ("ap-1", False, "too much")
    assert request.agent.model == "scripted:x" and request.request_id == "r"
    assert not resolve_request("ap-1", True, note="", agent=None, request_id="").HasField("agent")
    with pytest.raises(ValueError, match="approval_id"):
        resolve_request("", True, note="", agent=None, request_id="")


def test_page_queries_build_each_page() -> None:
    approvals = approvals_query(None, 10)
    assert (approvals.rpc, approvals.items) == ("ListApprovals", "approvals")
    assert approvals.request("t2") == agent_pb2.ListApprovalsRequest(page_size=10, page_token="t2")
    assert approvals_query("s", 5).request("").session_id == "s"

    history = history_query("s", True, 3)
    assert (history.rpc, history.items) == ("History", "entries")
    assert history.request("t") == agent_pb2.HistoryRequest(
        session_id="s", page_size=3, page_token="t", include_checkpoint=True
    )
    with pytest.raises(ValueError, match="status"):
        list_sessions_query("paused", 10)  # refused when called, not when iterated


def fork(**patch: object) -> agent_pb2.ForkRequest:
    args: dict[str, object] = {
        "new_session_id": "",
        "messages": None,
        "business_state": UNSET,
        "tool_result": None,
        "append_input": "",
    }
    return fork_request("s", 2, **{**args, **patch})  # type: ignore[arg-type]


def test_fork_request_without_a_patch() -> None:
    request = fork()
    assert (request.session_id, request.from_step, request.new_session_id) == ("s", 2, "")
    assert request.patch == agent_pb2.ForkPatch()
    assert not request.patch.HasField("business_state_json")
    assert not request.patch.HasField("tool_result")


def test_fork_request_with_every_patch() -> None:
    request = fork(
        new_session_id="s2",
        messages=["hi", {"role": "assistant", "content": "yo"}],
        business_state=None,
        tool_result=ToolResultPatch("c1", {"ok": False}, is_error=True),
        append_input="go on",
    )
    patch = request.patch
    assert request.new_session_id == "s2"
    assert patch.replace_messages and [m.content for m in patch.messages] == ["hi", "yo"]
    assert patch.business_state_json == "null"
    assert patch.tool_result == agent_pb2.ToolResultPatch(
        tool_call_id="c1", result_json='{"ok":false}', is_error=True
    )
    assert patch.append_input == "go on"


def test_fork_tool_result_shapes() -> None:
    def sent(value: object) -> agent_pb2.ToolResultPatch:
        return fork(tool_result=value).patch.tool_result

    assert sent(("c1", 3)) == agent_pb2.ToolResultPatch(tool_call_id="c1", result_json="3")
    assert sent(("c1", "x", True)).is_error
    raw = agent_pb2.ToolResultPatch(tool_call_id="c", result_json="[1]")
    assert sent(raw) == raw
    empty = fork(messages=[]).patch
    assert empty.replace_messages and list(empty.messages) == []
    with pytest.raises(TypeError, match="tool_result"):
        sent("c1")


def test_watch_request() -> None:
    assert watch_request("s", 7, True) == agent_pb2.WatchRequest(
        session_id="s", after_seq=7, follow=True
    )
    with pytest.raises(ValueError, match="after_seq"):
        watch_request("s", -1, False)


def test_run_result_carries_the_requested_approval() -> None:
    approval = agent_pb2.Approval(approval_id="ap-1", session_id="s")
    events = [
        agent_pb2.Event(session_id="s", seq=1, type="run.start"),
        agent_pb2.Event(
            session_id="s",
            seq=2,
            type="approval.requested",
            approval_requested=agent_pb2.ApprovalRequested(approval=approval),
        ),
        agent_pb2.Event(
            session_id="s",
            seq=3,
            type="run.done",
            run_done=agent_pb2.RunDone(
                finish_reason=agent_pb2.FINISH_REASON_AWAITING_APPROVAL,
                status=agent_pb2.CHECKPOINT_STATUS_AWAITING_APPROVAL,
                approval_id="ap-1",
            ),
        ),
    ]
    paused = build_result("", events, empty_means_finished=False)
    assert (paused.session_id, paused.approval_id, paused.approval) == ("s", "ap-1", approval)
    assert paused.finish_reason == "awaiting_approval"

    done = agent_pb2.Event(session_id="s", seq=4, type="run.done", run_done=agent_pb2.RunDone())
    assert build_result("s", [*events[:2], done], empty_means_finished=False).approval is None
