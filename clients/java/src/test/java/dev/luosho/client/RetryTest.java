package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import dev.luosho.v1.*;
import org.junit.jupiter.api.Test;

/** Retries without duplicates (docs/reference/rules.md R74–R75). */
class RetryTest {
  private static final RetryPolicy QUICK = new RetryPolicy(3, Duration.ZERO, Duration.ZERO, 2.0, 0.2);

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  /** Records the request_id of every request a channel sends. */
  private static final class RequestIdsSent implements ClientInterceptor {
    final List<String> ids = Collections.synchronizedList(new ArrayList<>());

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
      return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
        @Override
        public void sendMessage(Q message) {
          if (message instanceof com.google.protobuf.Message m) {
            var field = m.getDescriptorForType().findFieldByName("request_id");
            if (field != null) ids.add((String) m.getField(field));
          }
          super.sendMessage(message);
        }
      };
    }
  }

  private static List<String> userInputs(Checkpoint cp) {
    return cp.getMessagesList().stream().filter(m -> m.getRole() == Role.ROLE_USER)
        .map(Message::getContent).collect(Collectors.toList());
  }

  /** Every tool call of the transcript has exactly one result, and every result a call. */
  private static void assertOneResultPerCall(Checkpoint cp, int expectedCalls) {
    List<String> calls = cp.getMessagesList().stream().flatMap(m -> m.getToolCallsList().stream())
        .map(ToolCall::getId).collect(Collectors.toList());
    Map<String, Long> results = cp.getMessagesList().stream().filter(m -> m.getRole() == Role.ROLE_TOOL)
        .collect(Collectors.groupingBy(Message::getToolCallId, Collectors.counting()));
    assertEquals(expectedCalls, calls.size(), cp.getSessionId());
    assertEquals(calls.size(), results.size(), cp.getSessionId());
    for (String call : calls) assertEquals(1L, results.get(call), cp.getSessionId() + " " + call);
  }

  private static void assertDeliveredOnce(List<Event> events) {
    long last = 0;
    for (Event e : events) {
      if (e.getSeq() == 0) continue; // progress (text.delta)
      assertTrue(e.getSeq() > last, "event " + e.getSeq() + " after " + last + ": delivered twice or out of order");
      last = e.getSeq();
    }
  }

  @Test
  void requestIdsAreUuid7InTimeOrder() {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 50; i++) ids.add(RequestIds.newRequestId());
    assertEquals(50, ids.stream().distinct().count());
    for (String id : ids) {
      assertEquals(36, id.length(), id);
      assertEquals(7, UUID.fromString(id).version(), id);
      assertEquals(2, UUID.fromString(id).variant(), id);
      assertTrue("89ab".indexOf(id.charAt(19)) >= 0, id);
    }
    List<String> prefixes = ids.stream().map(i -> i.substring(0, 13)).collect(Collectors.toList());
    assertEquals(prefixes.stream().sorted().collect(Collectors.toList()), prefixes); // the millisecond prefix
    UUID at = RequestIds.uuid7(0x0123_4567_89ABL, new Random(1));
    assertTrue(at.toString().startsWith("01234567-89ab-7"), at.toString());
  }

  @Test
  void policyValidatesAndBacksOffWithJitter() {
    assertThrows(IllegalArgumentException.class, () -> RetryPolicy.DEFAULT.withMaxAttempts(0));
    assertThrows(IllegalArgumentException.class, () -> new RetryPolicy(2, Duration.ofMillis(-1), Duration.ZERO, 2, 0));
    assertThrows(IllegalArgumentException.class, () -> new RetryPolicy(2, Duration.ZERO, Duration.ZERO, 0.5, 0));
    assertThrows(IllegalArgumentException.class, () -> new RetryPolicy(2, Duration.ZERO, Duration.ZERO, 2, 1.5));
    RetryPolicy exact = new RetryPolicy(5, Duration.ofMillis(100), Duration.ofMillis(350), 2.0, 0);
    assertEquals(List.of(100L, 200L, 350L, 350L),
        List.of(exact.backoff(1).toMillis(), exact.backoff(2).toMillis(), exact.backoff(3).toMillis(),
            exact.backoff(9).toMillis()));
    for (int i = 0; i < 100; i++) {
      long ms = RetryPolicy.DEFAULT.backoff(1).toMillis();
      assertTrue(ms >= 80 && ms <= 120, "jitter ±20% of 100 ms: " + ms);
    }
    assertFalse(RetryPolicy.NO_RETRY.retries());
    assertTrue(RetryPolicy.DEFAULT.retries());
  }

  @Test
  void whatIsRetried() {
    LuoshoException unavailable = Errors.translate(Status.UNAVAILABLE.asRuntimeException());
    LuoshoException reset = Errors.translate(Status.INTERNAL.withDescription("RST_STREAM").asRuntimeException());
    LuoshoException busy = new SessionBusyException(Status.Code.ABORTED, "SESSION_BUSY", "", Map.of(), null);
    LuoshoException answered = new LuoshoException(Status.Code.INTERNAL, "STORE_ERROR", "", Map.of(), null);
    RetryPolicy p = RetryPolicy.DEFAULT.withMaxAttempts(3);
    assertTrue(p.shouldRetry(unavailable, 1, 0));
    assertTrue(p.shouldRetry(unavailable, 2, 40)); // UNAVAILABLE at any point
    assertFalse(p.shouldRetry(unavailable, 3, 0)); // the attempts in a row are bounded
    assertTrue(p.shouldRetry(reset, 1, 0)); // a transport failure before the first event
    assertFalse(p.shouldRetry(reset, 1, 1)); // ... not after it
    assertFalse(p.shouldRetry(busy, 1, 0)); // an answer of the daemon
    assertFalse(p.shouldRetry(answered, 1, 0));
    // Netty fails every stream of a connection that closed under it with UNKNOWN "channel
    // closed" (seen in CI mid-run): the daemon went away, retried at any point like UNAVAILABLE.
    LuoshoException closed = Errors.translate(Status.UNKNOWN.withDescription("channel closed")
        .withCause(new java.nio.channels.ClosedChannelException()).asRuntimeException());
    assertTrue(p.shouldRetry(closed, 2, 40));
    assertFalse(p.shouldRetry(closed, 3, 0));
    assertFalse(RetryPolicy.NO_RETRY.shouldRetry(unavailable, 1, 0));
    // A tool result sent on a connection that closed under it fails the same way (seen in CI:
    // Netty's write on the closed channel): the stream's retry asks for the call again.
    assertTrue(p.leavesSubmissionToRetry(closed));
    assertTrue(p.leavesSubmissionToRetry(unavailable));
    assertTrue(p.leavesSubmissionToRetry(
        new ToolCallNotPendingException(Status.Code.FAILED_PRECONDITION, "TOOL_CALL_NOT_PENDING", "", Map.of(), null)));
    assertFalse(p.leavesSubmissionToRetry(answered));
    assertFalse(p.leavesSubmissionToRetry(busy));
    assertFalse(p.leavesSubmissionToRetry(reset)); // not the connection closing under it
    assertFalse(RetryPolicy.NO_RETRY.leavesSubmissionToRetry(closed));
  }

  @Test
  void unavailableIsRetriedWithTheSameRequestId() throws Exception {
    String down = "127.0.0.1:" + freePort(); // nothing listens there
    RequestIdsSent sent = new RequestIdsSent();
    ManagedChannel channel = ManagedChannelBuilder.forTarget(down).usePlaintext().intercept(sent).build();
    try (Client client = new Client(channel, QUICK)) {
      Run run = client.execute("down-1", "hi", Scripts.twoAdds(), Map.of());
      assertThrows(UnavailableException.class, run::result);
      assertEquals(3, run.attempts());
      assertEquals(7, UUID.fromString(run.requestId()).version());
      assertEquals(List.of(run.requestId(), run.requestId(), run.requestId()), sent.ids);

      sent.ids.clear();
      ExecuteRequest mine = Requests.execute("down-1", Scripts.twoAdds(), "hi").toBuilder()
          .setRequestId("mine-1").build();
      Run given = new Client(channel, QUICK.withMaxAttempts(2)).execute(mine, Map.of());
      assertThrows(UnavailableException.class, given::result);
      assertEquals(2, given.attempts());
      assertEquals("mine-1", given.requestId());
      assertEquals(List.of("mine-1", "mine-1"), sent.ids);

      sent.ids.clear();
      Run once = new Client(channel, RetryPolicy.NO_RETRY).resume("down-1", Map.of());
      assertThrows(UnavailableException.class, once::result);
      assertEquals(1, once.attempts());
      assertEquals(1, sent.ids.size());
      assertFalse(sent.ids.get(0).isEmpty());

      sent.ids.clear();
      try (AsyncClient async = new AsyncClient(channel, QUICK)) {
        ExecutionException failed = assertThrows(ExecutionException.class,
            () -> async.resolve("appr-1", true, "", Map.of(), null).get(30, TimeUnit.SECONDS));
        assertTrue(failed.getCause() instanceof UnavailableException, failed.toString());
        assertEquals(3, sent.ids.size());
        assertEquals(1, sent.ids.stream().distinct().count());
      }
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  @Test
  void theSameRequestIdReplaysAFinishedRunAndRunsNoTool() {
    Daemon daemon = Daemon.shared();
    AtomicInteger ran = new AtomicInteger();
    Map<String, ToolHandler> tools = Map.of("add", args -> {
      ran.incrementAndGet();
      return args.get("a").asInt() + args.get("b").asInt();
    });
    try (Client client = new Client(daemon.address)) {
      ExecuteRequest request = Requests.execute("java-rid-replay", Scripts.twoAdds(), "Add twice").toBuilder()
          .setRequestId("java-rid-1").build();
      RunResult first = client.execute(request, tools).result();
      assertEquals("java-rid-1", first.requestId());
      assertEquals(1, first.attempts());
      assertEquals(2, ran.get());
      assertTrue(first.events().stream().noneMatch(Event::getReplayed));

      RunResult again = client.execute(request, tools).result();
      assertEquals(2, ran.get()); // replayed tool.calls are not answered
      assertTrue(again.events().stream().allMatch(Event::getReplayed), again.events().toString());
      assertEquals(first.events().stream().map(Event::getSeq).collect(Collectors.toList()),
          again.events().stream().map(Event::getSeq).collect(Collectors.toList()));
      assertEquals(first.finalText(), again.finalText());
      assertEquals(first.messageCount(), again.messageCount());
      Checkpoint cp = client.getSession("java-rid-replay");
      assertEquals(List.of("Add twice"), userInputs(cp)); // the input once
      assertOneResultPerCall(cp, 2);

      ExecuteRequest other = Requests.execute("java-rid-replay", Scripts.twoAdds(), "Something else")
          .toBuilder().setRequestId("java-rid-1").build();
      InvalidArgumentException reused = assertThrows(InvalidArgumentException.class,
          () -> client.execute(other, tools).result());
      assertEquals("REQUEST_ID_REUSED", reused.reason());
      assertEquals(List.of("Add twice"), userInputs(client.getSession("java-rid-replay")));

      // Without an id of its own every call gets a new one: a second input is a new turn.
      Run fresh = client.execute("java-rid-replay", "And again", Scripts.twoAdds(), tools);
      fresh.result();
      assertNotEquals("java-rid-1", fresh.requestId());
      assertEquals(List.of("Add twice", "And again"), userInputs(client.getSession("java-rid-replay")));
    }
  }

  @Test
  void closeEndsARunWaitingOutItsBackoff() throws Exception {
    String down = "127.0.0.1:" + freePort();
    RetryPolicy slow = new RetryPolicy(5, Duration.ofSeconds(30), Duration.ofSeconds(30), 2.0, 0);
    try (Client client = new Client(down, slow)) {
      Run run = client.execute("down-2", "hi", Scripts.twoAdds(), Map.of());
      Thread closer = new Thread(() -> {
        try {
          Thread.sleep(500);
        } catch (InterruptedException ignored) {
          // close now
        }
        run.close();
      });
      long t0 = System.nanoTime();
      closer.start();
      assertThrows(UnavailableException.class, run::result);
      assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(10), "close() did not end the backoff");
      assertEquals(1, run.attempts());
      closer.join();
    }
  }

  @Test
  void aResolveSentAgainReplaysItsRunAndTheToolRunsOnce() {
    AtomicInteger ran = new AtomicInteger();
    Map<String, ToolHandler> tools = Map.of("add", args -> {
      ran.incrementAndGet();
      return args.get("a").asInt() + args.get("b").asInt();
    });
    AgentSpec agent = Scripts.agent(true, Scripts.call("add", 2, 5), Scripts.text("approved and done"));
    try (Client client = new Client(Daemon.shared().address)) {
      RunResult paused = client.execute("java-rid-resolve", "Add with approval", agent, tools).result();
      assertEquals(FinishReason.FINISH_REASON_AWAITING_APPROVAL, paused.finishReason());
      ResolveRequest request = Requests.resolve(paused.approvalId(), true, "fine", "java-rid-resolve")
          .toBuilder().setRequestId("java-resolve-1").build();
      RunResult done = client.resolve(request, tools).result();
      assertEquals("approved and done", done.finalText());
      assertEquals(1, ran.get());
      RunResult again = client.resolve(request, tools).result();
      assertEquals("approved and done", again.finalText());
      assertEquals(1, ran.get()); // replayed: the approved call is not run again
      assertTrue(again.events().stream().allMatch(Event::getReplayed));
      assertEquals(List.of("Add with approval"), userInputs(client.getSession("java-rid-resolve")));
      assertOneResultPerCall(client.getSession("java-rid-resolve"), 1);
    }
  }

  @Test
  void daemonKilledMidRunThenRestartedTheRetryAppliesTheInputOnce() throws Exception {
    Path dir = Daemon.tempDir("luoshod-java-retry");
    String listen = "127.0.0.1:" + freePort();
    Daemon[] daemon = {Daemon.start(dir, listen)};
    AtomicInteger ran = new AtomicInteger();
    List<Thread> restarts = new ArrayList<>();
    Map<String, ToolHandler> tools = Map.of("add", args -> {
      if (ran.incrementAndGet() == 1) {
        // Kill -9 while this call waits for its result; back after a while.
        daemon[0].kill9();
        Thread restart = new Thread(() -> {
          try {
            Thread.sleep(500);
          } catch (InterruptedException e) {
            return;
          }
          daemon[0] = Daemon.start(dir, listen);
        });
        restart.start();
        restarts.add(restart);
      }
      return args.get("a").asInt() + args.get("b").asInt();
    });
    try (Client client = new Client(listen)) { // the default retries
      ExecuteRequest request = Requests.execute("java-kill", Scripts.twoAdds(), "Add twice");
      Run run = client.execute(request, tools);
      List<Event> seen = new ArrayList<>();
      for (Event e : run) seen.add(e);
      RunResult result = run.result();
      for (Thread t : restarts) t.join(30_000);

      assertEquals(FinishReason.FINISH_REASON_STOP, result.finishReason());
      assertEquals("done", result.finalText());
      assertTrue(result.attempts() >= 2, "attempts: " + result.attempts());
      assertEquals(result.attempts(), run.attempts());
      assertEquals(seen, result.events());
      assertDeliveredOnce(seen);
      // The retry resumed the run and asked for the first call again: it got the result the
      // tool had already computed (the tool ran once per call).
      assertEquals(2, ran.get());
      assertEquals(2, seen.stream().filter(Event::hasRunStart).count());
      Checkpoint cp = client.getSession("java-kill");
      assertEquals(List.of("Add twice"), userInputs(cp));
      assertOneResultPerCall(cp, 2);
      assertEquals(List.of("3", "7"), cp.getMessagesList().stream().filter(m -> m.getRole() == Role.ROLE_TOOL)
          .map(Message::getContent).collect(Collectors.toList()));

      // Killed again after the run ended: the same request, sent again, is recognised from
      // the store and replayed; nothing new is applied.
      daemon[0].kill9();
      daemon[0] = Daemon.start(dir, listen);
      RunResult replay = client.execute(run.requestId().equals(request.getRequestId()) ? request
          : request.toBuilder().setRequestId(run.requestId()).build(), tools).result();
      assertEquals(2, ran.get());
      assertEquals("done", replay.finalText());
      assertTrue(replay.events().stream().allMatch(Event::getReplayed));
      assertEquals(List.of("Add twice"), userInputs(client.getSession("java-kill")));
    } finally {
      daemon[0].stop();
    }
  }

  /** Inputs of a session's script: per input two tool turns (3 calls), then text. */
  private static AgentSpec soakAgent(int inputs) {
    ObjectNode settings = Tools.JSON.createObjectNode();
    ArrayNode script = settings.putArray("script");
    for (int k = 0; k < inputs; k++) {
      ObjectNode two = Tools.JSON.createObjectNode().put("delay_ms", 15);
      ArrayNode calls = two.putArray("tool_calls");
      calls.addObject().put("name", "add").putObject("arguments").put("a", 1).put("b", 0);
      calls.addObject().put("name", "add").putObject("arguments").put("a", 2).put("b", 0);
      script.add(two);
      ObjectNode one = Tools.JSON.createObjectNode().put("delay_ms", 15);
      one.putArray("tool_calls").addObject().put("name", "add").putObject("arguments").put("a", 3).put("b", 0);
      script.add(one);
      script.add(Tools.JSON.createObjectNode().put("text", "sum").put("delay_ms", 15));
    }
    return AgentSpec.newBuilder().setModel("scripted:java-soak")
        .addTools(ToolSpec.newBuilder().setName("add"))
        .setModelSettingsJson(settings.toString()).build();
  }

  @Test
  void asyncSessionsWhileTheDaemonIsKilledAgainAndAgain() throws Exception {
    final int sessions = 5;
    final int kills = 6;
    final int maxInputs = 10;
    Path dir = Daemon.tempDir("luoshod-java-soak");
    String listen = "127.0.0.1:" + freePort();
    Daemon[] daemon = {Daemon.start(dir, listen)};
    AtomicInteger killed = new AtomicInteger();
    AtomicBoolean stop = new AtomicBoolean();
    Thread killer = new Thread(() -> {
      Random rng = new Random(75);
      while (!stop.get() && killed.get() < kills) {
        try {
          Thread.sleep(300 + rng.nextInt(900)); // up and serving for a random while
        } catch (InterruptedException e) {
          return;
        }
        daemon[0].kill9();
        killed.incrementAndGet();
        daemon[0] = Daemon.start(dir, listen);
      }
    }, "killer");
    AgentSpec agent = soakAgent(maxInputs);
    Map<String, ToolHandler> tools = Map.of("add", args -> {
      Thread.sleep(new Random().nextInt(30)); // tools of many sessions interleave
      return args.get("a").asInt();
    });
    ExecutorService drivers = Executors.newFixedThreadPool(sessions);
    killer.start();
    try (AsyncClient client = new AsyncClient(listen)) { // the default retries
      Map<String, Future<int[]>> driven = new HashMap<>();
      for (int i = 0; i < sessions; i++) {
        String sid = "java-soak-" + i;
        driven.put(sid, drivers.submit(() -> {
          int k = 0;
          int attempts = 0;
          while (k < 2 || (killed.get() < kills && k < maxInputs)) {
            RunResult r = client.execute(sid, sid + " input " + k, agent, tools, null).get(120, TimeUnit.SECONDS);
            assertEquals("sum", r.finalText(), sid + " " + k);
            assertEquals(CheckpointStatus.CHECKPOINT_STATUS_FINISHED, r.status());
            assertDeliveredOnce(r.events());
            attempts += r.attempts();
            k++;
          }
          return new int[] {k, attempts};
        }));
      }
      int inputs = 0;
      int attempts = 0;
      Map<String, Integer> sent = new HashMap<>();
      for (var e : driven.entrySet()) {
        int[] got = e.getValue().get(180, TimeUnit.SECONDS);
        sent.put(e.getKey(), got[0]);
        inputs += got[0];
        attempts += got[1];
      }
      stop.set(true);
      killer.join(60_000);
      System.out.println("soak: " + killed.get() + " kills, " + inputs + " inputs, " + attempts + " attempts");
      assertTrue(killed.get() >= 1, "the daemon was never killed");
      assertTrue(attempts > inputs, "no stream was retried: " + attempts + " attempts for " + inputs + " inputs");

      try (Client check = new Client(listen)) {
        for (var e : sent.entrySet()) {
          Checkpoint cp = check.getSession(e.getKey());
          List<String> expected = new ArrayList<>();
          for (int k = 0; k < e.getValue(); k++) expected.add(e.getKey() + " input " + k);
          assertEquals(expected, userInputs(cp)); // each input once, in order
          assertEquals(CheckpointStatus.CHECKPOINT_STATUS_FINISHED, cp.getStatus());
          assertOneResultPerCall(cp, 3 * e.getValue());
        }
      }
    } finally {
      stop.set(true);
      killer.interrupt();
      killer.join(60_000);
      drivers.shutdownNow();
      daemon[0].stop();
    }
  }
}
