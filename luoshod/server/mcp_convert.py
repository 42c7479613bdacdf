"""``AgentSpec.mcp_servers`` and the daemon-tool events (docs/reference/rules.md R70–R73): protobuf
⇄
domain and the request checks, apart from convert.py/validation.py so those stay small."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from luosho.v1 import agent_pb2 as pb

from ..domain import Checkpoint, ToolSpec
from ..domain.mcpspec import (
    GATE,
    TIMEOUT,
    TOOL_ERROR,
    UNAVAILABLE,
    UNGATE,
    McpUse,
    RetryPolicy,
    ToolOverride,
)
from ..engine import locate
from ..errors import InvalidArgument, ToolCallNotPending

RETRY_ON_FROM_PB = {
    pb.MCP_RETRY_ON_TIMEOUT: TIMEOUT,
    pb.MCP_RETRY_ON_UNAVAILABLE: UNAVAILABLE,
    pb.MCP_RETRY_ON_TOOL_ERROR: TOOL_ERROR,
}
RETRY_ON_TO_PB = {v: k for k, v in RETRY_ON_FROM_PB.items()}

#: The MCP manager's words for a server's transport and state → the proto's enums.
TRANSPORT_TO_PB = {"stdio": pb.MCP_TRANSPORT_STDIO, "http": pb.MCP_TRANSPORT_HTTP}
STATE_TO_PB = {
    "not started": pb.MCP_SERVER_STATE_NOT_STARTED,
    "running": pb.MCP_SERVER_STATE_RUNNING,
    "down": pb.MCP_SERVER_STATE_DOWN,
}
APPROVAL_FROM_PB = {
    pb.MCP_APPROVAL_UNSPECIFIED: "",
    pb.MCP_APPROVAL_GATE: GATE,
    pb.MCP_APPROVAL_UNGATE: UNGATE,
}
APPROVAL_TO_PB = {v: k for k, v in APPROVAL_FROM_PB.items()}
EXECUTOR_TO_PB = {"client": pb.TOOL_EXECUTOR_CLIENT, "daemon": pb.TOOL_EXECUTOR_DAEMON}


def _bad(message: str, field: str, **meta: object) -> InvalidArgument:
    return InvalidArgument(message, reason="INVALID_MCP_SERVERS", field=field, **meta)


def _check_retry(r: pb.McpRetryPolicy, field: str) -> None:
    if r.attempts < 0:
        raise _bad(f"{field}.attempts must be >= 0, got {r.attempts}", f"{field}.attempts")
    if r.backoff_ms < 0:
        raise _bad(f"{field}.backoff_ms must be >= 0, got {r.backoff_ms}", f"{field}.backoff_ms")
    for k, on in enumerate(r.retry_on):
        if on not in RETRY_ON_FROM_PB:  # proto3 enums are open
            raise _bad(
                f"{field}.retry_on[{k}] {on} is not a failure kind", f"{field}.retry_on[{k}]"
            )


def check(agent: pb.AgentSpec, field: str = "agent") -> None:
    """Shape of ``mcp_servers`` (whether the daemon has each server is the engine's check,
    UNKNOWN_MCP_SERVER). Raises ``InvalidArgument``."""
    seen: set[str] = set()
    for n, use in enumerate(agent.mcp_servers):
        where = f"{field}.mcp_servers[{n}]"
        if not use.name:
            raise _bad(f"{where}.name is required", f"{where}.name")
        if use.name in seen:
            raise _bad(f"MCP server {use.name!r} is named twice", f"{where}.name", server=use.name)
        seen.add(use.name)
        if use.HasField("timeout_ms") and use.timeout_ms < 1:
            raise _bad(
                f"{where}.timeout_ms must be >= 1, got {use.timeout_ms}", f"{where}.timeout_ms"
            )
        if use.HasField("retry"):
            _check_retry(use.retry, f"{where}.retry")
        tools: set[str] = set()
        for k, o in enumerate(use.tool_overrides):
            at = f"{where}.tool_overrides[{k}]"
            if not o.tool or o.tool in tools:
                raise _bad(f"{at}.tool is required and named once per server", f"{at}.tool")
            tools.add(o.tool)
            if o.approval not in APPROVAL_FROM_PB:
                raise _bad(
                    f"{at}.approval {o.approval} is not an approval override", f"{at}.approval"
                )
            if o.HasField("timeout_ms") and o.timeout_ms < 1:
                raise _bad(f"{at}.timeout_ms must be >= 1, got {o.timeout_ms}", f"{at}.timeout_ms")
            if o.HasField("retry"):
                _check_retry(o.retry, f"{at}.retry")


def _retry_from_pb(r: pb.McpRetryPolicy) -> RetryPolicy:
    default = RetryPolicy()
    return RetryPolicy(
        r.attempts or default.attempts,
        r.backoff_ms,
        tuple(RETRY_ON_FROM_PB[x] for x in r.retry_on) or default.retry_on,
    )


def uses_from_pb(uses: Sequence[pb.McpServerUse]) -> tuple[McpUse, ...]:
    return tuple(
        McpUse(
            u.name,
            tuple(u.allow_tools),
            u.timeout_ms if u.HasField("timeout_ms") else None,
            _retry_from_pb(u.retry) if u.HasField("retry") else None,
            tuple(
                ToolOverride(
                    o.tool,
                    APPROVAL_FROM_PB[o.approval],
                    o.timeout_ms if o.HasField("timeout_ms") else None,
                    _retry_from_pb(o.retry) if o.HasField("retry") else None,
                )
                for o in u.tool_overrides
            ),
        )
        for u in uses
    )


def _retry_pb(r: RetryPolicy) -> pb.McpRetryPolicy:
    return pb.McpRetryPolicy(
        attempts=r.attempts,
        backoff_ms=r.backoff_ms,
        retry_on=[RETRY_ON_TO_PB[x] for x in r.retry_on],
    )


def uses_pb(uses: tuple[McpUse, ...]) -> list[pb.McpServerUse]:
    out = []
    for u in uses:
        m = pb.McpServerUse(name=u.name, allow_tools=list(u.allow_tools))
        if u.timeout_ms is not None:
            m.timeout_ms = u.timeout_ms
        if u.retry is not None:
            m.retry.CopyFrom(_retry_pb(u.retry))
        for o in u.tool_overrides:
            om = m.tool_overrides.add(tool=o.tool, approval=APPROVAL_TO_PB[o.approval])
            if o.timeout_ms is not None:
                om.timeout_ms = o.timeout_ms
            if o.retry is not None:
                om.retry.CopyFrom(_retry_pb(o.retry))
        out.append(m)
    return out


def tool_retry_pb(d: dict) -> pb.ToolRetry:
    return pb.ToolRetry(**d)


async def list_servers(servers: object, refresh: bool) -> pb.ListMcpServersResponse:
    """``ListMcpServers``: each configured server's state and tools (no secret)."""
    from ..domain.mcpspec import AttemptFailed
    from ..mcpclient import McpServers

    if not isinstance(servers, McpServers):
        return pb.ListMcpServersResponse()
    if refresh:
        for name in servers.names():
            with contextlib.suppress(AttemptFailed):  # shown as down, with the reason
                await servers.list_tools(name)
    out = pb.ListMcpServersResponse()
    for s in servers.states():
        m = out.servers.add(
            name=s.name,
            transport=TRANSPORT_TO_PB[s.transport],
            state=STATE_TO_PB[s.state],
            starts=s.starts,
            last_error=s.last_error,
        )
        for t in s.tools:
            tm = m.tools.add(
                name=t.name, description=t.description, input_schema_json=t.input_schema_json
            )
            if t.read_only is not None:
                tm.read_only_hint = t.read_only
            if t.destructive is not None:
                tm.destructive_hint = t.destructive
    return out


def refuse_daemon_call(cp: Checkpoint | None, session_id: str, call_id: str) -> None:
    """``SubmitToolResult`` for a daemon tool's call (R71), the lead's or an unfinished
    sub-agent's (by its qualified id, R58): the daemon runs it and records its result; say
    so rather than "no run is waiting" or "no such call"."""
    tool = _tool_of(cp, call_id) if cp is not None and cp.agent is not None else None
    if tool is not None and tool.server:
        raise ToolCallNotPending(
            f"tool call {call_id!r} of session {session_id!r} is run by the daemon "
            f"(MCP server {tool.server!r}); its result is recorded without the app",
            session_id=session_id,
            tool_call_id=call_id,
            executor="daemon",
        )


def _tool_of(cp: Checkpoint, call_id: str) -> ToolSpec | None:
    """The tool of the call ``call_id``: the lead's, or a sub-agent's (``locate``)."""
    found = locate(cp, call_id)
    if found is None:
        return None
    spec, messages, own = found
    if spec is None:
        return None
    name = next((c.name for m in messages for c in m.tool_calls if c.id == own), "")
    return spec.tool(name) if name else None
