"""Typed errors: the daemon's google.rpc.Status + ErrorInfo, translated at every call site.

The null server fails on purpose for session ids with a known prefix (SCRIPTED_ERRORS in
bench/null_server.py), so translation is tested through real gRPC.
"""

from __future__ import annotations

import socket

import grpc
import pytest
from client_scripts import scripted, text
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

import luosho.client as lc
from luosho.client import AsyncClient, Client
from luosho.client._errors import _ERROR_BY_REASON, from_rpc_error
from luosho.v1.agent_pb2 import ErrorReason

AGENT = scripted(text("never"))


async def test_session_busy_through_grpc(target: str) -> None:
    async with AsyncClient(target) as client:
        with pytest.raises(lc.SessionBusyError) as caught:
            await client.execute("busy-1", "hi", agent=AGENT)

    err = caught.value
    assert (err.code, err.reason) == (grpc.StatusCode.ABORTED, "SESSION_BUSY")
    assert err.metadata == {"session_id": "busy-1"}
    assert err.message == "scripted SESSION_BUSY for session busy-1"
    assert isinstance(err.__cause__, grpc.RpcError)


async def test_errors_while_iterating_are_typed_too(target: str) -> None:
    async with AsyncClient(target) as client:
        with pytest.raises(lc.SessionBusyError):
            async for _ in client.execute("busy-2", "hi", agent=AGENT):
                pass


def test_session_busy_through_grpc_sync(target: str) -> None:
    with Client(target) as client:
        with pytest.raises(lc.SessionBusyError) as caught:
            client.execute("busy-3", "hi", agent=AGENT).result()
        with pytest.raises(lc.SessionBusyError):
            list(client.resume("busy-4"))

    assert caught.value.metadata["session_id"] == "busy-3"


async def test_awaiting_approval_carries_the_approval_id(target: str) -> None:
    async with AsyncClient(target) as client:
        with pytest.raises(lc.SessionAwaitingApprovalError) as caught:
            await client.resume("awaiting-1")

    assert caught.value.code is grpc.StatusCode.FAILED_PRECONDITION
    assert caught.value.approval_id == "appr-1"


async def test_other_invalid_argument_reasons_keep_their_reason(target: str) -> None:
    async with AsyncClient(target) as client:
        with pytest.raises(lc.InvalidArgumentError) as caught:
            await client.execute("invalid-1", "hi", agent=AGENT)

    assert caught.value.reason == "INVALID_SESSION_ID"


async def test_bare_unavailable_status(target: str) -> None:
    async with AsyncClient(target, retry=lc.NO_RETRY) as client:
        run = client.execute("down-1", "hi", agent=AGENT)
        with pytest.raises(lc.UnavailableError) as caught:
            await run

    assert type(caught.value) is lc.UnavailableError
    assert (caught.value.reason, caught.value.metadata) == ("", {})
    assert run.attempts == 1


async def test_r75_unavailable_is_retried_with_the_same_request_id(target: str) -> None:
    policy = lc.RetryPolicy(max_attempts=3, initial_backoff=0, max_backoff=0)
    async with AsyncClient(target, retry=policy) as client:
        run = client.execute("down-1", "hi", agent=AGENT)
        with pytest.raises(lc.UnavailableError):
            await run
    assert run.attempts == 3
    assert len(run.request_id) == 36 and run.request_id[14] == "7"  # a UUIDv7


def test_r75_unavailable_is_retried_sync(target: str) -> None:
    policy = lc.RetryPolicy(max_attempts=2, initial_backoff=0, max_backoff=0)
    with Client(target, retry=policy) as client:
        run = client.execute("down-1", "hi", agent=AGENT, request_id="mine-1")
        with pytest.raises(lc.UnavailableError):
            run.result()
    assert (run.attempts, run.request_id) == (2, "mine-1")


def test_r75_request_ids_are_uuid7_in_time_order() -> None:
    ids = [lc.new_request_id() for _ in range(50)]
    assert len(set(ids)) == 50
    assert all(i[14] == "7" and i[19] in "89ab" for i in ids)
    assert [i[:13] for i in ids] == sorted(i[:13] for i in ids)  # the millisecond prefix


async def test_unary_errors(target: str) -> None:
    async with AsyncClient(target) as client:
        with pytest.raises(lc.CheckpointNotFoundError) as caught:
            await client.get_session("nobody")
        assert caught.value.metadata == {"session_id": "nobody"}
        with pytest.raises(lc.ToolCallNotFoundError) as unknown_call:
            await client.submit_tool_result("nobody", "call_0_0", {"ok": True})
        assert unknown_call.value.metadata == {"session_id": "nobody", "tool_call_id": "call_0_0"}


def test_unary_errors_sync(target: str) -> None:
    with Client(target) as client:
        with pytest.raises(lc.CheckpointNotFoundError):
            client.get_session("nobody")
        with pytest.raises(lc.ToolCallNotFoundError):
            client.submit_tool_result("nobody", "call_0_0", None)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_unreachable_daemon_is_unavailable() -> None:
    async with AsyncClient(f"127.0.0.1:{_closed_port()}") as client:
        with pytest.raises(lc.UnavailableError):
            await client.cancel("s")


# ---- the mapping table, without a server -----------------------------------------------


class FailedCall(grpc.RpcError):
    """What a failed call looks like to the translation: code, details, trailing metadata."""

    def __init__(self, code: grpc.StatusCode, message: str, trailing: tuple = ()) -> None:
        self._code, self._message, self._trailing = code, message, trailing

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._message

    def trailing_metadata(self) -> tuple:
        return self._trailing


def failed(code: grpc.StatusCode, reason: str, domain: str = "luosho.dev") -> FailedCall:
    detail = any_pb2.Any()
    detail.Pack(error_details_pb2.ErrorInfo(reason=reason, domain=domain, metadata={"k": "v"}))
    status = status_pb2.Status(code=code.value[0], message="msg", details=[detail])
    return FailedCall(code, "msg", (("grpc-status-details-bin", status.SerializeToString()),))


EXPECTED = {
    "SESSION_BUSY": lc.SessionBusyError,
    "SESSION_AWAITING_APPROVAL": lc.SessionAwaitingApprovalError,
    "CHECKPOINT_NOT_FOUND": lc.CheckpointNotFoundError,
    "APPROVAL_NOT_FOUND": lc.ApprovalNotFoundError,
    "AGENT_DRIFT": lc.AgentDriftError,
    "RESUME_TOOL_MISSING": lc.ResumeToolMissingError,
    "LEASE_LOST": lc.LeaseLostError,
    "PAYLOAD_TOO_LARGE": lc.PayloadTooLargeError,
    "STORE_FULL": lc.StoreFullError,
    "PROVIDER_ERROR": lc.ProviderError,
    "PROVIDER_REJECTED": lc.ProviderRejectedError,
    "SHUTTING_DOWN": lc.ShuttingDownError,
    "TOOL_CALL_NOT_FOUND": lc.ToolCallNotFoundError,
    "TOOL_CALL_NOT_PENDING": lc.ToolCallNotPendingError,
    "SESSION_EXISTS": lc.SessionExistsError,
    "EVENTS_OUT_OF_RANGE": lc.EventsOutOfRangeError,
}


def test_every_documented_reason_has_its_class() -> None:
    # The table is keyed by the proto's ErrorReason; the wire reason is the name without
    # its ERROR_REASON_ prefix.
    assert {
        ErrorReason.Name(k).removeprefix("ERROR_REASON_"): v for k, v in _ERROR_BY_REASON.items()
    } == EXPECTED


def test_reasons_map_through_the_enum() -> None:
    for name in ErrorReason.keys()[1:]:
        assert lc.error_reason(name.removeprefix("ERROR_REASON_")) == ErrorReason.Value(name)
    assert lc.error_reason("A_NEWER_DAEMONS_REASON") == ErrorReason.ERROR_REASON_UNSPECIFIED
    assert lc.error_reason("") == ErrorReason.ERROR_REASON_UNSPECIFIED
    err = from_rpc_error(failed(grpc.StatusCode.ABORTED, "SESSION_BUSY"))
    assert err.error_reason == ErrorReason.ERROR_REASON_SESSION_BUSY
    newer = from_rpc_error(failed(grpc.StatusCode.ABORTED, "A_NEWER_DAEMONS_REASON"))
    assert (
        type(newer) is lc.LuoshoError and newer.error_reason == ErrorReason.ERROR_REASON_UNSPECIFIED
    )


@pytest.mark.parametrize("reason", sorted(EXPECTED))
def test_reason_picks_the_class(reason: str) -> None:
    err = from_rpc_error(failed(grpc.StatusCode.ABORTED, reason))
    assert type(err) is EXPECTED[reason]
    assert (err.reason, err.message, err.metadata) == (reason, "msg", {"k": "v"})


def test_shutting_down_is_unavailable() -> None:
    assert isinstance(
        from_rpc_error(failed(grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN")), lc.UnavailableError
    )


def test_events_out_of_range_parses_the_oldest_kept_seq() -> None:
    detail = any_pb2.Any()
    detail.Pack(
        error_details_pb2.ErrorInfo(
            reason="EVENTS_OUT_OF_RANGE", domain="luosho.dev", metadata={"oldest_kept_seq": "17"}
        )
    )
    status = status_pb2.Status(code=grpc.StatusCode.OUT_OF_RANGE.value[0], details=[detail])
    err = from_rpc_error(
        FailedCall(
            grpc.StatusCode.OUT_OF_RANGE,
            "",
            (("grpc-status-details-bin", status.SerializeToString()),),
        )
    )
    assert isinstance(err, lc.EventsOutOfRangeError) and err.oldest_kept_seq == 17
    assert lc.EventsOutOfRangeError(grpc.StatusCode.OUT_OF_RANGE, "", "").oldest_kept_seq == 0


def test_foreign_domain_falls_back_on_the_code() -> None:
    err = from_rpc_error(failed(grpc.StatusCode.ABORTED, "SESSION_BUSY", domain="example.com"))
    assert type(err) is lc.LuoshoError and err.reason == "SESSION_BUSY"


def test_status_without_details() -> None:
    err = from_rpc_error(FailedCall(grpc.StatusCode.INTERNAL, "kaput"))
    assert type(err) is lc.LuoshoError
    assert (err.code, err.reason, err.message, str(err)) == (
        grpc.StatusCode.INTERNAL,
        "",
        "kaput",
        "INTERNAL: kaput",
    )
