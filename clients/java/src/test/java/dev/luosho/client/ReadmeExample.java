package dev.luosho.client;

import dev.luosho.v1.AgentSpec;
import dev.luosho.v1.Event;
import dev.luosho.v1.ToolSpec;
import java.util.Map;

/** The README's example, verbatim between the markers (ReadmeTest checks both agree). */
final class ReadmeExample {
  static final String SCRIPT = "{\"script\": [{\"tool_calls\": [{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}]},"
      + " {\"text\": \"1 + 2 = 3\"}]}";

  static RunResult run(String address) {
    // README-BEGIN
    try (Client client = new Client(address)) {
      AgentSpec agent = AgentSpec.newBuilder().setModel("scripted:demo").setModelSettingsJson(SCRIPT)
          .addTools(ToolSpec.newBuilder().setName("add")).build();
      Map<String, ToolHandler> tools = Map.of("add", args -> args.get("a").asInt() + args.get("b").asInt());
      Run run = client.execute("readme-1", "What is 1 + 2?", agent, tools);
      for (Event event : run) System.out.println(event.getSeq() + " " + event.getType());
      RunResult result = run.result();
      System.out.println(result.finishReason() + ": " + result.finalText()); // FINISH_REASON_STOP: 1 + 2 = 3
      return result;
    }
    // README-END
  }
}
