package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import dev.luosho.v1.*;
import org.junit.jupiter.api.Test;

/**
 * Daemon tools: a daemon with the repository's stdio MCP test server (tests/support/mcp_server.py)
 * as [mcp_servers.files]. Its tool.calls say executor DAEMON and never reach the app's handlers.
 */
class McpTest {
  @Test
  void daemonToolsAreNeverHandedToTheApp() throws Exception {
    Path dir = Daemon.tempDir("luoshod-java-mcp");
    Path server = Path.of("../../tests/support/mcp_server.py").toAbsolutePath().normalize();
    Path toml = dir.resolve("luoshod.toml");
    Files.writeString(toml, "[mcp_servers.files]\ncommand = " + Tools.dumps(Daemon.python())
        + "\nargs = [" + Tools.dumps(server.toString()) + ", \"stdio\"]\n");
    Daemon daemon = Daemon.start(dir, "127.0.0.1:0", "--config", toml.toString());
    try (Client client = new Client(daemon.address)) {
      String script = "{\"script\": [{\"tool_calls\": [{\"name\": \"note\", \"arguments\": {}, \"id\": \"c-note\"},"
          + " {\"name\": \"files__add\", \"arguments\": {\"a\": 40, \"b\": 2}, \"id\": \"c-add\"}]}, {\"text\": \"42\"}]}";
      AgentSpec spec = AgentSpec.newBuilder()
          .setModel("scripted:java-mcp")
          .addTools(ToolSpec.newBuilder().setName("note"))
          .addMcpServers(DaemonTools.server("files"))
          .setToolConcurrency(2)
          .setModelSettingsJson(script)
          .build();
      List<String> asked = Collections.synchronizedList(new ArrayList<>());
      Map<String, ToolHandler> handlers = Map.of(
          "note", args -> { asked.add("note"); return "noted"; },
          "files__add", args -> { asked.add("files__add"); return "from the app"; });
      Run run = client.execute("java-mcp", "go", spec, handlers);
      Map<String, Boolean> daemonCalls = new LinkedHashMap<>();
      for (Event event : run) {
        if (event.hasToolCall()) daemonCalls.put(event.getToolCall().getCall().getId(), DaemonTools.isDaemonCall(event));
      }
      RunResult result = run.result();
      assertEquals("42", result.finalText());
      assertEquals(Map.of("c-note", false, "c-add", true), daemonCalls);
      assertEquals(List.of("note"), asked);
      Checkpoint cp = client.getSession("java-mcp");
      assertTrue(cp.getMessagesList().stream().anyMatch(
          m -> m.getToolCallId().equals("c-add") && m.getContent().contains("42")), cp.toString());
    } finally {
      daemon.stop();
    }
  }
}
