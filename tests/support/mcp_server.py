"""A real MCP server for the daemon-tool tests (docs/reference/rules.md R70–R73), written with the
official SDK. Run ``python -m tests.mcp_servers.tools stdio`` or ``... http PORT``.

Every call appends one line ``{"key", "tool", "args"}`` to the file named by
``MCP_ATTEMPTS`` (when set), the key being the idempotency key the daemon sent in the
request's ``_meta`` — so a test counts the attempts per key, even across a kill -9.

``MCP_VARIANT=2`` changes the tool list (``lookup``'s schema gains a field, ``extra``
appears): the server whose list changes between a pause and a resume. ``MCP_TOKEN`` (HTTP):
every request must carry ``Authorization: Bearer <token>``; others get 401.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

KEY = "luosho.dev/idempotency-key"
ATTEMPTS = os.environ.get("MCP_ATTEMPTS", "")
VARIANT = os.environ.get("MCP_VARIANT", "1")

server = MCPServer("luoshod-test-tools")


def _record(ctx: Context, tool: str, args: dict) -> int:
    """Append this attempt; return how many attempts its key has had (this one included)."""
    meta = ctx.request_context.meta or {}
    key = str(meta.get(KEY, ""))
    if not ATTEMPTS:
        return 1
    with open(ATTEMPTS, "a") as f:
        f.write(json.dumps({"key": key, "tool": tool, "args": args}) + "\n")
        f.flush()
        os.fsync(f.fileno())
    with open(ATTEMPTS) as f:
        return sum(1 for line in f if json.loads(line)["key"] == key and key)


if VARIANT == "2":

    @server.tool(
        description="Looks a word up, in a language.",
        annotations=ToolAnnotations(read_only_hint=True),
    )
    def lookup(word: str, lang: str, ctx: Context) -> str:  # the changed schema
        _record(ctx, "lookup", {"word": word, "lang": lang})
        return f"{word} ({lang}): found"

    @server.tool(description="A tool that appeared.")
    def extra(ctx: Context) -> str:
        return "extra"

else:

    @server.tool(description="Looks a word up.", annotations=ToolAnnotations(read_only_hint=True))
    def lookup(word: str, ctx: Context) -> str:
        _record(ctx, "lookup", {"word": word})
        return f"{word}: found"


@server.tool(description="Deletes a record.", annotations=ToolAnnotations(destructive_hint=True))
def delete_record(record: str, ctx: Context) -> str:
    _record(ctx, "delete_record", {"record": record})
    return f"deleted {record}"


@server.tool(description="Adds two numbers (no annotations).")
def add(a: int, b: int, ctx: Context) -> str:
    _record(ctx, "add", {"a": a, "b": b})
    return str(a + b)


@server.tool(description="Answers after a while.")
async def slow(ms: int, ctx: Context) -> str:
    _record(ctx, "slow", {"ms": ms})
    await asyncio.sleep(ms / 1000)
    return f"slept {ms}ms"


@server.tool(description="Fails twice for a key, then answers.")
def flaky(ctx: Context) -> str:
    n = _record(ctx, "flaky", {})
    if n <= 2:
        raise ToolError(f"flaky failure #{n}")
    return f"answered on attempt {n}"


@server.tool(description="Never answers.")
async def hang(ctx: Context) -> str:
    _record(ctx, "hang", {})
    await asyncio.Event().wait()
    return "unreachable"


@server.tool(description="Hangs on the first attempt of a key, answers on the next.")
async def hang_once(ctx: Context) -> str:
    n = _record(ctx, "hang_once", {})
    if n == 1:
        await asyncio.Event().wait()
    return f"answered on attempt {n}"


def _http(port: int) -> None:
    import uvicorn
    from starlette.responses import PlainTextResponse

    app = server.streamable_http_app()
    token = os.environ.get("MCP_TOKEN", "")

    async def guarded(scope, receive, send):  # type: ignore[no-untyped-def]
        if token and scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization", b"").decode() != f"Bearer {token}":
                await PlainTextResponse("unauthorized", status_code=401)(scope, receive, send)
                return
        await app(scope, receive, send)

    uvicorn.run(guarded, host="127.0.0.1", port=port, log_level="warning", lifespan="on")


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        _http(int(sys.argv[2]))
