"""Every error class is mapped to a gRPC code, and the status carries one ErrorInfo."""

from __future__ import annotations

import inspect

import grpc
from google.rpc import error_details_pb2, status_pb2

from luoshod import errors
from luoshod.server.status import DOMAIN, GRPC_CODES, code_for, to_status


def all_error_classes() -> list[type[errors.LuoshoError]]:
    return [
        c
        for _, c in inspect.getmembers(errors, inspect.isclass)
        if issubclass(c, errors.LuoshoError)
    ]


def test_every_error_class_is_mapped() -> None:
    assert set(all_error_classes()) == set(GRPC_CODES)


def test_design_table_codes() -> None:
    expect = {
        errors.CheckpointNotFound: grpc.StatusCode.NOT_FOUND,
        errors.SessionAwaitingApproval: grpc.StatusCode.FAILED_PRECONDITION,
        errors.AgentDrift: grpc.StatusCode.FAILED_PRECONDITION,
        errors.ResumeToolMissing: grpc.StatusCode.FAILED_PRECONDITION,
        errors.SessionBusy: grpc.StatusCode.ABORTED,
        errors.LeaseLost: grpc.StatusCode.ABORTED,
        errors.InvalidArgument: grpc.StatusCode.INVALID_ARGUMENT,
        errors.PayloadTooLarge: grpc.StatusCode.RESOURCE_EXHAUSTED,
        errors.StoreFull: grpc.StatusCode.RESOURCE_EXHAUSTED,
        errors.ProviderError: grpc.StatusCode.UNAVAILABLE,
        errors.ShuttingDown: grpc.StatusCode.UNAVAILABLE,
    }
    for cls, code in expect.items():
        assert code_for(cls("x")) == code, cls


def test_status_has_one_error_info_with_reason_and_metadata() -> None:
    st = to_status(errors.SessionBusy("busy", session_id="s1"))
    assert st.code == grpc.StatusCode.ABORTED
    ((key, raw),) = st.trailing_metadata
    status = status_pb2.Status.FromString(raw)
    assert status.message == "busy" and len(status.details) == 1
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    assert (info.domain, info.reason, dict(info.metadata)) == (
        DOMAIN,
        "SESSION_BUSY",
        {"session_id": "s1"},
    )


def test_reasons_are_upper_snake() -> None:
    for cls in all_error_classes():
        assert cls.reason.isupper() and " " not in cls.reason, cls
