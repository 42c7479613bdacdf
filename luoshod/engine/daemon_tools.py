"""Daemon tools (docs/reference/rules.md R70–R73): tools of the daemon's MCP servers, run by the
daemon itself under the same recording rules as the app's tools.

The engine sees the servers only through :class:`DaemonTools` (implemented by
``luoshod.mcpclient.McpServers``; no MCP import here). Two things happen here:

- :func:`expand` lists each server an ``AgentSpec`` names when a run starts, and joins its
  tools to the agent's as ``<server>__<tool>`` (``ToolSpec.server`` set), with the server's
  descriptions and schemas and the approval its annotations ask for (R72). The expanded
  spec is what the run's fingerprint is made of (R70: a changed server is drift) and what
  the checkpoint keeps, so a resume that sends no spec runs the same tools.
- :func:`execute` runs one call: a ``tool.call`` event marked ``executor="daemon"`` made
  durable first (the turn's save, R1), then attempts under the tool's timeout and retry
  policy with a ``tool.retry`` event per retry (R73), the ``tool_call_id`` sent as the
  idempotency key (R71). Whatever happens it returns one result message — a server that is
  down gives an error result the model reads, never a stuck or failed run.

A sub-agent's daemon tools are the same (R58): :func:`expand` joins them to its own spec at
every level, and :func:`execute` runs its calls with a :class:`~.runport.Caller` that tags
the events and sends the qualified call id as the key. The run reaches :func:`execute`
through its ``call_daemon_tool`` (:class:`~.runport.RunPort`): nothing here knows the run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from typing import Any, Protocol

from ..domain import AgentSpec, Message, Role, ToolCall, ToolSpec
from ..domain.mcpspec import (
    GATE,
    SEPARATOR,
    TOOL_ERROR,
    UNGATE,
    AttemptFailed,
    ListedTool,
    McpUse,
    RetryPolicy,
    tool_name,
)
from ..errors import InvalidArgument
from . import events as ev
from .runport import Caller
from .tools import error_result, validator_for

log = logging.getLogger("luoshod.engine")

CLIENT, DAEMON = "client", "daemon"


class ServerPolicy(Protocol):
    @property
    def timeout_ms(self) -> int | None: ...
    @property
    def retry(self) -> RetryPolicy | None: ...


class DaemonTools(Protocol):
    """The daemon's MCP servers, as the engine uses them."""

    def names(self) -> list[str]:
        """The configured servers' names."""

    def policy(self, server: str) -> ServerPolicy:
        """The server's configured timeout and retry policy."""

    async def list_tools(self, server: str) -> list[ListedTool]:
        """The server's tools now. Raises ``AttemptFailed``."""

    async def call(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        *,
        key: str,
        session_id: str,
        timeout_s: float,
    ) -> tuple[str, bool]:
        """One attempt: (result JSON, is_error). Raises ``AttemptFailed``."""


def check_servers(spec: AgentSpec, tools: DaemonTools | None, field: str = "agent") -> None:
    """An agent naming a server the daemon does not have, at any level of its tree of
    sub-agents, is refused before anything runs (``field``: where ``spec`` is)."""
    known = tools.names() if tools is not None else []
    for use in spec.mcp_servers:
        if use.name not in known:
            raise InvalidArgument(
                f"{field}.mcp_servers: unknown MCP server {use.name!r} "
                f"(this daemon's servers: {', '.join(known) or 'none'})",
                reason="UNKNOWN_MCP_SERVER",
                server=use.name,
                known=",".join(known),
                field=f"{field}.mcp_servers",
            )
    for n, sub in enumerate(spec.subagents):
        check_servers(sub.agent, tools, f"{field}.subagents[{n}].agent")


def uses_servers(spec: AgentSpec) -> bool:
    """Whether ``spec`` or any of its sub-agents names an MCP server."""
    return bool(spec.mcp_servers) or any(uses_servers(s.agent) for s in spec.subagents)


def needs_approval(use: McpUse, tool: ListedTool) -> bool:
    """R72: destructive (and not read-only) tools are gated unless the spec says otherwise."""
    override = use.override(tool.name)
    if override is not None and override.approval == GATE:
        return True
    if override is not None and override.approval == UNGATE:
        return False
    return tool.destructive is True and tool.read_only is not True


async def expand(
    spec: AgentSpec, tools: DaemonTools | None, saved: AgentSpec | None, session_id: str
) -> AgentSpec:
    """``spec`` with the tools of its MCP servers as listed now (R70), and so each of its
    sub-agents, level by level: a sub-agent's daemon tools join its own tools, so they are
    in its own fingerprint (per-level drift, R64). A server that cannot be listed keeps the
    tools ``saved`` had of it at that level (none for a new run), with a warning."""
    if not uses_servers(spec):
        return spec
    check_servers(spec, tools)  # the whole tree, before any server is listed
    assert tools is not None
    return await _expand(spec, tools, saved, session_id)


async def _expand(
    spec: AgentSpec, tools: DaemonTools, saved: AgentSpec | None, session_id: str
) -> AgentSpec:
    if spec.subagents:
        subs = []
        for sub in spec.subagents:
            before = saved.subagent(sub.name) if saved is not None else None
            agent = await _expand(sub.agent, tools, before.agent if before else None, session_id)
            subs.append(sub if agent is sub.agent else dataclasses.replace(sub, agent=agent))
        spec = dataclasses.replace(spec, subagents=tuple(subs))
    if not spec.mcp_servers:
        return spec
    own = [t for t in spec.tools if not t.server]
    names = {t.name for t in own}
    out = list(own)
    for use in spec.mcp_servers:
        try:
            listed = await tools.list_tools(use.name)
        except AttemptFailed as e:
            kept = [t for t in (saved.tools if saved else ()) if t.server == use.name]
            log.warning(
                "session=%s MCP server %s could not be listed (%s); the run keeps its %d known "
                "tool(s)",
                session_id,
                use.name,
                e,
                len(kept),
            )
            out.extend(kept)
            continue
        for t in listed:
            if not use.allows(t.name):
                continue
            name = tool_name(use.name, t.name)
            if name in names:
                raise InvalidArgument(
                    f"tool name {name!r} is both declared by the agent and served by MCP server "
                    f"{use.name!r}",
                    reason="DUPLICATE_TOOL_NAME",
                    tool=name,
                    server=use.name,
                )
            try:
                validator_for(t.input_schema_json)
            except Exception as e:  # noqa: BLE001 - a server's bad schema skips its tool, not the run
                log.warning(
                    "MCP server %s: tool %s skipped, its input schema is invalid: %s",
                    use.name,
                    t.name,
                    e,
                )
                continue
            names.add(name)
            out.append(
                ToolSpec(
                    name,
                    t.description,
                    t.input_schema_json,
                    needs_approval(use, t),
                    server=use.name,
                )
            )
    return dataclasses.replace(spec, tools=tuple(out))


def attempt_policy(
    spec: AgentSpec, tool: ToolSpec, tools: DaemonTools, default_s: float
) -> tuple[float, RetryPolicy]:
    """Timeout of one attempt and the retry policy: the spec's per-tool override, else the
    spec's per-server setting, else the server's configuration, else the agent's
    ``tool_timeout_ms`` or the daemon's tool timeout, and one attempt."""
    use = next((u for u in spec.mcp_servers if u.name == tool.server), None)
    own = tool.name[len(tool.server) + len(SEPARATOR) :]
    override = use.override(own) if use else None
    server = tools.policy(tool.server)
    timeout_ms = next(
        (
            t
            for t in (
                override and override.timeout_ms,
                use and use.timeout_ms,
                server.timeout_ms,
                spec.tool_timeout_ms,
            )
            if t
        ),
        None,
    )
    retry = (override and override.retry) or (use and use.retry) or server.retry or RetryPolicy()
    return (timeout_ms / 1000 if timeout_ms else default_s), retry


async def execute(
    tools: DaemonTools | None,
    call: ToolCall,
    tool: ToolSpec,
    step: int,
    caller: Caller,
    *,
    session_id: str,
    default_timeout_s: float,
    hand_out: int = 0,
) -> Message:
    """Run one daemon tool call (R71, R73) of the lead or of a sub-agent (``caller``) in
    session ``session_id``, with the daemon's servers ``tools``; returns its result message
    (under ``call``'s own id, for its owner's transcript). ``hand_out`` is the call's
    attempt (R77: how many times it was handed out, this time included), shown on its
    ``tool.call``; the attempts of the retry policy (R73, ``tool.retry``) are tries within
    this one hand-out and are counted apart."""
    key = caller.key
    timeout_s, retry = (
        attempt_policy(caller.spec, tool, tools, default_timeout_s)
        if tools
        else (0.0, RetryPolicy())
    )
    shown = call if key == call.id else ToolCall(key, call.name, call.arguments_json)
    await caller.emit(
        ev.TOOL_CALL,
        step=step,
        call=shown,
        timeout_ms=int(timeout_s * 1000),
        executor=DAEMON,
        attempt=hand_out,
    )
    await caller.flush()  # the turn is durable before its tool runs (R1)
    if tools is None:
        return error_result(
            call, f"MCP server {tool.server!r} is not configured in this daemon", unavailable=True
        )
    own = tool.name[len(tool.server) + len(SEPARATOR) :]
    try:
        arguments = json.loads(call.arguments_json or "{}")
    except ValueError:  # checked before (R25); kept for safety
        arguments = {}
    attempts = max(1, retry.attempts)
    delay_ms = retry.backoff_ms
    for attempt in range(1, attempts + 1):
        try:
            text, is_error = await tools.call(
                tool.server, own, arguments, key=key, session_id=session_id, timeout_s=timeout_s
            )
        except AttemptFailed as e:
            kind, error = e.kind, str(e)
        else:
            if not is_error:
                return Message(Role.TOOL, text, (), call.id, call.name, False)
            kind, error = TOOL_ERROR, text
            if TOOL_ERROR not in retry.retry_on or attempt == attempts:
                return Message(Role.TOOL, text, (), call.id, call.name, True)
        if kind not in retry.retry_on or attempt == attempts:
            return error_result(call, error, server=tool.server, failure=kind, attempts=attempt)
        log.info(
            "session=%s call %s attempt %d failed (%s), retrying in %dms",
            session_id,
            key,
            attempt,
            kind,
            delay_ms,
        )
        await caller.emit(
            ev.TOOL_RETRY,
            step=step,
            tool_call_id=key,
            tool_name=call.name,
            attempt=attempt,
            error=error[:1000],
            delay_ms=delay_ms,
        )
        await caller.flush()
        if delay_ms:
            await asyncio.sleep(delay_ms / 1000)
        delay_ms *= 2
    raise AssertionError("unreachable: the last attempt returns")
