package dev.luosho.client;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.luosho.v1.*;

/** Agents on the daemon's deterministic `scripted` provider. */
final class Scripts {
  private Scripts() {}

  /** A turn that calls `tool` with {"a": a, "b": b}. */
  static ObjectNode call(String tool, int a, int b) {
    ObjectNode turn = Tools.JSON.createObjectNode();
    ObjectNode c = turn.putArray("tool_calls").addObject().put("name", tool);
    c.putObject("arguments").put("a", a).put("b", b);
    return turn;
  }

  /** {@code turn} with a call of `tool` with {arg: value} added. */
  static ObjectNode withCall(ObjectNode turn, String tool, String arg, int value) {
    turn.putArray("tool_calls").addObject().put("name", tool).putObject("arguments").put(arg, value);
    return turn;
  }

  /** The model settings {"script": [turns…]} as JSON text. */
  static String script(ObjectNode... turns) {
    ObjectNode settings = Tools.JSON.createObjectNode();
    for (ObjectNode t : turns) settings.withArray("script").add(t);
    return settings.toString();
  }

  static ObjectNode text(String text) {
    return Tools.JSON.createObjectNode().put("text", text);
  }

  /** An agent with the tool `add` (needing approval when asked) playing these turns. */
  static AgentSpec agent(boolean addNeedsApproval, ObjectNode... turns) {
    ObjectNode settings = Tools.JSON.createObjectNode();
    ArrayNode script = settings.putArray("script");
    for (ObjectNode t : turns) script.add(t);
    return AgentSpec.newBuilder()
        .setModel("scripted:java")
        .setInstructions("You add numbers.")
        .addTools(ToolSpec.newBuilder().setName("add").setNeedsApproval(addNeedsApproval))
        .setModelSettingsJson(settings.toString())
        .build();
  }

  /**
   * An agent reading two pages with the tool `fetch`, whose compaction (R85) summarizes
   * with the model `scripted:sum` answering {@code summary}; its context window so large
   * that nothing compacts by itself.
   */
  static AgentSpec pagesWithCompaction(String summary) {
    ObjectNode settings = Tools.JSON.createObjectNode();
    ArrayNode script = settings.putArray("script");
    script.add(withCall(text("a".repeat(300)), "fetch", "page", 1));
    script.add(withCall(text("b".repeat(300)), "fetch", "page", 2));
    script.add(text("Both pages read."));
    settings.put("context_window", 1_000_000);
    return AgentSpec.newBuilder().setModel("scripted:pages").setInstructions("You read pages.")
        .addTools(ToolSpec.newBuilder().setName("fetch")).setModelSettingsJson(settings.toString())
        .setCompaction(Compaction.newBuilder().setThreshold(0.5).setProtectTokens(100)
            .setModel("scripted:sum").setModelSettingsJson(script(text(summary))))
        .build();
  }

  /** A page of `fetch`: its number and a long body. */
  static ToolHandler fetch() {
    return args -> java.util.Map.of("page", args.get("page").asInt(), "body", "r".repeat(1500));
  }

  /** An agent with the daemon tool `sleep` (R86) that sleeps an hour, then answers "woke". */
  static AgentSpec sleeper() {
    return AgentSpec.newBuilder().setModel("scripted:sleeper").setSleepTool(true)
        .setModelSettingsJson(script(
            withCall(Tools.JSON.createObjectNode(), "sleep", "seconds", 3600), text("woke")))
        .build();
  }

  static AgentSpec twoAdds() {
    return agent(false, call("add", 1, 2), call("add", 3, 4), text("done"));
  }

  static ToolHandler add() {
    return args -> args.get("a").asInt() + args.get("b").asInt();
  }
}
