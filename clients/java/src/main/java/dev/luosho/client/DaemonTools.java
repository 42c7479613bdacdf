package dev.luosho.client;

import dev.luosho.v1.*;

/**
 * Daemon tools: tools of the MCP servers in the daemon's configuration, named by an agent's
 * {@code mcp_servers} and called {@code <server>__<tool>}. The daemon runs them itself: their
 * {@code tool.call} events carry {@code executor = TOOL_EXECUTOR_DAEMON}, and the client never
 * hands such a call to the run's tool handlers.
 */
public final class DaemonTools {
  private DaemonTools() {}

  /** Whether a {@code tool.call} event is run by the daemon (its tool.result follows by itself). */
  public static boolean isDaemonCall(Event event) {
    return event.getToolCall().getExecutor() == ToolExecutor.TOOL_EXECUTOR_DAEMON;
  }

  /** An MCP server of the daemon's configuration, optionally limited to some of its tools. */
  public static McpServerUse server(String name, String... allowTools) {
    return McpServerUse.newBuilder().setName(name).addAllAllowTools(java.util.List.of(allowTools)).build();
  }
}
