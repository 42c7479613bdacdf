package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import dev.luosho.v1.*;
import org.junit.jupiter.api.Test;

/**
 * R87 through the {@link AsyncClient} against the shared daemon: an interval schedule created,
 * listed, paused, resumed, triggered (its run finishes in {@code schedule:NAME}) and deleted,
 * with the errors of each.
 */
class R87AsyncTest extends SharedDaemonTest {
  @Test
  void aScheduleIsCreatedPausedResumedTriggeredAndDeletedAsynchronously() throws Exception {
    String name = "java-async-hourly";
    AgentSpec agent = Scripts.agent(false, Scripts.text("tock"));
    ScheduleSpec spec = Requests.intervalSchedule(name, agent, "tick?", Duration.ofHours(1))
        .toBuilder().setSession(ScheduleSession.SCHEDULE_SESSION_ONE).build();
    Schedule created = await(async.createSchedule(spec));
    assertEquals(List.of(name, 3_600_000L), List.of(created.getSpec().getName(), created.getSpec().getIntervalMs()));
    assertFalse(created.getPaused());
    assertTrue(created.hasNextFire());
    failure(ScheduleExistsException.class, async.createSchedule(spec));
    failure(InvalidArgumentException.class, async.createSchedule(
        Requests.cronSchedule("java-async-bad", agent, "tick?", "0 9 * * *", "Mars/Olympus_Mons")));
    assertTrue(await(async.listSchedules()).stream().anyMatch(s -> s.getSpec().getName().equals(name)));
    assertTrue(await(async.getSchedule("java-async-bad")).isEmpty());

    Schedule paused = await(async.pauseSchedule(name));
    assertTrue(paused.getPaused());
    assertFalse(paused.hasNextFire());
    assertTrue(await(async.getSchedule(name)).orElseThrow().getPaused());
    Schedule resumed = await(async.resumeSchedule(name));
    assertFalse(resumed.getPaused());
    assertTrue(resumed.hasNextFire());

    TriggerScheduleResponse fire = await(async.triggerSchedule(name));
    assertEquals("schedule:" + name, fire.getSessionId());
    assertFalse(fire.getRequestId().isEmpty());
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (true) {
      Checkpoint cp = null;
      try {
        cp = await(async.getSession(fire.getSessionId()));
      } catch (java.util.concurrent.ExecutionException notYet) {
        // the fire's run has not saved its first checkpoint yet (CheckpointNotFoundException)
        assertTrue(notYet.getCause() instanceof CheckpointNotFoundException, notYet.toString());
      }
      if (cp != null && cp.getStatus() == CheckpointStatus.CHECKPOINT_STATUS_FINISHED) {
        assertEquals("tock", cp.getMessages(cp.getMessagesCount() - 1).getContent());
        break;
      }
      assertTrue(System.nanoTime() < deadline, "the triggered fire did not finish");
      Thread.sleep(50);
    }
    Schedule got = await(async.getSchedule(name)).orElseThrow();
    assertEquals(List.of(1L, fire.getSessionId()), List.of(got.getFired(), got.getLastSessionId()));

    await(async.deleteSchedule(name));
    assertTrue(await(async.listSchedules()).stream().noneMatch(s -> s.getSpec().getName().equals(name)));
    assertTrue(await(async.getSchedule(name)).isEmpty());
    failure(ScheduleNotFoundException.class, async.deleteSchedule(name));
    failure(ScheduleNotFoundException.class, async.pauseSchedule(name));
    failure(ScheduleNotFoundException.class, async.resumeSchedule(name));
    failure(ScheduleNotFoundException.class, async.triggerSchedule(name));
  }
}
