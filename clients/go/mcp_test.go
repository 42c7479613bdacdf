package luosho_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	luosho "github.com/luoshod/luoshod/clients/go"
	pb "github.com/luoshod/luoshod/clients/go/luoshov1"
)

// A daemon with the repository's stdio MCP test server (tests/support/mcp_server.py) as
// [mcp_servers.files]: its tool.calls say executor DAEMON and never reach the app's Tools.
func TestDaemonToolsAreNeverHandedToTheApp(t *testing.T) {
	python, err := daemonPython()
	if err != nil {
		t.Fatal(err)
	}
	server, _ := filepath.Abs(filepath.Join("..", "..", "tests", "support", "mcp_server.py"))
	dir := t.TempDir()
	toml := filepath.Join(dir, "luoshod.toml")
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	conf := "[mcp_servers.files]\ncommand = " + q(python) + "\nargs = [" + q(server) + ", \"stdio\"]\n"
	if err := os.WriteFile(toml, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := startDaemon(t, "--config", toml)
	c := dial(t, addr)

	agent := scripted("mcp", []luosho.Tool{{Name: "note"}},
		`{"tool_calls": [{"name": "note", "arguments": {}, "id": "c-note"},
		                  {"name": "files__add", "arguments": {"a": 40, "b": 2}, "id": "c-add"}]}`,
		`{"text": "42"}`)
	agent.McpServers = []*pb.McpServerUse{luosho.McpServer("files", "add")}
	agent.ToolConcurrency = 2
	var mu sync.Mutex
	var asked []string
	handler := func(name string) luosho.ToolFunc {
		return func(_ context.Context, _ json.RawMessage) (any, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, name)
			return "from the app", nil
		}
	}
	daemonCalls := map[string]bool{}
	res, err := c.Execute(ctxT(t), "go-mcp", agent, "go",
		luosho.Tools{"note": handler("note"), "files__add": handler("files__add")},
		luosho.OnEvent(func(ev *luosho.Event) {
			if ev.GetType() == "tool.call" {
				daemonCalls[ev.GetToolCall().GetCall().GetId()] = luosho.IsDaemonCall(ev)
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	if res.FinishReason != pb.FinishReason_FINISH_REASON_STOP || res.FinalText != "42" {
		t.Fatalf("run: %+v", res)
	}
	if !daemonCalls["c-add"] || daemonCalls["c-note"] {
		t.Fatalf("executors: %v", daemonCalls)
	}
	if strings.Join(asked, ",") != "note" {
		t.Fatalf("the app was asked to run %v", asked)
	}
	cp, err := c.GetSession(ctxT(t), "go-mcp")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range cp.GetMessages() {
		if m.GetToolCallId() == "c-add" && !strings.Contains(m.GetContent(), "42") {
			t.Fatalf("daemon tool result: %q", m.GetContent())
		}
	}
}
