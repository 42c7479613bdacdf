"""Request builders shared by the sync and async clients (no I/O here).

Each client method builds its request here and keeps only the call itself; paged RPCs
are described by a ``PageQuery`` that both clients' pagers follow.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from google.protobuf.message import Message as ProtoMessage

from luosho.v1 import agent_pb2

from ._json import dumps
from ._messages import InputLike, to_messages

if TYPE_CHECKING:
    from ._agent import AgentLike

__all__ = [
    "UNSET",
    "MetadataLike",
    "PageQuery",
    "StatusLike",
    "ToolResultLike",
    "ToolResultPatch",
    "approvals_query",
    "compaction_strategy",
    "compare_request",
    "execute_request",
    "fork_request",
    "history_query",
    "list_sessions_query",
    "list_sessions_request",
    "mark_reconciled",
    "normalize_metadata",
    "resolve_request",
    "resume_request",
    "watch_request",
]


class _Unset(enum.Enum):
    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


# "Not given": business_state=UNSET inherits the stored state; None sends JSON null.
UNSET: Final = _Unset.UNSET

MetadataLike: TypeAlias = Mapping[str, str] | Sequence[tuple[str, str]]
StatusLike: TypeAlias = str | int | None


def _agent_spec(agent: AgentLike | None) -> agent_pb2.AgentSpec | None:
    """The agent as its proto (``_agent`` imported by the first request that sends one:
    a program that only reads sessions never needs it)."""
    if agent is None:
        return None
    from ._agent import agent_spec

    return agent_spec(agent)


def normalize_metadata(
    metadata: MetadataLike | None, token: str | None = None
) -> tuple[tuple[str, str], ...] | None:
    """gRPC call metadata as the tuple of pairs grpc expects (keys lower-cased), with
    ``authorization: Bearer <token>`` when a token is given."""
    pairs = metadata.items() if isinstance(metadata, Mapping) else (metadata or ())
    out = tuple((key.lower(), value) for key, value in pairs)
    if token:
        out += (("authorization", f"Bearer {token}"),)
    return out or None


def execute_request(
    session_id: str,
    input: InputLike,
    *,
    agent: AgentLike | None,
    business_state: Any,
    request_id: str,
    history_limit: int | None = None,
    if_busy: IfBusyLike = None,
    retention_ms: int | None = None,
) -> agent_pb2.ExecuteRequest:
    request = agent_pb2.ExecuteRequest(
        session_id=session_id,
        input=to_messages(input),
        agent=_agent_spec(agent),
        request_id=request_id,
        if_busy=if_busy_value(if_busy),
    )
    if business_state is not UNSET:
        request.business_state_json = dumps(business_state)
    if history_limit is not None:
        request.history_limit = history_limit
    if retention_ms is not None:
        request.retention_ms = retention_ms
    return request


#: ``if_busy`` by name ("reject", "enqueue", "interrupt", "rollback") or the enum value.
IfBusyLike = str | int | None
IF_BUSY = {
    "reject": agent_pb2.IF_BUSY_REJECT,
    "enqueue": agent_pb2.IF_BUSY_ENQUEUE,
    "interrupt": agent_pb2.IF_BUSY_INTERRUPT,
    "rollback": agent_pb2.IF_BUSY_ROLLBACK,
}


def if_busy_value(if_busy: IfBusyLike) -> int:
    """What a second run on a busy session does (R68); ``ValueError`` for an unknown name."""
    if if_busy is None:
        return agent_pb2.IF_BUSY_UNSPECIFIED
    if isinstance(if_busy, str):
        try:
            return IF_BUSY[if_busy.lower()]
        except KeyError:
            raise ValueError(
                f"if_busy must be one of {', '.join(IF_BUSY)}, got {if_busy!r}"
            ) from None
    return int(if_busy)


def _named(value: str | int | None, names: Mapping[str, int], what: str) -> int:
    if value is None:
        return 0
    if isinstance(value, str):
        try:
            return names[value.lower().replace("-", "_")]
        except KeyError:
            raise ValueError(f"{what} must be one of {', '.join(names)}, got {value!r}") from None
    return int(value)


OVERLAP = {
    "skip": agent_pb2.SCHEDULE_OVERLAP_SKIP,
    "enqueue": agent_pb2.SCHEDULE_OVERLAP_ENQUEUE,
    "allow": agent_pb2.SCHEDULE_OVERLAP_ALLOW,
}
CATCH_UP = {
    "latest": agent_pb2.SCHEDULE_CATCH_UP_LATEST,
    "all": agent_pb2.SCHEDULE_CATCH_UP_ALL,
    "none": agent_pb2.SCHEDULE_CATCH_UP_NONE,
}
SCHEDULE_SESSION = {
    "each_fire": agent_pb2.SCHEDULE_SESSION_EACH_FIRE,
    "one": agent_pb2.SCHEDULE_SESSION_ONE,
}


def schedule_spec(
    name: str,
    agent: AgentLike,
    input: InputLike,
    *,
    cron: str = "",
    time_zone: str = "",
    interval_s: float = 0,
    overlap: str | int | None = None,
    catch_up: str | int | None = None,
    session: str | int | None = None,
) -> agent_pb2.ScheduleSpec:
    """A schedule (R87): ``cron`` (with ``time_zone``) or ``interval_s``; ``overlap`` "skip",
    "enqueue" or "allow"; ``catch_up`` "latest", "all" or "none"; ``session``
    "each_fire" or "one". ``ValueError`` for both or neither of cron and interval, or an
    unknown name."""
    if bool(cron) == bool(interval_s):
        raise ValueError("a schedule needs either cron or interval_s")
    spec = agent_pb2.ScheduleSpec(
        name=name,
        agent=_agent_spec(agent),
        input=to_messages(input),
        overlap=_named(overlap, OVERLAP, "overlap"),
        catch_up=_named(catch_up, CATCH_UP, "catch_up"),
        session=_named(session, SCHEDULE_SESSION, "session"),
    )
    if cron:
        spec.cron.CopyFrom(agent_pb2.ScheduleCron(expression=cron, time_zone=time_zone))
    else:
        spec.interval_ms = round(interval_s * 1000)
    return spec


def resume_request(
    session_id: str, *, agent: AgentLike | None, request_id: str, wake: bool = False
) -> agent_pb2.ResumeRequest:
    return agent_pb2.ResumeRequest(
        session_id=session_id, agent=_agent_spec(agent), request_id=request_id, wake=wake
    )


def list_sessions_request(
    status: StatusLike,
    page_size: int,
    page_token: str,
    prefix: str = "",
    costliest_first: bool = False,
) -> agent_pb2.ListSessionsRequest:
    """``status``: None (all), "in_progress", "awaiting_approval", "finished",
    "sleeping", or the enum;
    ``prefix``: only the sessions whose id starts with it; ``costliest_first``: ordered by
    the session's total cost, the costliest first, instead of by id."""
    if status is None:
        value = agent_pb2.CHECKPOINT_STATUS_UNSPECIFIED
    elif isinstance(status, str):
        from ._result import STATUS_VALUES

        if status not in STATUS_VALUES:
            raise ValueError(f"unknown status {status!r}; expected one of {sorted(STATUS_VALUES)}")
        value = STATUS_VALUES[status]
    else:
        value = status
    return agent_pb2.ListSessionsRequest(
        page_size=page_size,
        page_token=page_token,
        status=value,
        session_id_prefix=prefix,
        costliest_first=costliest_first,
    )


def resolve_request(
    approval_id: str,
    approved: bool,
    *,
    note: str,
    agent: AgentLike | None,
    request_id: str,
    session_id: str = "",
    answer: str = "",
) -> agent_pb2.ResolveRequest:
    if not approval_id:
        raise ValueError("approval_id is required")
    return agent_pb2.ResolveRequest(
        approval_id=approval_id,
        approved=approved,
        answer=answer,
        note=note,
        agent=_agent_spec(agent),
        request_id=request_id,
        session_id=session_id,
    )


# ---- paged RPCs -------------------------------------------------------------------------


class PageQuery:
    """A paged RPC to follow to its last page (AIP-158).

    ``rpc`` names the stub method; ``request(page_token)`` builds each page's request;
    ``items`` names the response's repeated field. Both clients follow it the same way:
    call, yield the items, repeat with ``next_page_token`` until it is empty. (A plain
    class: a frozen dataclass costs the CLI's start-up half a millisecond to make.)
    """

    __slots__ = ("rpc", "request", "items")

    def __init__(self, rpc: str, request: Callable[[str], ProtoMessage], items: str) -> None:
        self.rpc = rpc
        self.request = request
        self.items = items


def list_sessions_query(
    status: StatusLike, page_size: int, prefix: str = "", costliest_first: bool = False
) -> PageQuery:
    list_sessions_request(status, page_size, "")  # an unknown status fails here, at once
    return PageQuery(
        "ListSessions",
        lambda token: list_sessions_request(status, page_size, token, prefix, costliest_first),
        "sessions",
    )


def approvals_query(session_id: str | None, page_size: int) -> PageQuery:
    return PageQuery(
        "ListApprovals",
        lambda token: agent_pb2.ListApprovalsRequest(
            session_id=session_id or "", page_size=page_size, page_token=token
        ),
        "approvals",
    )


def history_query(session_id: str, include_checkpoint: bool, page_size: int) -> PageQuery:
    return PageQuery(
        "History",
        lambda token: agent_pb2.HistoryRequest(
            session_id=session_id,
            page_size=page_size,
            page_token=token,
            include_checkpoint=include_checkpoint,
        ),
        "entries",
    )


# ---- fork, compare, watch ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolResultPatch:
    """Fork's replacement result for one tool call: ``result`` is any JSON value."""

    tool_call_id: str
    result: Any
    is_error: bool = False

    def to_proto(self) -> agent_pb2.ToolResultPatch:
        return agent_pb2.ToolResultPatch(
            tool_call_id=self.tool_call_id, result_json=dumps(self.result), is_error=self.is_error
        )


# A ToolResultPatch, a (tool_call_id, result) or (tool_call_id, result, is_error) tuple,
# or the proto (its result_json sent as is).
ToolResultLike: TypeAlias = (
    ToolResultPatch | tuple[str, Any] | tuple[str, Any, bool] | agent_pb2.ToolResultPatch
)


def _tool_result_patch(value: ToolResultLike) -> agent_pb2.ToolResultPatch:
    if isinstance(value, agent_pb2.ToolResultPatch):
        return value
    if isinstance(value, ToolResultPatch):
        return value.to_proto()
    if isinstance(value, tuple) and len(value) in (2, 3):
        return ToolResultPatch(*value).to_proto()
    raise TypeError(
        "tool_result must be a ToolResultPatch, a (tool_call_id, result[, is_error]) tuple "
        f"or an agent_pb2.ToolResultPatch, not {value!r}"
    )


def fork_request(
    session_id: str,
    from_step: int,
    *,
    new_session_id: str,
    messages: InputLike,
    business_state: Any,
    tool_result: ToolResultLike | None,
    append_input: str,
) -> agent_pb2.ForkRequest:
    """``messages=None`` keeps the transcript; a list (even empty) replaces it."""
    patch = agent_pb2.ForkPatch(append_input=append_input)
    if messages is not None:
        patch.replace_messages = True
        patch.messages.extend(to_messages(messages))
    if business_state is not UNSET:
        patch.business_state_json = dumps(business_state)
    if tool_result is not None:
        patch.tool_result.CopyFrom(_tool_result_patch(tool_result))
    return agent_pb2.ForkRequest(
        session_id=session_id,
        from_step=from_step,
        new_session_id=new_session_id,
        patch=patch,
    )


def compare_request(session_id_a: str, session_id_b: str) -> agent_pb2.CompareRequest:
    return agent_pb2.CompareRequest(session_id_a=session_id_a, session_id_b=session_id_b)


def watch_request(session_id: str, after_seq: int, follow: bool) -> agent_pb2.WatchRequest:
    if after_seq < 0:
        raise ValueError(f"after_seq must be >= 0, got {after_seq}")
    return agent_pb2.WatchRequest(session_id=session_id, after_seq=after_seq, follow=follow)


def mark_reconciled(spec: agent_pb2.AgentSpec, names: Iterable[str]) -> None:
    """Set ``reconcile`` on the tools of ``spec`` (and of its sub-agents, at every level)
    that have a reconcile function (R77): the flag goes with the function."""
    wanted = set(names)
    if not wanted:
        return
    for tool in spec.tools:
        if tool.name in wanted:
            tool.reconcile = True
    for sub in spec.subagents:
        mark_reconciled(sub.agent, wanted)


_STRATEGIES = {
    "prune": agent_pb2.COMPACTION_STRATEGY_PRUNE,
    "summarize": agent_pb2.COMPACTION_STRATEGY_SUMMARIZE,
    "both": agent_pb2.COMPACTION_STRATEGY_BOTH,
}


def compaction_strategy(name: str | None) -> int:
    """A compaction strategy by name (R85); ``None``: the agent's."""
    if name is None:
        return agent_pb2.COMPACTION_STRATEGY_UNSPECIFIED
    try:
        return _STRATEGIES[name]
    except KeyError:
        raise ValueError(
            f"strategy must be one of {', '.join(_STRATEGIES)}, got {name!r}"
        ) from None
