"""Request builders shared by the sync and async clients (no I/O here)."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeAlias

from luosho.v1 import agent_pb2

from ._agent import AgentLike, agent_spec, dumps
from ._messages import InputLike, to_messages
from ._result import STATUS_VALUES

__all__ = [
    "UNSET",
    "MetadataLike",
    "StatusLike",
    "execute_request",
    "list_sessions_request",
    "normalize_metadata",
    "resume_request",
]


class _Unset(enum.Enum):
    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


# "Not given": business_state=UNSET inherits the stored state; None sends JSON null.
UNSET: Final = _Unset.UNSET

MetadataLike: TypeAlias = Mapping[str, str] | Sequence[tuple[str, str]]
StatusLike: TypeAlias = str | int | None


def normalize_metadata(metadata: MetadataLike | None) -> tuple[tuple[str, str], ...] | None:
    """gRPC call metadata as the tuple of pairs grpc expects (keys lower-cased)."""
    if not metadata:
        return None
    pairs = metadata.items() if isinstance(metadata, Mapping) else metadata
    return tuple((key.lower(), value) for key, value in pairs)


def execute_request(
    session_id: str,
    input: InputLike,
    *,
    agent: AgentLike | None,
    business_state: Any,
    request_id: str,
) -> agent_pb2.ExecuteRequest:
    request = agent_pb2.ExecuteRequest(
        session_id=session_id,
        input=to_messages(input),
        agent=agent_spec(agent),
        request_id=request_id,
    )
    if business_state is not UNSET:
        request.business_state_json = dumps(business_state)
    return request


def resume_request(
    session_id: str, *, agent: AgentLike | None, request_id: str
) -> agent_pb2.ResumeRequest:
    return agent_pb2.ResumeRequest(
        session_id=session_id, agent=agent_spec(agent), request_id=request_id
    )


def list_sessions_request(
    status: StatusLike, page_size: int, page_token: str
) -> agent_pb2.ListSessionsRequest:
    """``status``: None (all), "in_progress", "awaiting_approval", "finished", or the enum."""
    if status is None:
        value = agent_pb2.CHECKPOINT_STATUS_UNSPECIFIED
    elif isinstance(status, str):
        if status not in STATUS_VALUES:
            raise ValueError(f"unknown status {status!r}; expected one of {sorted(STATUS_VALUES)}")
        value = STATUS_VALUES[status]
    else:
        value = status
    return agent_pb2.ListSessionsRequest(page_size=page_size, page_token=page_token, status=value)
