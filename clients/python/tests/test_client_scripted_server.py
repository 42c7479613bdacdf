"""The blocking client against a server the test plays step by step (``grpc_testing``):
what a real daemon does not do on demand, in the order the test chooses.

``grpc_testing.channel`` is a channel whose other end is the test itself: the client's
call waits until the test takes it (``take_unary_stream``), sends the events it picks and
ends the stream with any status and trailing metadata, while the client runs in a thread
of its own. So these tests can break a stream after some events, answer with an ErrorInfo
in the trailers, or end a call with DEADLINE_EXCEEDED, and check what the client did at
each step: which request each attempt sent, what it delivered (once each, in order),
what it submitted, what it raised.

A stream the test ends with an error drops what the client has not read yet (as a
connection that breaks does), so before such an ending the test waits until the client
has taken the events it means to have delivered (``Reader.took``).
"""

from __future__ import annotations

import concurrent.futures
import json
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import grpc
import grpc_testing
import pytest
from client_scripts import scripted, text
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

from luosho.client import (
    BudgetExceeded,
    Client,
    LeaseLostError,
    LuoshoError,
    ProviderError,
    RetryPolicy,
    ShuttingDownError,
    Usage,
)
from luosho.v1 import agent_pb2 as pb

SERVICE = pb.DESCRIPTOR.services_by_name["AgentService"]
EXECUTE = SERVICE.methods_by_name["Execute"]
SUBMIT = SERVICE.methods_by_name["SubmitToolResult"]
GET_SESSION = SERVICE.methods_by_name["GetSession"]
AGENT = scripted(text("never run: the test is the server"))
# No waiting between attempts unless the daemon's answer asks for it (retry_after_s).
RETRY = RetryPolicy(max_attempts=3, initial_backoff=0, max_backoff=0, jitter=0)
WAIT_S = 10
# The client asks a channel to report its state before a retry; grpc_testing's cannot
# (NotImplementedError, which the client expects), and grpc's half-made ready-future then
# says so again when it is collected. Only that message is silenced here.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <function _ChannelReadyFuture.__del__"
    ":pytest.PytestUnraisableExceptionWarning"
)


def trailers(
    code: grpc.StatusCode, reason: str, message: str, **metadata: str
) -> tuple[tuple[str, bytes], ...]:
    """The trailing metadata of a daemon's error: a google.rpc.Status with one ErrorInfo."""
    detail = any_pb2.Any()
    detail.Pack(error_details_pb2.ErrorInfo(reason=reason, domain="luosho.dev", metadata=metadata))
    status = status_pb2.Status(code=code.value[0], message=message, details=[detail])
    return (("grpc-status-details-bin", status.SerializeToString()),)


def event(seq: int, type_: str, *, replayed: bool = False, **payload: Any) -> pb.ExecuteResponse:
    return pb.ExecuteResponse(
        event=pb.Event(
            session_id="s", run_id="r1", seq=seq, type=type_, replayed=replayed, **payload
        )
    )


def done(seq: int, final_text: str, *, replayed: bool = False) -> pb.ExecuteResponse:
    return event(seq, "run.done", replayed=replayed, run_done=pb.RunDone(final_text=final_text))


def tool_call(seq: int, call_id: str, *, replayed: bool = False) -> pb.ExecuteResponse:
    call = pb.ToolCall(id=call_id, name="add", arguments_json=json.dumps({"a": 2, "b": 3}))
    return event(
        seq, "tool.call", replayed=replayed, tool_call=pb.ToolCallRequested(step=1, call=call)
    )


@pytest.fixture
def channel() -> grpc_testing.Channel:
    return grpc_testing.channel([SERVICE], grpc_testing.strict_real_time())


def in_thread(fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future[Any]:
    """Runs one of the client's blocking calls in a thread while the test serves it. A
    daemon thread: a client left waiting by a failed test does not hold pytest up."""
    future: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def work() -> None:
        try:
            future.set_result(fn(*args))
        except BaseException as e:  # handed to the test, which raises it
            future.set_exception(e)

    threading.Thread(target=work, name="client", daemon=True).start()
    return future


class Reader:
    """Reads a run in the client's thread, handing each event to the test as it is taken."""

    def __init__(self, run: Any) -> None:
        self.run = run
        self._taken: queue.Queue[pb.Event] = queue.Queue()
        self.outcome = in_thread(self._read)

    def _read(self) -> Any:
        for e in self.run:
            self._taken.put(e)
        return self.run.result()

    def took(self, *seqs: int) -> None:
        """Wait until the client has delivered the events ``seqs``, in that order."""
        for seq in seqs:
            assert self._taken.get(timeout=WAIT_S).seq == seq

    def result(self) -> Any:
        return self.outcome.result(WAIT_S)


def take_execute(channel: grpc_testing.Channel) -> tuple[dict[str, str], pb.ExecuteRequest, Any]:
    metadata, request, rpc = channel.take_unary_stream(EXECUTE)
    return dict(metadata), request, rpc


def test_a_stream_broken_mid_run_is_retried_with_the_same_request_and_delivers_each_event_once(
    channel: grpc_testing.Channel,
) -> None:
    client = Client(channel=channel, token="t0ken", retry=RETRY)
    reader = Reader(client.execute("s", "hi", agent=AGENT))
    first_md, first, rpc = take_execute(channel)
    for response in (event(1, "run.start"), event(2, "step.start"), event(3, "model.turn")):
        rpc.send_response(response)
    reader.took(1, 2, 3)
    rpc.terminate(
        trailers(grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN", "draining"),
        grpc.StatusCode.UNAVAILABLE,
        "draining",
    )

    # The retry: the same request (its request_id too, so the daemon applies it once) with
    # the same credentials; the daemon replays what the run already streamed, then goes on.
    again_md, again, rpc = take_execute(channel)
    assert again == first and first.request_id, "a retry sends the very same request"
    assert first_md["authorization"] == again_md["authorization"] == "Bearer t0ken"
    for response in (
        event(1, "run.start", replayed=True),
        event(2, "step.start", replayed=True),
        event(3, "model.turn", replayed=True),
        event(4, "step.done"),
        done(5, "fine"),
    ):
        rpc.send_response(response)
    rpc.terminate((), grpc.StatusCode.OK, "")

    reader.took(4, 5)  # what the first attempt delivered is not delivered again
    outcome = reader.result()
    assert [(e.seq, e.type, e.replayed) for e in outcome.events] == [
        (1, "run.start", False),
        (2, "step.start", False),
        (3, "model.turn", False),
        (4, "step.done", False),
        (5, "run.done", False),
    ]
    assert outcome.final_text == "fine" and outcome.attempts == 2 == reader.run.attempts


def test_an_error_after_events_raises_the_typed_error_with_its_trailers_and_keeps_the_events(
    channel: grpc_testing.Channel,
) -> None:
    client = Client(channel=channel, retry=RETRY)
    reader = Reader(client.execute("s", "hi", agent=AGENT))
    _, _, rpc = take_execute(channel)
    rpc.send_response(event(1, "run.start"))
    rpc.send_response(event(2, "step.start"))
    reader.took(1, 2)
    rpc.terminate(
        trailers(
            grpc.StatusCode.ABORTED,
            "LEASE_LOST",
            "daemon-b holds the session now",
            holder="daemon-b",
            fencing_token="7",
        ),
        grpc.StatusCode.ABORTED,
        "the status details, which the ErrorInfo's Status message replaces",
    )

    with pytest.raises(LeaseLostError) as err:
        reader.result()
    e = err.value
    assert (e.code, e.reason, e.message) == (
        grpc.StatusCode.ABORTED,
        "LEASE_LOST",
        "daemon-b holds the session now",
    )
    assert e.metadata == {"holder": "daemon-b", "fencing_token": "7"}
    assert isinstance(e.__cause__, grpc.RpcError)
    # The daemon's answer, not a failure of the connection: never sent again.
    assert reader.run.attempts == 1
    assert [x.type for x in reader.run.events] == ["run.start", "step.start"]


def test_a_retry_waits_the_retry_after_the_daemon_named(channel: grpc_testing.Channel) -> None:
    client = Client(channel=channel, retry=RETRY)
    reader = Reader(client.execute("s", "hi", agent=AGENT))
    _, _, rpc = take_execute(channel)
    rpc.terminate(
        trailers(
            grpc.StatusCode.UNAVAILABLE,
            "PROVIDER_ERROR",
            "the model is overloaded",
            retry_after_s="0.4",
        ),
        grpc.StatusCode.UNAVAILABLE,
        "",
    )
    ended = time.monotonic()
    _, _, rpc = take_execute(channel)
    waited = time.monotonic() - ended
    assert waited >= 0.4, (
        f"the retry came after {waited:.3f}s, before the 0.4s the daemon asked for"
    )
    rpc.send_response(done(1, "after the wait"))
    rpc.terminate((), grpc.StatusCode.OK, "")
    assert reader.result().final_text == "after the wait"


def test_provider_errors_that_never_end_give_up_after_max_attempts_with_the_last_error(
    channel: grpc_testing.Channel,
) -> None:
    client = Client(channel=channel, retry=RETRY)
    reader = Reader(client.execute("s", "hi", agent=AGENT))
    for attempt in range(1, RETRY.max_attempts + 1):
        _, _, rpc = take_execute(channel)
        # A run.start each time, but no model.turn or tool.result: no progress.
        rpc.send_response(event(attempt, "run.start"))
        reader.took(attempt)
        rpc.terminate(
            trailers(
                grpc.StatusCode.UNAVAILABLE, "PROVIDER_ERROR", f"attempt {attempt}", status="503"
            ),
            grpc.StatusCode.UNAVAILABLE,
            "",
        )
    with pytest.raises(ProviderError) as err:
        reader.result()
    assert err.value.message == f"attempt {RETRY.max_attempts}" and err.value.status == 503
    assert reader.run.attempts == RETRY.max_attempts


def test_deadline_exceeded_is_raised_as_it_came_and_not_retried(
    channel: grpc_testing.Channel,
) -> None:
    client = Client(channel=channel, retry=RETRY)
    reader = Reader(client.execute("s", "hi", agent=AGENT))
    _, _, rpc = take_execute(channel)
    rpc.terminate((), grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded")
    with pytest.raises(LuoshoError) as err:
        reader.result()
    assert type(err.value) is LuoshoError
    assert (err.value.code, err.value.reason, err.value.message) == (
        grpc.StatusCode.DEADLINE_EXCEEDED,
        "",
        "Deadline Exceeded",
    )
    assert reader.run.attempts == 1

    # A unary call too: GetSession ended by its deadline is the same plain error.
    got = in_thread(client.get_session, "s")
    _, request, rpc = channel.take_unary_unary(GET_SESSION)
    assert request.session_id == "s"
    rpc.terminate(
        pb.GetSessionResponse(), (), grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded"
    )
    with pytest.raises(LuoshoError) as err:
        got.result(WAIT_S)
    assert type(err.value) is LuoshoError and err.value.code == grpc.StatusCode.DEADLINE_EXCEEDED


def test_a_transport_failure_is_retried_only_before_the_attempts_first_event(
    channel: grpc_testing.Channel,
) -> None:
    client = Client(channel=channel, retry=RETRY)
    reader = Reader(client.execute("s", "hi", agent=AGENT))
    # No event yet: the request may never have arrived, so it is sent again.
    _, _, rpc = take_execute(channel)
    rpc.terminate((), grpc.StatusCode.INTERNAL, "stream reset")
    # After an event, the same failure is raised, not retried.
    _, _, rpc = take_execute(channel)
    rpc.send_response(event(1, "run.start"))
    reader.took(1)
    rpc.terminate((), grpc.StatusCode.INTERNAL, "stream reset")
    with pytest.raises(LuoshoError) as err:
        reader.result()
    assert err.value.code == grpc.StatusCode.INTERNAL and reader.run.attempts == 2


def test_a_tool_asked_again_by_the_retried_stream_runs_once_and_its_result_is_sent_again(
    channel: grpc_testing.Channel,
) -> None:
    ran: list[dict[str, int]] = []

    def add(args: dict[str, int]) -> int:
        ran.append(args)
        return args["a"] + args["b"]

    client = Client(channel=channel, retry=RETRY)
    reader = Reader(client.execute("s", "hi", agent=AGENT, tools={"add": add}))

    _, _, stream = take_execute(channel)
    stream.send_response(event(1, "run.start"))
    stream.send_response(tool_call(2, "c-1"))
    reader.took(1, 2)
    # The client answers while the stream stays open.
    _, submitted, rpc = channel.take_unary_unary(SUBMIT)
    assert (submitted.session_id, submitted.tool_call_id, json.loads(submitted.result_json)) == (
        "s",
        "c-1",
        5,
    )
    rpc.terminate(
        pb.SubmitToolResultResponse(outcome=pb.SUBMIT_OUTCOME_ACCEPTED), (), grpc.StatusCode.OK, ""
    )
    # The daemon goes away before it recorded the result: the retried stream (a fresh run
    # of the session, new seqs) asks for the same call again.
    stream.terminate(
        trailers(grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN", "restarting"),
        grpc.StatusCode.UNAVAILABLE,
        "",
    )

    _, _, stream = take_execute(channel)
    stream.send_response(event(3, "run.start"))
    stream.send_response(tool_call(4, "c-1"))
    reader.took(3, 4)
    _, again, rpc = channel.take_unary_unary(SUBMIT)
    assert again == submitted, "the result computed the first time is sent again"
    rpc.terminate(
        pb.SubmitToolResultResponse(outcome=pb.SUBMIT_OUTCOME_ACCEPTED), (), grpc.StatusCode.OK, ""
    )
    stream.send_response(event(5, "tool.result"))
    stream.send_response(done(6, "five"))
    stream.terminate((), grpc.StatusCode.OK, "")

    outcome = reader.result()
    assert ran == [{"a": 2, "b": 3}], "the tool ran once across both attempts"
    assert [e.type for e in outcome.events] == [
        "run.start",
        "tool.call",
        "run.start",
        "tool.call",
        "tool.result",
        "run.done",
    ]
    assert outcome.final_text == "five" and outcome.attempts == 2


def test_shutting_down_without_retries_is_raised_typed(channel: grpc_testing.Channel) -> None:
    client = Client(channel=channel, retry=None)
    reader = Reader(client.execute("s", "hi", agent=AGENT))
    _, _, rpc = take_execute(channel)
    rpc.send_response(event(1, "run.start"))
    reader.took(1)
    rpc.terminate(
        trailers(grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN", "the daemon is draining"),
        grpc.StatusCode.UNAVAILABLE,
        "",
    )
    with pytest.raises(ShuttingDownError) as err:
        reader.result()
    assert err.value.message == "the daemon is draining" and reader.run.attempts == 1


def test_a_run_a_limit_stopped_gives_its_typed_finish_reason_and_budget_exceeded(
    channel: grpc_testing.Channel,
) -> None:
    client = Client(channel=channel, retry=RETRY)
    reader = Reader(client.execute("s", "hi", agent=AGENT))
    _, _, rpc = take_execute(channel)
    tripped = pb.BudgetExceeded(
        scope="ancestor",
        limit="cost_usd",
        value=1.0,
        used=0.75,
        worst_case=0.5,
        usage=pb.Usage(prompt_tokens=900, completion_tokens=40, cost_usd=0.75, reasoning_tokens=9),
        path=["researcher"],
    )
    for response in (
        event(1, "run.start"),
        event(2, "budget.exceeded", budget_exceeded=tripped),
        event(
            3,
            "run.done",
            run_done=pb.RunDone(
                finish_reason=pb.FINISH_REASON_BUDGET_EXCEEDED,
                status=pb.CHECKPOINT_STATUS_IN_PROGRESS,
                usage=pb.Usage(cost_usd=0.75, cached_input_tokens=300),
            ),
        ),
    ):
        rpc.send_response(response)
    rpc.terminate((), grpc.StatusCode.OK, "")
    outcome = reader.result()
    assert (outcome.finish_reason, outcome.status) == ("budget_exceeded", "in_progress")
    assert outcome.usage.cached_input_tokens == 300
    assert outcome.budget_exceeded == BudgetExceeded(
        scope="ancestor",
        limit="cost_usd",
        value=1.0,
        used=0.75,
        worst_case=0.5,
        usage=Usage(prompt_tokens=900, completion_tokens=40, cost_usd=0.75, reasoning_tokens=9),
        path=("researcher",),
    )
    assert [e.type for e in outcome.events] == ["run.start", "budget.exceeded", "run.done"]


def test_a_run_past_its_deadline_gives_deadline_exceeded(channel: grpc_testing.Channel) -> None:
    client = Client(channel=channel, retry=RETRY)
    reader = Reader(client.execute("s", "hi", agent=AGENT))
    _, _, rpc = take_execute(channel)
    tripped = pb.BudgetExceeded(scope="run", limit="wall_clock_ms", value=60000, used=60250)
    rpc.send_response(event(1, "budget.exceeded", budget_exceeded=tripped))
    rpc.send_response(
        event(2, "run.done", run_done=pb.RunDone(finish_reason=pb.FINISH_REASON_DEADLINE_EXCEEDED))
    )
    rpc.terminate((), grpc.StatusCode.OK, "")
    outcome = reader.result()
    assert outcome.finish_reason == "deadline_exceeded"
    assert outcome.budget_exceeded is not None
    assert (outcome.budget_exceeded.limit, outcome.budget_exceeded.used) == ("wall_clock_ms", 60250)
