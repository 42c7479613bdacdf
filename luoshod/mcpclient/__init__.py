"""The daemon's MCP clients (daemon tools, docs/reference/rules.md R70–R73): the ``[mcp_servers]``
configuration (:mod:`.config`) and the per-daemon connections (:mod:`.manager`), built on
the official ``mcp`` SDK. The engine sees them only through its ``DaemonTools`` protocol."""

from .config import McpServerConfig, parse
from .manager import IDEMPOTENCY_KEY, AttemptFailed, ListedTool, McpServers, ServerState

__all__ = [
    "IDEMPOTENCY_KEY",
    "AttemptFailed",
    "ListedTool",
    "McpServerConfig",
    "McpServers",
    "ServerState",
    "parse",
]
