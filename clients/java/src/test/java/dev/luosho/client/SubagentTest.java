package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import dev.luosho.v1.*;
import org.junit.jupiter.api.Test;

/**
 * Issue 15 in the Java client: a sub-agent's tool calls reach the app's handlers like the
 * lead's, and a handler made with {@link ToolHandler#withContext} sees which sub-agent asks
 * (name, depth, path, task id); events and approvals say it too ({@link SubagentInfo}).
 * Against the shared real daemon, on the scripted provider.
 */
class SubagentTest {
  private static ObjectNode turn(String tool, ObjectNode arguments) {
    ObjectNode t = Tools.JSON.createObjectNode();
    t.putArray("tool_calls").addObject().put("name", tool).set("arguments", arguments);
    return t;
  }

  private static ObjectNode args(String key, Object value) {
    return Tools.JSON.valueToTree(Map.of(key, value));
  }

  private static AgentSpec scripted(String model, List<ObjectNode> turns, ToolSpec... tools) {
    ObjectNode settings = Tools.JSON.createObjectNode();
    settings.putArray("script").addAll(turns);
    return AgentSpec.newBuilder().setModel("scripted:" + model).addAllTools(List.of(tools))
        .setModelSettingsJson(settings.toString()).build();
  }

  /**
   * The lead looks something up itself, then hands a task to "researcher", whose own
   * sub-agent "helper" looks up too; the researcher then books, which needs approval.
   */
  private static AgentSpec lead() {
    ToolSpec lookup = ToolSpec.newBuilder().setName("lookup").build();
    ToolSpec book = ToolSpec.newBuilder().setName("book").setNeedsApproval(true).build();
    AgentSpec helper = scripted("helper", List.of(turn("lookup", args("q", "helper's")),
        Tools.JSON.createObjectNode().put("text", "helped")), lookup);
    ObjectNode toHelper = Tools.JSON.createObjectNode().put("agent", "helper").put("prompt", "look it up");
    AgentSpec researcher = scripted("researcher", List.of(turn("lookup", args("q", "researcher's")),
        turn("task", toHelper), turn("book", args("order", 42)),
        Tools.JSON.createObjectNode().put("text", "booked")), lookup, book).toBuilder()
        .addSubagents(SubAgent.newBuilder().setName("helper").setDescription("helps").setAgent(helper))
        .build();
    ObjectNode toResearcher = Tools.JSON.createObjectNode().put("agent", "researcher").put("prompt", "find and book");
    return scripted("lead", List.of(turn("lookup", args("q", "lead's")), turn("task", toResearcher),
        Tools.JSON.createObjectNode().put("text", "all done")), lookup).toBuilder()
        .addSubagents(SubAgent.newBuilder().setName("researcher").setDescription("finds and books")
            .setAgent(researcher))
        .setMaxSubagentDepth(2)
        .build();
  }

  /** Who asked each call, by the query (or "book"): the path, or "lead". */
  private static Map<String, ToolHandler> tools(Map<String, String> askedBy, Map<String, ToolContext> contexts) {
    return Map.of(
        "lookup", ToolHandler.withContext((args, ctx) -> {
          String q = args.get("q").asText();
          askedBy.put(q, ctx.subagent().map(s -> String.join("/", s.path())).orElse("lead"));
          contexts.put(q, ctx);
          return "found for " + ctx.subagent().map(SubagentInfo::name).orElse("lead");
        }),
        "book", ToolHandler.withContext((args, ctx) -> {
          askedBy.put("book", ctx.subagent().map(s -> String.join("/", s.path())).orElse("lead"));
          contexts.put("book", ctx);
          return Map.of("booked", args.get("order").asInt());
        }));
  }

  @Test
  void handlersSeeWhichSubagentAsksAndApprovalsSayWhere() {
    Map<String, String> askedBy = new ConcurrentHashMap<>();
    Map<String, ToolContext> contexts = new ConcurrentHashMap<>();
    Map<String, ToolHandler> tools = tools(askedBy, contexts);
    try (Client client = new Client(Daemon.shared().address)) {
      Run run = client.execute("java-sub-1", "plan it", lead(), tools);
      RunResult paused = run.result();
      assertEquals(FinishReason.FINISH_REASON_AWAITING_APPROVAL, paused.finishReason());
      assertEquals(Map.of("lead's", "lead", "researcher's", "researcher", "helper's", "researcher/helper"), askedBy);

      ToolContext lead = contexts.get("lead's");
      assertEquals(Optional.empty(), lead.subagent());
      assertEquals("java-sub-1", lead.sessionId());
      assertEquals("lookup", lead.toolName());
      assertFalse(lead.toolCallId().contains("/"), lead.toolCallId());
      SubagentInfo researcher = contexts.get("researcher's").subagent().orElseThrow();
      assertEquals("researcher", researcher.name());
      assertEquals(1, researcher.depth());
      assertEquals(List.of("researcher"), researcher.path());
      assertTrue(researcher.taskId().startsWith("task_"), researcher.taskId());
      assertTrue(contexts.get("researcher's").toolCallId().contains("/"), "a sub-agent's call id is qualified");
      SubagentInfo helper = contexts.get("helper's").subagent().orElseThrow();
      assertEquals(new SubagentInfo("helper", 2, List.of("researcher", "helper"), helper.taskId()), helper);
      assertTrue(contexts.get("helper's").timeoutMs() > 0);

      // Events say who caused them: the lead's have no tag, the sub-agents' their path (the
      // `task` calls are the daemon's: no tool.call event).
      List<Event> calls = paused.events().stream().filter(e -> e.getType().equals("tool.call")).toList();
      assertEquals(List.of(List.of(), List.of("researcher"), List.of("researcher", "helper")),
          calls.stream().map(e -> SubagentInfo.of(e).map(SubagentInfo::path).orElse(List.of())).toList());
      assertEquals(List.of(Optional.empty(), Optional.of(1), Optional.of(2)),
          calls.stream().map(e -> SubagentInfo.of(e).map(SubagentInfo::depth)).toList());
      assertEquals(Optional.empty(), SubagentInfo.of(paused.events().get(0))); // run.start is the lead's

      // The researcher's book call paused the run: its approval names the path.
      List<Approval> approvals = client.listApprovals("java-sub-1");
      assertEquals(1, approvals.size());
      assertEquals(List.of("researcher"), SubagentInfo.pathOf(approvals.get(0)));
      RunResult done = client.resolve(approvals.get(0).getApprovalId(), true, "ok", "java-sub-1", tools).result();
      assertEquals("all done", done.finalText());
      assertEquals("researcher", askedBy.get("book"));
      assertEquals(Optional.of("researcher"), contexts.get("book").subagent().map(SubagentInfo::name));
    }
  }

  @Test
  void theAsyncClientsHandlersSeeItToo() throws Exception {
    Map<String, String> askedBy = new ConcurrentHashMap<>();
    Map<String, ToolHandler> tools = tools(askedBy, new ConcurrentHashMap<>());
    try (AsyncClient client = new AsyncClient(Daemon.shared().address)) {
      RunResult paused = client.execute("java-sub-2", "plan it", lead(), tools, null).get(60, TimeUnit.SECONDS);
      assertEquals(FinishReason.FINISH_REASON_AWAITING_APPROVAL, paused.finishReason());
      assertEquals(Map.of("lead's", "lead", "researcher's", "researcher", "helper's", "researcher/helper"), askedBy);
    }
  }

  @Test
  void aPlainHandlerStillWorksAndAContextHandlerCalledWithoutOneGetsAnEmptyContext() throws Exception {
    ToolHandler plain = args -> args.get("a").asInt() + 1;
    assertEquals(3, plain.call(Tools.JSON.createObjectNode().put("a", 2),
        new ToolContext("s", "c", "t", 1, 1000, Optional.empty())));
    ToolHandler aware = ToolHandler.withContext((args, ctx) -> ctx.subagent().isPresent() + ":" + ctx.toolCallId());
    assertEquals("false:", aware.call(Tools.JSON.createObjectNode()));
  }
}
