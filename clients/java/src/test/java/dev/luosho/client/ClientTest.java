package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import dev.luosho.v1.*;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The Java client against a real daemon (scripted provider, SQLite store). */
class ClientTest {
  static Daemon daemon;
  static Client client;

  @BeforeAll
  static void start() {
    daemon = Daemon.shared();
    client = new Client(daemon.address);
  }

  @AfterAll
  static void stop() {
    client.close();
  }

  private static List<String> types(List<Event> events) {
    return events.stream().map(Event::getType).collect(Collectors.toList());
  }

  @Test
  void multiStepRunWithClientTool() {
    List<String> seen = new ArrayList<>();
    Run run = client.execute("java-multi", "Add twice", Scripts.twoAdds(), Map.of("add", Scripts.add()));
    for (Event event : run) seen.add(event.getType());
    RunResult result = run.result();

    assertEquals(FinishReason.FINISH_REASON_STOP, result.finishReason());
    assertEquals(CheckpointStatus.CHECKPOINT_STATUS_FINISHED, result.status());
    assertEquals("done", result.finalText());
    assertEquals(3, result.stepIndex());
    assertEquals(seen, types(result.events()));
    assertEquals("run.start", seen.get(0));
    assertEquals("run.done", seen.get(seen.size() - 1));
    assertEquals(2, seen.stream().filter("tool.call"::equals).count());
    List<String> results = result.events().stream().filter(Event::hasToolResult)
        .map(e -> e.getToolResult().getResultJson()).collect(Collectors.toList());
    assertEquals(List.of("3", "7"), results);

    Checkpoint cp = client.getSession("java-multi");
    List<Message> tools = cp.getMessagesList().stream()
        .filter(m -> m.getRole() == Role.ROLE_TOOL).collect(Collectors.toList());
    assertEquals(List.of("3", "7"), tools.stream().map(Message::getContent).collect(Collectors.toList()));

    // history, fork, watch
    List<HistoryEntry> history = client.history("java-multi", false);
    assertFalse(history.isEmpty());
    ForkResponse fork = client.fork("java-multi", 1, "java-multi-fork", null);
    assertEquals("java-multi-fork", fork.getSessionId());
    RunResult forked = client.resume("java-multi-fork", Map.of("add", Scripts.add())).result();
    assertEquals(FinishReason.FINISH_REASON_STOP, forked.finishReason());
    try (Watch watch = client.watch("java-multi", 0, false)) {
      List<Long> seqs = new ArrayList<>();
      for (Event e : watch) seqs.add(e.getSeq());
      assertEquals(result.events().stream().map(Event::getSeq).collect(Collectors.toList()), seqs);
      assertEquals(seqs.get(seqs.size() - 1), watch.lastSeq());
    }
  }

  @Test
  void asyncFacadeRunsTools() throws Exception {
    try (AsyncClient async = new AsyncClient(daemon.address)) {
      List<String> seen = new ArrayList<>();
      RunResult result = async.execute("java-async", "Add twice", Scripts.twoAdds(),
          Map.of("add", Scripts.add()), e -> seen.add(e.getType())).get(60, TimeUnit.SECONDS);
      assertEquals(FinishReason.FINISH_REASON_STOP, result.finishReason());
      assertEquals("done", result.finalText());
      assertEquals(seen, types(result.events()));
      assertEquals(result.messageCount(), async.getSession("java-async").get().getMessagesCount());
      ExecutionException missing = assertThrows(ExecutionException.class,
          () -> async.getSession("java-no-such-session").get());
      assertTrue(missing.getCause() instanceof CheckpointNotFoundException, missing.toString());
    }
  }

  @Test
  void crashedClientProcessAndResumeFromAFreshClient() throws Exception {
    String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
    Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
        CrashingClient.class.getName(), daemon.address, "java-crash").redirectErrorStream(true).start();
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the crashing client did not exit");
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(3, p.exitValue(), output);

    // The run stopped with its tool call unanswered: the checkpoint stays in progress.
    Checkpoint cp = client.getSession("java-crash");
    assertEquals(CheckpointStatus.CHECKPOINT_STATUS_IN_PROGRESS, cp.getStatus());

    // A fresh client (its own channel) resumes; the daemon may need a moment to see the crash.
    try (Client fresh = new Client(daemon.address)) {
      RunResult result = null;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (result == null) {
        try {
          result = fresh.resume("java-crash", Map.of("add", Scripts.add())).result();
        } catch (SessionBusyException busy) {
          if (System.nanoTime() > deadline) throw busy;
          Thread.sleep(100);
        }
      }
      assertTrue(result.ran());
      Event start = result.events().get(0);
      assertEquals(RunMode.RUN_MODE_RESUME, start.getRunStart().getMode());
      // The call the crashed client never answered (step 1) is handed out again, and the
      // checkpointed model turn of step 1 is not made (nor paid for) twice.
      Event firstCall = result.events().stream().filter(Event::hasToolCall).findFirst().orElseThrow();
      assertEquals(1, firstCall.getToolCall().getStep());
      assertTrue(result.events().stream().noneMatch(e -> e.hasModelTurn() && e.getModelTurn().getStep() == 1));
      assertEquals(FinishReason.FINISH_REASON_STOP, result.finishReason());
      assertEquals("done", result.finalText());
      List<String> contents = fresh.getSession("java-crash").getMessagesList().stream()
          .filter(m -> m.getRole() == Role.ROLE_TOOL).map(Message::getContent)
          .collect(Collectors.toList());
      assertEquals(List.of("3", "7"), contents); // each call got exactly one result
      // Nothing left to run: Resume ends at once.
      assertFalse(fresh.resume("java-crash", Map.of()).result().ran());
    }
  }

  @Test
  void approvalPausedAndResolved() {
    AgentSpec agent = Scripts.agent(true, Scripts.call("add", 2, 5), Scripts.text("approved and done"));
    RunResult paused = client.execute("java-approval", "Add with approval", agent, Map.of("add", Scripts.add())).result();
    assertEquals(FinishReason.FINISH_REASON_AWAITING_APPROVAL, paused.finishReason());
    assertEquals(CheckpointStatus.CHECKPOINT_STATUS_AWAITING_APPROVAL, paused.status());
    assertFalse(paused.approvalId().isEmpty());
    assertNotNull(paused.approval());
    assertEquals("add", paused.approval().getToolCall().getName());
    assertTrue(types(paused.events()).contains("approval.requested"));

    SessionAwaitingApprovalException waiting = assertThrows(SessionAwaitingApprovalException.class,
        () -> client.execute("java-approval", "again?", agent, Map.of()).result());
    assertEquals(paused.approvalId(), waiting.approvalId());
    assertEquals("SESSION_AWAITING_APPROVAL", waiting.reason());

    assertEquals(List.of(paused.approvalId()), client.listApprovals("java-approval").stream()
        .map(Approval::getApprovalId).collect(Collectors.toList()));

    Run resolved = client.resolve(paused.approvalId(), true, "fine", Map.of("add", Scripts.add()));
    RunResult done = resolved.result();
    assertEquals("java-approval", resolved.sessionId());
    assertEquals(FinishReason.FINISH_REASON_STOP, done.finishReason());
    assertEquals("approved and done", done.finalText());
    assertTrue(done.events().stream().anyMatch(e -> e.hasToolResult() && e.getToolResult().getResultJson().equals("7")));

    ApprovalNotFoundException gone = assertThrows(ApprovalNotFoundException.class,
        () -> client.resolve(paused.approvalId(), true, "", Map.of()).result());
    assertEquals("APPROVAL_NOT_FOUND", gone.reason());
  }

  @Test
  void sessionBusyIsTyped() throws Exception {
    CountDownLatch called = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    ToolHandler slowAdd = args -> {
      called.countDown();
      release.await(30, TimeUnit.SECONDS);
      return args.get("a").asInt() + args.get("b").asInt();
    };
    try (AsyncClient async = new AsyncClient(daemon.address)) {
      CompletableFuture<RunResult> first = async.execute("java-busy", "Add twice", Scripts.twoAdds(),
          Map.of("add", slowAdd), null);
      assertTrue(called.await(30, TimeUnit.SECONDS), "the first run never called its tool");

      SessionBusyException busy = assertThrows(SessionBusyException.class,
          () -> client.execute("java-busy", "me too", Scripts.twoAdds(), Map.of()).result());
      assertEquals("SESSION_BUSY", busy.reason());
      assertEquals(io.grpc.Status.Code.ABORTED, busy.code());
      assertTrue(busy instanceof LuoshoException);

      release.countDown();
      assertEquals(FinishReason.FINISH_REASON_STOP, first.get(60, TimeUnit.SECONDS).finishReason());
    }
  }

  @Test
  void failingToolBecomesAnErrorResult() {
    AgentSpec agent = Scripts.agent(false, Scripts.call("add", 1, 1), Scripts.call("nope", 0, 0), Scripts.text("ok"))
        .toBuilder().addTools(ToolSpec.newBuilder().setName("nope")).build();
    ToolHandler broken = args -> {
      throw new IllegalStateException("boom");
    };
    RunResult result = client.execute("java-tool-error", "Fail", agent, Map.of("add", broken)).result();
    assertEquals(FinishReason.FINISH_REASON_STOP, result.finishReason());
    List<ToolResult> results = result.events().stream().filter(Event::hasToolResult)
        .map(Event::getToolResult).collect(Collectors.toList());
    assertEquals(2, results.size());
    assertTrue(results.get(0).getIsError());
    assertEquals("{\"error\":\"IllegalStateException: boom\"}", results.get(0).getResultJson());
    assertTrue(results.get(1).getIsError()); // a declared tool the client was not given
    assertTrue(results.get(1).getResultJson().contains("no tool named 'nope'"), results.get(1).getResultJson());
  }

  @Test
  void unknownSessionIsTyped() {
    assertThrows(CheckpointNotFoundException.class, () -> client.getSession("java-nothing-here"));
    assertThrows(ApprovalNotFoundException.class,
        () -> client.resolve("no-such-approval", true, "", Map.of()).result());
  }

  @Test
  void ifBusyEnqueueKeepsTheInputWhileTheSessionIsPausedThenRunsIt() {
    AgentSpec agent = Scripts.agent(true, Scripts.call("add", 1, 2), Scripts.text("first"), Scripts.text("second"));
    String approvalId = client.execute("java-q", "one", agent, Map.of()).result().approvalId();
    Run two = client.execute(Requests.execute("java-q", agent, "two", IfBusy.IF_BUSY_ENQUEUE).toBuilder()
        .setRequestId("two").build(), Map.of());
    assertEquals("input.queued", two.next().getType());
    Run three = client.execute(Requests.execute("java-q", agent, "three", IfBusy.IF_BUSY_ENQUEUE).toBuilder()
        .setRequestId("three").build(), Map.of());
    assertEquals("input.queued", three.next().getType());
    assertEquals(List.of("two", "three"), client.queue("java-q").stream()
        .map(QueuedInput::getRequestId).collect(Collectors.toList()));
    assertTrue(client.dequeueInput("java-q", "three"));
    assertFalse(client.dequeueInput("java-q", "three"));
    LuoshoException dequeued = assertThrows(LuoshoException.class, three::result);
    assertEquals("INPUT_DEQUEUED", dequeued.reason());
    RunResult resolved = client.resolve(approvalId, true, "", Map.of("add", Scripts.add())).result();
    assertEquals("first", resolved.finalText());
    assertEquals("second", two.result().finalText());
    assertTrue(client.queue("java-q").isEmpty());
    List<String> users = client.getSession("java-q").getMessagesList().stream()
        .filter(m -> m.getRole() == Role.ROLE_USER).map(Message::getContent).collect(Collectors.toList());
    assertEquals(List.of("one", "two"), users);
  }
}
