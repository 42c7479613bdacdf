package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import dev.luosho.v1.*;
import org.junit.jupiter.api.Test;

/**
 * R86 against the shared daemon: the agent's {@code sleep} call ends the run SLEEPING, the
 * session is listed with its wake time, {@code resume} throws {@link SessionSleepingException}
 * and {@code wake} wakes it now.
 */
class R86Test extends SharedDaemonTest {
  @Test
  void aSleepingSessionIsListedRefusedByResumeAndWoken() throws Exception {
    AgentSpec agent = Scripts.sleeper();
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
}
