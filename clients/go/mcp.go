package luosho

import pb "github.com/luoshod/luoshod/clients/go/luoshov1"

// McpServer names an MCP server of the daemon's configuration for Agent.McpServers, with
// an optional allow-list of its tools (their own names, without "<server>__"). Set the
// other fields of the returned message (TimeoutMs, Retry, ToolOverrides) as needed.
func McpServer(name string, allowTools ...string) *pb.McpServerUse {
	return &pb.McpServerUse{Name: name, AllowTools: allowTools}
}

// IsDaemonCall reports whether a tool.call event is run by the daemon itself (a tool of
// one of its MCP servers): its tool.result follows without the app doing anything. The
// client never hands such a call to the run's Tools.
func IsDaemonCall(ev *Event) bool {
	return ev.GetToolCall().GetExecutor() == pb.ToolExecutor_TOOL_EXECUTOR_DAEMON
}
