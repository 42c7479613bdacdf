package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Collectors;
import dev.luosho.v1.*;
import org.junit.jupiter.api.Test;

/**
 * R75: a retry waits, after its backoff, for the channel to be READY before its next attempt.
 * The daemon is killed -9 again and again with short windows up (0.3-0.7 s), each time away
 * 0.5 s plus its start-up, while one session sends input after input with few attempts in a
 * row allowed (5, 50 ms doubling): attempts failing at once while the channel sits in
 * TRANSIENT_FAILURE would use them up in under a second, long before the daemon is back.
 */
class ReadyRetryTest {
  private static final RetryPolicy FEW = new RetryPolicy(5, Duration.ofMillis(50), Duration.ofSeconds(2), 2.0, 0.2);
  private static final int KILLS = 4;
  private static final int MAX_INPUTS = 40;

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  /** Input k plays turns 3k..3k+2: two tool turns, then text. */
  private static AgentSpec agent() {
    ObjectNode settings = Tools.JSON.createObjectNode();
    ArrayNode script = settings.putArray("script");
    for (int k = 0; k < MAX_INPUTS; k++) {
      for (int a = 1; a <= 2; a++) {
        ObjectNode turn = Tools.JSON.createObjectNode().put("delay_ms", 30);
        turn.putArray("tool_calls").addObject().put("name", "add").putObject("arguments").put("a", a).put("b", 0);
        script.add(turn);
      }
      script.add(Tools.JSON.createObjectNode().put("text", "sum").put("delay_ms", 30));
    }
    return AgentSpec.newBuilder().setModel("scripted:java-ready")
        .addTools(ToolSpec.newBuilder().setName("add"))
        .setModelSettingsJson(settings.toString()).build();
  }

  /** The daemon killed and started again on the same address KILLS times, then left up. */
  private static final class Killer extends Thread {
    final Path dir;
    final String listen;
    volatile Daemon daemon;
    final AtomicInteger killed = new AtomicInteger();
    final AtomicBoolean stop = new AtomicBoolean();
    volatile RuntimeException failure;

    Killer(Path dir, String listen) {
      super("killer");
      this.dir = dir;
      this.listen = listen;
      this.daemon = Daemon.start(dir, listen);
    }

    @Override
    public void run() {
      Random rng = new Random(75);
      try {
        while (!stop.get() && killed.get() < KILLS) {
          Thread.sleep(300 + rng.nextInt(400)); // up for a short while
          daemon.kill9();
          Thread.sleep(500); // away, then its start-up
          daemon = Daemon.start(dir, listen);
          killed.incrementAndGet(); // counted once back: the inputs go on through every outage
        }
      } catch (InterruptedException e) {
        // the test is over
      } catch (RuntimeException e) {
        failure = e;
      }
    }
  }

  private static void check(Checkpoint cp, List<String> sent) {
    assertEquals(sent, cp.getMessagesList().stream().filter(m -> m.getRole() == Role.ROLE_USER)
        .map(Message::getContent).collect(Collectors.toList()), "each input once, in order");
    List<String> calls = cp.getMessagesList().stream().flatMap(m -> m.getToolCallsList().stream())
        .map(ToolCall::getId).collect(Collectors.toList());
    List<String> results = cp.getMessagesList().stream().filter(m -> m.getRole() == Role.ROLE_TOOL)
        .map(Message::getToolCallId).collect(Collectors.toList());
    assertEquals(2 * sent.size(), calls.size());
    assertEquals(calls.stream().sorted().toList(), results.stream().sorted().toList(), "every call one result");
    assertEquals(CheckpointStatus.CHECKPOINT_STATUS_FINISHED, cp.getStatus());
  }

  /** Inputs one after the other through run(sid, input) until the killer is done. */
  private static void drive(String name, Function<String, RunResult> run) throws Exception {
    Path dir = Daemon.tempDir("luoshod-java-ready");
    String listen = "127.0.0.1:" + freePort();
    Killer killer = new Killer(dir, listen);
    killer.start();
    try {
      List<String> sent = new ArrayList<>();
      int attempts = 0;
      for (int k = 0; k < 2 || (killer.killed.get() < KILLS && k < MAX_INPUTS); k++) {
        String input = "input " + k;
        RunResult r;
        try {
          r = run.apply(listen + "|" + input);
        } catch (RuntimeException e) {
          throw new AssertionError(name + " " + input + " after " + killer.killed.get() + " kills: " + e, e);
        }
        assertEquals("sum", r.finalText(), input);
        sent.add(input);
        attempts += r.attempts();
      }
      killer.join(60_000);
      if (killer.failure != null) throw killer.failure;
      System.out.println(name + ": " + killer.killed.get() + " kills, " + sent.size() + " inputs, " + attempts + " attempts");
      assertTrue(attempts > sent.size(), attempts + " attempts for " + sent.size() + " inputs: the kills broke no stream");
      try (Client check = new Client(listen)) {
        check(check.getSession(name), sent);
      }
    } finally {
      killer.stop.set(true);
      killer.interrupt();
      killer.join(60_000);
      killer.daemon.stop();
      try (var files = Files.walk(dir)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
      }
    }
  }

  private static final Map<String, ToolHandler> TOOLS = Map.of("add", args -> args.get("a").asInt());

  @Test
  void blockingRunsOutlastShortWindowsUp() throws Exception {
    AgentSpec agent = agent();
    Client[] client = {null};
    try {
      drive("java-ready-blocking", arg -> {
        String[] parts = arg.split("\\|", 2);
        if (client[0] == null) client[0] = new Client(parts[0], FEW);
        return client[0].execute("java-ready-blocking", parts[1], agent, TOOLS).result();
      });
    } finally {
      if (client[0] != null) client[0].close();
    }
  }

  @Test
  void asyncRunsOutlastShortWindowsUp() throws Exception {
    AgentSpec agent = agent();
    AsyncClient[] client = {null};
    try {
      drive("java-ready-async", arg -> {
        String[] parts = arg.split("\\|", 2);
        if (client[0] == null) client[0] = new AsyncClient(parts[0], FEW);
        try {
          return client[0].execute("java-ready-async", parts[1], agent, TOOLS, null).get(60, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
          throw e.getCause() instanceof RuntimeException re ? re : new RuntimeException(e.getCause());
        } catch (Exception e) {
          throw new RuntimeException(e);
        }
      });
    } finally {
      if (client[0] != null) client[0].close();
    }
  }
}
