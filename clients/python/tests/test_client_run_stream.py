"""What a run does with streams the null server never sends (through a fake channel)."""

from __future__ import annotations

import grpc
import pytest
from client_fakes import HOLD, FakeAioChannel, FakeChannel
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

from luosho.client import (
    AsyncClient,
    Client,
    IncompleteRunError,
    ToolCallNotFoundError,
)
from luosho.v1 import agent_pb2


def response(type_: str, **payload: object) -> agent_pb2.ExecuteResponse:
    return agent_pb2.ExecuteResponse(
        event=agent_pb2.Event(session_id="s", run_id="r", type=type_, **payload)
    )


RUN_START = response("run.start", run_start=agent_pb2.RunStart())
TOOL_CALL = response(
    "tool.call",
    tool_call=agent_pb2.ToolCallRequested(
        step=1, call=agent_pb2.ToolCall(id="c1", name="t", arguments_json="{}")
    ),
)
RUN_DONE = response(
    "run.done",
    run_done=agent_pb2.RunDone(
        finish_reason=agent_pb2.FINISH_REASON_AWAITING_APPROVAL,
        status=agent_pb2.CHECKPOINT_STATUS_AWAITING_APPROVAL,
        approval_id="a1",
        step_index=2,
        message_count=5,
        usage=agent_pb2.Usage(prompt_tokens=10, completion_tokens=2, total_tokens=12),
    ),
)


def aio_error(code: grpc.StatusCode, reason: str) -> grpc.aio.AioRpcError:
    detail = any_pb2.Any()
    detail.Pack(error_details_pb2.ErrorInfo(reason=reason, domain="luosho.dev"))
    status = status_pb2.Status(code=code.value[0], message="gone", details=[detail])
    trailing = grpc.aio.Metadata(("grpc-status-details-bin", status.SerializeToString()))
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), trailing, "gone")


async def test_unknown_event_types_pass_through_untouched() -> None:
    delta = response("text.delta")
    approval = response("approval.requested")
    channel = FakeAioChannel([RUN_START, delta, approval, RUN_DONE])
    async with AsyncClient(channel=channel) as client:
        run = client.execute("s", "hi")
        seen = [event async for event in run]
        result = await run

    assert [e.type for e in seen] == ["run.start", "text.delta", "approval.requested", "run.done"]
    assert seen[1] == delta.event and result.events == seen
    assert (result.finish_reason, result.status, result.approval_id) == (
        "awaiting_approval",
        "awaiting_approval",
        "a1",
    )
    assert (result.step_index, result.message_count, result.usage.total_tokens) == (2, 5, 12)


@pytest.mark.parametrize("stream", [[], [RUN_START]], ids=["empty", "no-run-done"])
async def test_execute_stream_without_run_done_raises(stream: list) -> None:
    async with AsyncClient(channel=FakeAioChannel(stream)) as client:
        with pytest.raises(IncompleteRunError) as caught:
            await client.execute("s", "hi")
    assert caught.value.metadata["events"] == str(len(stream))


async def test_a_failed_submission_fails_the_run_instead_of_waiting() -> None:
    def refuse(request: agent_pb2.SubmitToolResultRequest) -> None:
        raise aio_error(grpc.StatusCode.NOT_FOUND, "TOOL_CALL_NOT_FOUND")

    channel = FakeAioChannel([RUN_START, TOOL_CALL, HOLD, RUN_DONE], {"SubmitToolResult": refuse})
    async with AsyncClient(channel=channel) as client:
        with pytest.raises(ToolCallNotFoundError):
            await client.execute("s", "hi", tools={"t": lambda args: "ok"})


def test_a_failed_submission_fails_the_run_sync() -> None:
    def refuse(request: agent_pb2.SubmitToolResultRequest) -> None:
        raise aio_error(grpc.StatusCode.NOT_FOUND, "TOOL_CALL_NOT_FOUND")

    def cancelled() -> grpc.RpcError:
        return aio_error(grpc.StatusCode.CANCELLED, "")

    channel = FakeChannel(
        [RUN_START, TOOL_CALL, HOLD, RUN_DONE], {"SubmitToolResult": refuse}, cancelled
    )
    with Client(channel=channel) as client, pytest.raises(ToolCallNotFoundError):
        client.execute("s", "hi", tools={"t": lambda args: "ok"}).result()


async def test_closing_a_run_early_cancels_its_stream() -> None:
    channel = FakeAioChannel([RUN_START, HOLD, RUN_DONE])
    async with AsyncClient(channel=channel) as client:
        async with client.execute("s", "hi") as run:
            first = await anext(run)
        with pytest.raises(RuntimeError, match="no result"):
            await run

    assert first.type == "run.start" and run.result is None


async def test_list_sessions_follows_every_page() -> None:
    pages = {
        "": agent_pb2.ListSessionsResponse(
            sessions=[agent_pb2.SessionSummary(session_id="a")], next_page_token="p2"
        ),
        "p2": agent_pb2.ListSessionsResponse(sessions=[agent_pb2.SessionSummary(session_id="b")]),
    }
    channel = FakeAioChannel([], {"ListSessions": lambda req: pages[req.page_token]})
    async with AsyncClient(channel=channel) as client:
        ids = [s.session_id async for s in client.list_sessions("in_progress", page_size=1)]

    assert ids == ["a", "b"]
    requests = [req for name, req in channel.requests if name == "ListSessions"]
    assert [(r.page_size, r.page_token, r.status) for r in requests] == [
        (1, "", agent_pb2.CHECKPOINT_STATUS_IN_PROGRESS),
        (1, "p2", agent_pb2.CHECKPOINT_STATUS_IN_PROGRESS),
    ]


async def test_unary_wrappers_return_plain_values() -> None:
    checkpoint = agent_pb2.Checkpoint(session_id="s", step_index=3)
    channel = FakeAioChannel(
        [],
        {
            "Cancel": lambda req: agent_pb2.CancelResponse(cancelled=True),
            "DeleteSession": lambda req: agent_pb2.DeleteSessionResponse(deleted=req.keep_history),
            "GetSession": lambda req: agent_pb2.GetSessionResponse(checkpoint=checkpoint),
            "SubmitToolResult": lambda req: agent_pb2.SubmitToolResultResponse(
                outcome=agent_pb2.SUBMIT_OUTCOME_DUPLICATE
            ),
        },
    )
    async with AsyncClient(channel=channel) as client:
        assert await client.cancel("s") is True
        assert await client.delete_session("s", keep_history=True) is True
        assert await client.get_session("s") == checkpoint
        assert await client.submit_tool_result("s", "c1", {"a": [1]}, is_error=True) == "duplicate"

    (submit,) = [req for name, req in channel.requests if name == "SubmitToolResult"]
    assert (submit.result_json, submit.is_error) == ('{"a":[1]}', True)


def test_a_target_or_a_channel_is_required() -> None:
    with pytest.raises(ValueError, match="target"):
        AsyncClient()
    with pytest.raises(ValueError, match="target"):
        Client()


def watched(seq: int, type_: str) -> agent_pb2.WatchResponse:
    return agent_pb2.WatchResponse(event=agent_pb2.Event(session_id="s", seq=seq, type=type_))


async def test_text_deltas_never_move_the_watch_cursor() -> None:
    # text.delta is progress only (seq 0): resuming after it must not go back to 0.
    channel = FakeAioChannel(
        [watched(7, "step.start"), watched(0, "text.delta"), watched(0, "text.delta")]
    )
    async with (
        AsyncClient(channel=channel) as client,
        client.watch("s", after_seq=6, follow=True) as watch,
    ):
        seen = [event.seq async for event in watch]

    assert seen == [7, 0, 0] and watch.last_seq == 7
    ((name, request),) = channel.requests
    assert name == "Watch"
    assert (request.session_id, request.after_seq, request.follow) == ("s", 6, True)


async def test_resolve_and_fork_go_to_their_rpcs() -> None:
    paused = response("run.start", run_start=agent_pb2.RunStart())
    channel = FakeAioChannel(
        [paused, RUN_DONE],
        {"Fork": lambda req: agent_pb2.ForkResponse(session_id=req.new_session_id, step=2)},
    )
    async with AsyncClient(channel=channel) as client:
        run = client.resolve("ap-1", True, note="ok")
        result = await run
        forked = await client.fork("s", 2, new_session_id="s2", append_input="more")

    assert run.session_id == result.session_id == "s"
    assert (forked.session_id, forked.step) == ("s2", 2)
    names = [name for name, _ in channel.requests]
    assert names == ["Resolve", "Fork"]
    resolve = channel.requests[0][1]
    assert (resolve.approval_id, resolve.approved, resolve.note) == ("ap-1", True, "ok")
