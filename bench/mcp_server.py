#!/usr/bin/env python3
"""The MCP server of bench/mcp_steps.py: one tool, ``work``, that answers at once, over
streamable HTTP on loopback, written with the official ``mcp`` SDK.

    python bench/mcp_server.py PORT     # streamable HTTP on 127.0.0.1:PORT
    python bench/mcp_server.py stdio    # over stdio (started by the daemon)
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("luoshod-bench")


@server.tool(description="Answers at once.")
def work(i: int) -> str:
    return str(i)


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
        sys.exit(0)
    import uvicorn

    uvicorn.run(
        server.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning"
    )
