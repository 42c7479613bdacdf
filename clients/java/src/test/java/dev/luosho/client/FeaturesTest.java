package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import dev.luosho.v1.*;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Reasoning (R84), compaction (R85), durable sleep (R86) and schedules (R87) through the Java
 * client, against the shared real daemon (scripted provider, SQLite).
 */
class FeaturesTest {
  static Client client;

  @BeforeAll
  static void start() {
    client = new Client(Daemon.shared().address);
  }

  @AfterAll
  static void stop() {
    client.close();
  }

  private static ObjectNode call(String tool, ObjectNode turn, String arg, int value) {
    turn.putArray("tool_calls").addObject().put("name", tool).putObject("arguments").put(arg, value);
    return turn;
  }

  private static String script(ObjectNode... turns) {
    ObjectNode settings = Tools.JSON.createObjectNode();
    for (ObjectNode t : turns) settings.withArray("script").add(t);
    return settings.toString();
  }

  @Test
  void r84TheStreamedReasoningIsInTheResultAndTheTurnKeepsItsBlock() throws Exception {
    ObjectNode first = call("add", Tools.JSON.createObjectNode(), "a", 1);
    first.putArray("reasoning").add("I need add.");
    AgentSpec agent = Scripts.agent(false, first, Scripts.text("2")).toBuilder()
        .setReasoning(Reasoning.newBuilder().setEffort("high").setBudgetTokens(4096)).build();
    RunResult result = client.execute("java-r84", "one plus one", agent,
        Map.of("add", args -> args.get("a").asInt() + 1)).result();
    assertEquals(List.of(FinishReason.FINISH_REASON_STOP, "2", "I need add."),
        List.of(result.finishReason(), result.finalText(), result.reasoning()));
    Checkpoint cp = client.getSession("java-r84");
    assertEquals("high", cp.getAgent().getReasoning().getEffort());
    assertEquals(4096, cp.getAgent().getReasoning().getBudgetTokens());
    List<JsonNode> blocks = new java.util.ArrayList<>();
    for (Message m : cp.getMessagesList()) {
      for (ReasoningBlock b : m.getReasoningList()) blocks.add(Tools.JSON.readTree(b.getRawJson()));
    }
    assertEquals(List.of(Tools.JSON.readTree("{\"type\": \"thinking\", \"thinking\": \"I need add.\"}")), blocks);
  }

  @Test
  void r85ThePrunedThenSummarizedByHandWithTheAgentsCompactionModel() {
    String summary = "Two pages were fetched and read.";
    ObjectNode settings = (ObjectNode) readTree(script(
        call("fetch", Scripts.text("a".repeat(300)), "page", 1),
        call("fetch", Scripts.text("b".repeat(300)), "page", 2),
        Scripts.text("Both pages read.")));
    settings.put("context_window", 1_000_000); // so large that nothing compacts by itself
    AgentSpec agent = AgentSpec.newBuilder().setModel("scripted:pages").setInstructions("You read pages.")
        .addTools(ToolSpec.newBuilder().setName("fetch")).setModelSettingsJson(settings.toString())
        .setCompaction(Compaction.newBuilder().setThreshold(0.5).setProtectTokens(100)
            .setModel("scripted:sum").setModelSettingsJson(script(Scripts.text(summary))))
        .build();
    RunResult result = client.execute("java-r85", "Read pages 1 and 2.", agent,
        Map.of("fetch", args -> Map.of("page", args.get("page").asInt(), "body", "r".repeat(1500)))).result();
    assertEquals(FinishReason.FINISH_REASON_STOP, result.finishReason());
    CompactResponse pruned = client.compact("java-r85", CompactionStrategy.COMPACTION_STRATEGY_PRUNE);
    assertTrue(pruned.getCompacted());
    assertTrue(pruned.getCheckpoint().getCompaction().getPrunedBefore() > 0);
    assertEquals("", pruned.getCheckpoint().getCompaction().getSummary());
    CompactResponse both = client.compact("java-r85", CompactionStrategy.COMPACTION_STRATEGY_UNSPECIFIED);
    assertTrue(both.getCompacted());
    assertEquals(List.of(summary, 2), List.of(both.getCheckpoint().getCompaction().getSummary(),
        both.getCheckpoint().getCompaction().getCount()));
    assertThrows(CheckpointNotFoundException.class,
        () -> client.compact("java-r85-nobody", CompactionStrategy.COMPACTION_STRATEGY_PRUNE));
  }

  @Test
  void r86ASleepingSessionIsListedRefusedByResumeAndWoken() throws Exception {
    AgentSpec agent = AgentSpec.newBuilder().setModel("scripted:sleeper").setSleepTool(true)
        .setModelSettingsJson(script(call("sleep", Tools.JSON.createObjectNode(), "seconds", 3600),
            Scripts.text("woke")))
        .build();
    Instant before = Instant.now();
    RunResult slept = client.execute("java-r86", "nap", agent, Map.of()).result();
    assertEquals(FinishReason.FINISH_REASON_SLEEPING, slept.finishReason());
    assertEquals(CheckpointStatus.CHECKPOINT_STATUS_SLEEPING, slept.status());
    List<SessionSummary> sleeping = client.listSessions(CheckpointStatus.CHECKPOINT_STATUS_SLEEPING);
    assertEquals(List.of("java-r86"), sleeping.stream().map(SessionSummary::getSessionId).toList());
    com.google.protobuf.Timestamp ts = sleeping.get(0).getWakeAt();
    Instant wakeAt = Instant.ofEpochSecond(ts.getSeconds(), ts.getNanos());
    assertTrue(!wakeAt.isBefore(before.plusSeconds(3599)) && !wakeAt.isAfter(Instant.now().plusSeconds(3601)),
        wakeAt.toString());

    SessionSleepingException refused = assertThrows(SessionSleepingException.class,
        () -> client.resume("java-r86", Map.of()).result());
    assertTrue(Duration.between(refused.wakeAt().orElseThrow(), wakeAt).abs().toMillis() < 1,
        refused.wakeAt() + " vs " + wakeAt);

    RunResult woken = client.wake("java-r86", Map.of()).result();
    assertEquals(List.of(FinishReason.FINISH_REASON_STOP, "woke"), List.of(woken.finishReason(), woken.finalText()));
    Checkpoint cp = client.getSession("java-r86");
    Message sleepResult = cp.getMessagesList().stream()
        .filter(m -> m.getRole() == Role.ROLE_TOOL && m.getToolName().equals("sleep")).findFirst().orElseThrow();
    assertEquals("resume", Tools.JSON.readTree(sleepResult.getContent()).get("woken").asText());
    assertFalse(cp.hasWakeAt());
    assertThrows(NotSleepingException.class, () -> client.wake("java-r86", Map.of()).result());
  }

  @Test
  void r87AScheduleIsCreatedPausedResumedTriggeredAndDeleted() throws Exception {
    AgentSpec agent = Scripts.agent(false, Scripts.text("tock"));
    ScheduleSpec spec = Requests.cronSchedule("java-yearly", agent, "tick?", "0 0 1 1 *", "Europe/Berlin")
        .toBuilder().setSession(ScheduleSession.SCHEDULE_SESSION_ONE).build();
    Schedule created = client.createSchedule(spec);
    assertEquals("Europe/Berlin", created.getSpec().getCron().getTimeZone());
    assertFalse(created.getPaused());
    assertTrue(created.hasNextFire());
    assertThrows(ScheduleExistsException.class, () -> client.createSchedule(spec));
    assertThrows(InvalidArgumentException.class, () -> client.createSchedule(
        Requests.intervalSchedule("java-bad", agent, "tick?", Duration.ofMillis(1))));

    Schedule paused = client.pauseSchedule("java-yearly");
    assertTrue(paused.getPaused());
    assertFalse(paused.hasNextFire());
    Schedule resumed = client.resumeSchedule("java-yearly");
    assertFalse(resumed.getPaused());
    assertTrue(resumed.hasNextFire());

    TriggerScheduleResponse fire = client.triggerSchedule("java-yearly");
    assertEquals("schedule:java-yearly", fire.getSessionId());
    assertFalse(fire.getRequestId().isEmpty());
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (true) {
      Checkpoint cp = null;
      try {
        cp = client.getSession(fire.getSessionId());
      } catch (CheckpointNotFoundException notYet) {
        // the fire's run has not saved its first checkpoint yet
      }
      if (cp != null && cp.getStatus() == CheckpointStatus.CHECKPOINT_STATUS_FINISHED) {
        assertEquals("tock", cp.getMessages(cp.getMessagesCount() - 1).getContent());
        break;
      }
      assertTrue(System.nanoTime() < deadline, "the triggered fire did not finish");
      Thread.sleep(50);
    }
    Schedule got = client.getSchedule("java-yearly").orElseThrow();
    assertEquals(List.of(1L, fire.getSessionId()), List.of(got.getFired(), got.getLastSessionId()));

    client.deleteSchedule("java-yearly");
    assertEquals(List.of(), client.listSchedules());
    assertTrue(client.getSchedule("java-yearly").isEmpty());
    assertThrows(ScheduleNotFoundException.class, () -> client.deleteSchedule("java-yearly"));
  }

  private static JsonNode readTree(String json) {
    try {
      return Tools.JSON.readTree(json);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
