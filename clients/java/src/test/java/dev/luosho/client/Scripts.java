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

  static AgentSpec twoAdds() {
    return agent(false, call("add", 1, 2), call("add", 3, 4), text("done"));
  }

  static ToolHandler add() {
    return args -> args.get("a").asInt() + args.get("b").asInt();
  }
}
