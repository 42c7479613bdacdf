package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.luosho.v1.BudgetExceeded;
import dev.luosho.v1.CheckpointStatus;
import dev.luosho.v1.Event;
import dev.luosho.v1.FinishReason;
import dev.luosho.v1.RunDone;
import dev.luosho.v1.Usage;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A run a limit stopped: its finish reason and the budget.exceeded event's payload in the
 * RunResult, read from events as they arrive on the wire (serialized and parsed again).
 */
class BudgetExceededTest {
  private static List<Event> fromTheWire(Event... events) throws Exception {
    List<Event> parsed = new ArrayList<>();
    for (Event e : events) parsed.add(Event.parseFrom(e.toByteArray()));
    return parsed;
  }

  private static Event event(long seq, String type) {
    return Event.newBuilder().setSessionId("s").setRunId("r").setSeq(seq).setType(type).build();
  }

  @Test
  void aRunOverItsBudgetCarriesWhatTripped() throws Exception {
    BudgetExceeded tripped = BudgetExceeded.newBuilder()
        .setScope("ancestor").setLimit("cost_usd").setValue(1.0).setUsed(0.75).setWorstCase(0.5)
        .addPath("researcher")
        .setUsage(Usage.newBuilder().setPromptTokens(900).setCostUsd(0.75)
            .setCachedInputTokens(600).setReasoningTokens(9))
        .build();
    RunResult result = RunResult.of("s", fromTheWire(
        event(1, "run.start"),
        event(2, "budget.exceeded").toBuilder().setBudgetExceeded(tripped).build(),
        event(3, "run.done").toBuilder().setRunDone(RunDone.newBuilder()
            .setFinishReason(FinishReason.FINISH_REASON_BUDGET_EXCEEDED)
            .setStatus(CheckpointStatus.CHECKPOINT_STATUS_IN_PROGRESS)
            .setUsage(Usage.newBuilder().setCostUsd(0.75).setCachedInputTokens(600))).build()),
        false, "req-1", 1);
    assertEquals(FinishReason.FINISH_REASON_BUDGET_EXCEEDED, result.finishReason());
    assertEquals(tripped, result.budgetExceeded());
    assertEquals("cost_usd", result.budgetExceeded().getLimit());
    assertEquals(List.of("researcher"), result.budgetExceeded().getPathList());
    assertEquals(600, result.usage().getCachedInputTokens());
  }

  @Test
  void aRunPastItsDeadlineAndARunWithoutALimit() throws Exception {
    BudgetExceeded late = BudgetExceeded.newBuilder()
        .setScope("run").setLimit("wall_clock_ms").setValue(60000).setUsed(60250).build();
    RunResult result = RunResult.of("s", fromTheWire(
        event(1, "budget.exceeded").toBuilder().setBudgetExceeded(late).build(),
        event(2, "run.done").toBuilder().setRunDone(RunDone.newBuilder()
            .setFinishReason(FinishReason.FINISH_REASON_DEADLINE_EXCEEDED)).build()),
        false, "req-2", 1);
    assertEquals(FinishReason.FINISH_REASON_DEADLINE_EXCEEDED, result.finishReason());
    assertEquals(60250.0, result.budgetExceeded().getUsed());

    RunResult plain = RunResult.of("s", fromTheWire(event(1, "run.done").toBuilder()
        .setRunDone(RunDone.newBuilder().setFinishReason(FinishReason.FINISH_REASON_STOP)).build()),
        false, "req-3", 1);
    assertNull(plain.budgetExceeded());
  }
}
