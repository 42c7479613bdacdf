package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;
import dev.luosho.v1.*;
import org.junit.jupiter.api.Test;

/**
 * R85 against the shared daemon: {@code compact} by hand, a prune then a summary written by
 * the model of the agent's compaction.
 */
class R85Test extends SharedDaemonTest {
  @Test
  void aPruneThenASummaryByHandWithTheAgentsCompactionModel() {
    String summary = "Two pages were fetched and read.";
    ObjectNode settings = (ObjectNode) readTree(Scripts.script(
        Scripts.withCall(Scripts.text("a".repeat(300)), "fetch", "page", 1),
        Scripts.withCall(Scripts.text("b".repeat(300)), "fetch", "page", 2),
        Scripts.text("Both pages read.")));
    settings.put("context_window", 1_000_000); // so large that nothing compacts by itself
    AgentSpec agent = AgentSpec.newBuilder().setModel("scripted:pages").setInstructions("You read pages.")
        .addTools(ToolSpec.newBuilder().setName("fetch")).setModelSettingsJson(settings.toString())
        .setCompaction(Compaction.newBuilder().setThreshold(0.5).setProtectTokens(100)
            .setModel("scripted:sum").setModelSettingsJson(Scripts.script(Scripts.text(summary))))
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

  private static JsonNode readTree(String json) {
    try {
      return Tools.JSON.readTree(json);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
