"""The MCP server of ``luoshod torture``'s daemon tools (``python -m luoshod.torture.mcptool``).

Not for people: torture starts one (``... http PORT``, streamable HTTP on loopback) for the
whole run and names it in the configuration it gives its daemons (``[mcp_servers.tt]``), so
a restarted daemon reaches it at once and a call in flight when its daemon is killed runs
on to its end there, as on a real server. Its two tools,
``add`` and ``slow`` (answers after ``ms`` milliseconds: a call a kill lands inside), append
one line ``{"key", "tool"}`` per attempt to the file named by ``TORTURE_MCP_ATTEMPTS``,
synced before they answer, the key being the idempotency key the daemon sent (the call id,
R71): torture counts the attempts of each call across kills, and finds a call run again
after its result was recorded.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from mcp.server.mcpserver import Context, MCPServer

from .daemons import die_with_parent

KEY = "luosho.dev/idempotency-key"
ATTEMPTS = os.environ.get("TORTURE_MCP_ATTEMPTS", "")

server = MCPServer("luoshod-torture-tools")


def _record(ctx: Context, tool: str) -> None:
    meta = ctx.request_context.meta or {}
    if not ATTEMPTS:
        return
    with open(ATTEMPTS, "a") as f:
        f.write(json.dumps({"key": str(meta.get(KEY, "")), "tool": tool}) + "\n")
        f.flush()
        os.fsync(f.fileno())


@server.tool(description="Adds two numbers.")
def add(a: int, b: int, ctx: Context) -> str:
    _record(ctx, "add")
    return str(a + b)


@server.tool(description="Answers after ms milliseconds.")
async def slow(ms: int, ctx: Context) -> str:
    _record(ctx, "slow")
    await asyncio.sleep(ms / 1000)
    return f"slept {ms}ms"


def main(argv: list[str]) -> None:
    die_with_parent()  # gone with torture, even when it is killed
    if argv[0] == "stdio":
        server.run("stdio")
        return
    import uvicorn

    uvicorn.run(
        server.streamable_http_app(),
        host="127.0.0.1",
        port=int(argv[1]),
        log_level="warning",
        lifespan="on",
    )


if __name__ == "__main__":
    main(sys.argv[1:])
