package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import dev.luosho.v1.*;
import org.junit.jupiter.api.Test;

/**
 * R87 against the shared daemon: a cron schedule created, paused, resumed, triggered (its run
 * finishes in {@code schedule:NAME}) and deleted, with the errors of each.
 */
class R87Test extends SharedDaemonTest {
  @Test
  void aScheduleIsCreatedPausedResumedTriggeredAndDeleted() throws Exception {
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
}
