"""The daemon's MCP clients (docs/reference/rules.md R70–R73), one per configured server, built on
the official ``mcp`` SDK: started on first use, started again after they die, closed when
the daemon stops.

Each connection lives in a task of its own, because the SDK's transports are async
context managers that must be left in the task that entered them; calls from any run
share the connection (the SDK multiplexes requests). A call's failure is classified for the
retry policy (:class:`AttemptFailed`): ``timeout``, ``unavailable`` (the server cannot be
reached, died, or refused the request — the connection is then dropped, so the next
attempt starts it again) or a tool error (the tool answered ``isError``).

No secret (an environment value, a header) ever reaches a log line or an error: errors
carry the server's name and the kind of failure, and the SDK's exception text only after
:func:`_scrub` removed every secret value from it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..domain.mcpspec import TIMEOUT, TOOL_ERROR, UNAVAILABLE, AttemptFailed, ListedTool
from .config import McpServerConfig

log = logging.getLogger("luoshod.mcp")

#: The request ``_meta`` key of the idempotency key (the call's ``tool_call_id``, R71).
IDEMPOTENCY_KEY = "luosho.dev/idempotency-key"
#: The session the call belongs to, beside it.
SESSION_KEY = "luosho.dev/session-id"
#: How long starting a server (spawn or connect, and the handshake) may take.
START_TIMEOUT_S = 30.0


@dataclass(slots=True)
class _Connection:
    client: Any  # mcp.Client, entered
    task: asyncio.Task[None]
    stop: asyncio.Event
    started_at: float


@dataclass(slots=True)
class ServerState:
    """What ``luoshod mcp list`` shows of a server."""

    name: str
    transport: str
    state: str  # "not started" | "running" | "down"
    starts: int = 0
    last_error: str = ""
    tools: list[ListedTool] = field(default_factory=list)


class McpServers:
    """The configured MCP servers of one daemon (the engine's ``DaemonTools``)."""

    def __init__(
        self, configs: Mapping[str, McpServerConfig], *, default_timeout_s: float = 300.0
    ) -> None:
        self.configs = dict(configs)
        self.default_timeout_s = default_timeout_s
        self._conns: dict[str, _Connection] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._states = {
            n: ServerState(n, c.transport, "not started") for n, c in self.configs.items()
        }
        self._secrets = [
            s.reveal()
            for c in self.configs.values()
            for s in (*c.env.values(), *c.headers.values())
        ]
        self._closed = False

    # -- the engine's DaemonTools protocol ----------------------------------------------------

    def names(self) -> list[str]:
        return sorted(self.configs)

    def policy(self, server: str) -> McpServerConfig:
        return self.configs[server]

    async def list_tools(self, server: str) -> list[ListedTool]:
        """Every tool of ``server``, as listed now. A connection that fails is started
        again once (listing changes nothing on the server). Raises ``AttemptFailed``."""
        reused = self._running(server)
        try:
            return await self._list(server)
        except AttemptFailed as e:
            if e.kind != UNAVAILABLE or not reused:
                raise
        return await self._list(server)

    async def _list(self, server: str) -> list[ListedTool]:
        client = await self._client(server)
        tools: list[ListedTool] = []
        cursor: str | None = None
        try:
            for _ in range(100):  # a paginator that never ends cannot hang a run
                page = await asyncio.wait_for(client.list_tools(cursor=cursor), START_TIMEOUT_S)
                for t in page.tools:
                    a = t.annotations
                    tools.append(
                        ListedTool(
                            t.name,
                            t.description or "",
                            json.dumps(t.input_schema, sort_keys=True),
                            a.read_only_hint if a else None,
                            a.destructive_hint if a else None,
                        )
                    )
                cursor = page.next_cursor
                if not cursor:
                    break
        except TimeoutError:
            raise AttemptFailed(
                TIMEOUT, f"MCP server {server!r} did not list its tools within {START_TIMEOUT_S:g}s"
            ) from None
        except Exception as e:  # noqa: BLE001 - any transport failure: the server is unusable
            raise self._down(server, e, "listing its tools") from None
        self._states[server].tools = tools
        return tools

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
        """One attempt: the result as JSON text and whether the tool said it failed.
        ``key`` goes to the server as the idempotency key in the request's ``_meta``.
        Raises ``AttemptFailed``."""
        started = time.monotonic()
        client = await self._client(server, timeout_s)
        left = max(0.001, timeout_s - (time.monotonic() - started))
        meta = {IDEMPOTENCY_KEY: key, SESSION_KEY: session_id}
        try:
            async with asyncio.timeout(left):  # no task per call, unlike wait_for
                result = await client.call_tool(tool, arguments, meta=meta)
        except TimeoutError:
            raise AttemptFailed(
                TIMEOUT, f"no answer from MCP server {server!r} within {timeout_s:g}s"
            ) from None
        except Exception as e:  # noqa: BLE001 - MCPError (refused), transport errors: no answer
            raise self._down(server, e, f"calling {tool!r}") from None
        return _result_json(result), bool(result.is_error)

    # -- connections --------------------------------------------------------------------------

    def _running(self, server: str) -> bool:
        """A connection that can still send: its task is alive and the SDK has not seen
        the end of its stream (a stdio server that exited, a dropped HTTP stream)."""
        conn = self._conns.get(server)
        if conn is None or conn.task.done():
            return False
        # mcp 2.x keeps this on the session's JSON-RPC dispatcher; an SDK without it
        # makes the first call on a dead connection fail instead, which drops it too.
        dispatcher = getattr(conn.client.session, "_dispatcher", None)
        return not getattr(dispatcher, "_closed", False)

    async def _client(self, server: str, timeout_s: float = START_TIMEOUT_S) -> Any:
        if self._running(server):
            return self._conns[server].client
        lock = self._locks.setdefault(server, asyncio.Lock())
        async with lock:
            if self._running(server):
                return self._conns[server].client
            if (dead := self._conns.pop(server, None)) is not None:
                dead.stop.set()
                log.warning("MCP server %s: the connection ended; starting it again", server)
            if self._closed:
                raise AttemptFailed(UNAVAILABLE, f"MCP server {server!r}: the daemon is stopping")
            return await self._start(server, min(timeout_s, START_TIMEOUT_S))

    async def _start(self, server: str, timeout_s: float) -> Any:
        cfg = self.configs[server]
        state = self._states[server]
        state.starts += 1
        ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        stop = asyncio.Event()
        task = asyncio.create_task(self._hold(cfg, ready, stop), name=f"mcp:{server}")
        try:
            client = await asyncio.wait_for(asyncio.shield(ready), timeout_s)
        except TimeoutError:
            ready.add_done_callback(
                lambda f: f.cancelled() or f.exception()
            )  # retrieved: no warning
            stop.set()
            task.cancel()
            state.state, state.last_error = "down", f"did not start within {timeout_s:g}s"
            raise AttemptFailed(
                TIMEOUT, f"MCP server {server!r} did not start within {timeout_s:g}s"
            ) from None
        except Exception as e:  # noqa: BLE001
            raise self._down(server, e, "starting") from None
        self._conns[server] = _Connection(client, task, stop, time.monotonic())
        state.state, state.last_error = "running", ""
        log.info("MCP server %s started (%s, start #%d)", server, cfg.transport, state.starts)
        return client

    async def _hold(
        self, cfg: McpServerConfig, ready: asyncio.Future[Any], stop: asyncio.Event
    ) -> None:
        """The connection's own task: enter the client, hand it out, wait for the stop."""
        from mcp import Client

        try:
            async with contextlib.AsyncExitStack() as stack:
                if cfg.command:
                    from mcp.client.stdio import StdioServerParameters

                    target: Any = StdioServerParameters(
                        command=cfg.command,
                        args=list(cfg.args),
                        env={k: v.reveal() for k, v in cfg.env.items()} or None,
                        cwd=cfg.cwd or None,
                    )
                else:
                    from mcp.client.streamable_http import streamable_http_client

                    http = await stack.enter_async_context(
                        _http_client({k: v.reveal() for k, v in cfg.headers.items()})
                    )
                    target = streamable_http_client(cfg.url, http_client=http)
                client = await stack.enter_async_context(Client(target, cache=None))
                ready.set_result(client)
                await stop.wait()
        except BaseException as e:  # noqa: BLE001 - handed to the starter, or the connection died
            if not ready.done():
                ready.set_exception(e if isinstance(e, Exception) else RuntimeError(repr(e)))
            elif not stop.is_set() and isinstance(e, Exception):
                self._states[cfg.name].state = "down"
                self._states[cfg.name].last_error = self._scrub(_describe(e))
            if isinstance(e, asyncio.CancelledError):
                raise

    def _down(self, server: str, e: BaseException, doing: str) -> AttemptFailed:
        """The connection is unusable: drop it (the next use starts the server again)."""
        conn = self._conns.pop(server, None)
        if conn is not None:
            conn.stop.set()
        text = self._scrub(_describe(e))
        state = self._states[server]
        state.state, state.last_error = "down", text
        log.warning("MCP server %s unavailable while %s: %s", server, doing, text)
        return AttemptFailed(
            UNAVAILABLE, f"MCP server {server!r} unavailable while {doing}: {text}"
        )

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            if secret:
                text = text.replace(secret, "***")
        return text

    def states(self) -> list[ServerState]:
        return [self._states[n] for n in self.names()]

    async def aclose(self) -> None:
        """Stop every server (the daemon drains): stdio children exit, HTTP sessions end."""
        self._closed = True
        conns, self._conns = list(self._conns.values()), {}
        for conn in conns:
            conn.stop.set()
        for conn in conns:
            try:
                await asyncio.wait_for(conn.task, 5.0)
            except (TimeoutError, Exception):  # noqa: BLE001 - a stuck one is cancelled
                conn.task.cancel()
                with contextlib.suppress(BaseException):
                    await conn.task


#: HTTP connections per server (HTTP/1.1: one per call in flight; httpx's default cap), all
#: kept for the next calls when idle: httpx's default of 20 idle ones made every call beyond
#: 20 at once open a connection and close it after its answer.
HTTP_CONNECTIONS = 100


def _http_client(headers: dict[str, str]) -> Any:
    """The SDK's HTTP client for one server, as ``create_mcp_http_client`` makes it (30 s
    to connect, write or wait for a connection, 300 s to read a stream), except that every
    connection of the pool is kept alive when idle, so that concurrent calls reuse their
    connections instead of opening one per call."""
    import httpx2
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

    return httpx2.AsyncClient(
        headers=headers,
        timeout=httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),
        limits=httpx2.Limits(
            max_connections=HTTP_CONNECTIONS, max_keepalive_connections=HTTP_CONNECTIONS
        ),
    )


def _describe(e: BaseException) -> str:
    """A one-line description of a (possibly grouped) SDK or transport exception."""
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    text = str(e).splitlines()[0] if str(e) else ""
    return f"{type(e).__name__}: {text}"[:300] if text else type(e).__name__


def _result_json(result: Any) -> str:
    """A ``CallToolResult`` as the JSON text of a tool result: the structured content when
    there is some, else the text of the content blocks (one block: a JSON text as is, any
    other text as a JSON string; several: a list)."""
    if result.structured_content is not None:
        return json.dumps(result.structured_content)
    parts: list[Any] = []
    for block in result.content:
        if getattr(block, "type", "") == "text":
            parts.append(block.text)
        else:
            parts.append(block.model_dump(mode="json", by_alias=True, exclude_none=True))
    if len(parts) == 1 and isinstance(parts[0], str):
        try:
            json.loads(parts[0])
            return parts[0]
        except ValueError:
            return json.dumps(parts[0])
    return json.dumps(parts)


__all__ = [
    "AttemptFailed",
    "IDEMPOTENCY_KEY",
    "ListedTool",
    "McpServers",
    "ServerState",
    "TOOL_ERROR",
]
