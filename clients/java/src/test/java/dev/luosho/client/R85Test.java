package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
    AgentSpec agent = Scripts.pagesWithCompaction(summary);
    RunResult result = client.execute("java-r85", "Read pages 1 and 2.", agent,
        Map.of("fetch", Scripts.fetch())).result();
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
}
