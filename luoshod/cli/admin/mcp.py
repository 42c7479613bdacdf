"""``luoshod mcp list``: the daemon's MCP servers (daemon tools, docs/reference/rules.md R70–R73) —
each one's state and tools, from the ``ListMcpServers`` RPC. The daemon never sends a
secret (header, token, environment value), so this command cannot show one."""

from __future__ import annotations

import argparse
from typing import Any

from luosho.v1 import agent_pb2 as pb

from . import render


def _approval(t: pb.McpTool) -> str:
    """What R72 makes of the tool's annotations (an agent's spec may gate or ungate it)."""
    destructive = t.HasField("destructive_hint") and t.destructive_hint
    read_only = t.HasField("read_only_hint") and t.read_only_hint
    return "gated" if destructive and not read_only else "-"


def _word(enum: Any, value: int) -> str:
    """An enum value as the table says it: MCP_SERVER_STATE_NOT_STARTED → "not started"."""
    prefix = enum.Name(0).removesuffix("UNSPECIFIED")
    return enum.Name(value).removeprefix(prefix).lower().replace("_", " ")


def mcp_list(d: Any, args: argparse.Namespace) -> int:
    resp = d.stub.ListMcpServers(pb.ListMcpServersRequest(refresh=not args.cached), timeout=60)
    if args.json:
        render.emit([render.as_dict(s) for s in resp.servers])
        return 0
    if not resp.servers:
        print("no MCP servers configured ([mcp_servers.NAME] in the daemon's TOML file)")
        return 0
    print(
        render.table(
            ["SERVER", "TRANSPORT", "STATE", "STARTS", "TOOLS", "LAST ERROR"],
            [
                (
                    s.name,
                    _word(pb.McpTransport, s.transport),
                    _word(pb.McpServerState, s.state),
                    s.starts,
                    len(s.tools),
                    render.clip(s.last_error, 60),
                )
                for s in resp.servers
            ],
        )
    )
    rows = [
        (f"{s.name}__{t.name}", _approval(t), render.clip(t.description, 60))
        for s in resp.servers
        for t in s.tools
    ]
    if rows:
        print()
        print(render.table(["TOOL (as agents call it)", "APPROVAL", "DESCRIPTION"], rows))
    return 0


def add_mcp_commands(group: Any, command: Any) -> None:
    p = command(
        group,
        "list",
        mcp_list,
        "each MCP server's state and tools (lists them now unless --cached)",
        "luoshod mcp list\n  luoshod mcp list --cached --json",
    )
    p.add_argument(
        "--cached", action="store_true", help="the tools as last listed: start no server"
    )
