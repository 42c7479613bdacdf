package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import dev.luosho.v1.*;
import org.junit.jupiter.api.Test;

/**
 * R86 through the {@link AsyncClient} against the shared daemon: the sleeping session is
 * listed with its wake time, {@code resume} fails with {@link SessionSleepingException} and
 * {@code wake} wakes it now, its events going to the listener.
 */
class R86AsyncTest extends SharedDaemonTest {
  @Test
  void aSleepingSessionIsListedRefusedByResumeAndWokenAsynchronously() throws Exception {
    String session = "java-r86-async";
    AgentSpec agent = Scripts.sleeper();
    Instant before = Instant.now();
    RunResult slept = await(async.execute(session, "nap", agent, Map.of(), null));
    assertEquals(FinishReason.FINISH_REASON_SLEEPING, slept.finishReason());
    List<SessionSummary> sleeping = await(async.listSessions(CheckpointStatus.CHECKPOINT_STATUS_SLEEPING))
        .stream().filter(s -> s.getSessionId().equals(session)).toList();
    assertEquals(1, sleeping.size(), sleeping.toString());
    com.google.protobuf.Timestamp ts = sleeping.get(0).getWakeAt();
    Instant wakeAt = Instant.ofEpochSecond(ts.getSeconds(), ts.getNanos());
    assertTrue(!wakeAt.isBefore(before.plusSeconds(3599)) && !wakeAt.isAfter(Instant.now().plusSeconds(3601)),
        wakeAt.toString());

    SessionSleepingException refused = failure(SessionSleepingException.class, async.resume(session, Map.of(), null));
    assertTrue(Duration.between(refused.wakeAt().orElseThrow(), wakeAt).abs().toMillis() < 1,
        refused.wakeAt() + " vs " + wakeAt);

    List<String> seen = Collections.synchronizedList(new ArrayList<>());
    RunResult woken = await(async.wake(session, Map.of(), e -> seen.add(e.getType())));
    assertEquals(List.of(FinishReason.FINISH_REASON_STOP, "woke"), List.of(woken.finishReason(), woken.finalText()));
    assertEquals(woken.events().stream().map(Event::getType).toList(), seen);
    assertEquals("run.done", seen.get(seen.size() - 1));
    Checkpoint cp = await(async.getSession(session));
    Message sleepResult = cp.getMessagesList().stream()
        .filter(m -> m.getRole() == Role.ROLE_TOOL && m.getToolName().equals("sleep")).findFirst().orElseThrow();
    assertEquals("resume", Tools.JSON.readTree(sleepResult.getContent()).get("woken").asText());
    assertFalse(cp.hasWakeAt());
    assertTrue(await(async.listSessions(CheckpointStatus.CHECKPOINT_STATUS_SLEEPING)).stream()
        .noneMatch(s -> s.getSessionId().equals(session)));
    failure(NotSleepingException.class, async.wake(session, Map.of(), null));
  }
}
