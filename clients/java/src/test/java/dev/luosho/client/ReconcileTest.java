package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import dev.luosho.v1.*;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * R77 in the Java client, against a real daemon: a client leaves while its {@code pay} call is
 * handed out; a fresh client resumes with a reconcile function on the tool and answers the
 * daemon's {@code tool.reconcile} (DONE: the tool is not run again; NOT_STARTED and UNKNOWN: it
 * runs with attempt 2 and {@code reconciled} saying why), blocking and async alike.
 */
class ReconcileTest {
  private static Daemon daemon;

  @BeforeAll
  static void start() throws Exception {
    daemon = Daemon.start(Daemon.tempDir("luoshod-java-reconcile"), "127.0.0.1:0");
  }

  @AfterAll
  static void stop() {
    if (daemon != null) daemon.stop();
  }

  private static AgentSpec payAgent(boolean flagged) {
    ObjectNode pay = Tools.JSON.createObjectNode();
    pay.putArray("tool_calls").addObject().put("name", "pay").putObject("arguments").put("amount", 5);
    ObjectNode settings = Tools.JSON.createObjectNode();
    settings.putArray("script").add(pay).add(Scripts.text("paid"));
    return AgentSpec.newBuilder().setModel("scripted:pay")
        .addTools(ToolSpec.newBuilder().setName("pay").setReconcile(flagged))
        .setModelSettingsJson(settings.toString()).build();
  }

  /** Execute until {@code pay} is handed out (its tool never answers), then leave: the client's channel closes. */
  private static void leaveAtTheToolCall(String sessionId, AgentSpec agent, Reconciler reconciler) throws Exception {
    CountDownLatch handedOut = new CountDownLatch(1);
    List<ToolContext> first = Collections.synchronizedList(new ArrayList<>());
    ToolHandler pay = ToolHandler.withContext((args, ctx) -> {
      first.add(ctx);
      handedOut.countDown();
      new CountDownLatch(1).await(); // until the client goes away
      return "never";
    });
    Client client = new Client(daemon.address);
    Map<String, ToolHandler> tools = Map.of("pay", reconciler == null ? pay : ToolHandler.reconciled(pay, reconciler));
    Thread running = new Thread(() -> {
      try {
        client.execute(sessionId, "pay 5", agent, tools).result();
      } catch (RuntimeException expected) {
        // the channel closed under the run
      }
    }, "leaving-client");
    running.setDaemon(true);
    running.start();
    assertTrue(handedOut.await(30, TimeUnit.SECONDS), "pay was never handed out");
    client.close();
    running.interrupt();
    running.join(10_000);
    assertEquals(1, first.size());
    assertEquals(1, first.get(0).attempt());
    assertEquals("", first.get(0).reconciled());
    try (Client other = new Client(daemon.address)) {
      assertEquals(Map.of("call_0_0", 1), other.getSession(sessionId).getAttemptsMap());
    }
  }

  @Test
  void r77DoneFromTheReconcileFunctionRecordsTheResultAndTheToolDoesNotRunAgain() throws Exception {
    leaveAtTheToolCall("java-done", payAgent(false), call -> ReconcileAnswer.UNKNOWN);
    List<ReconcileCall> asked = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger ran = new AtomicInteger();
    try (Client client = new Client(daemon.address)) {
      ToolHandler pay = ToolHandler.reconciled(args -> ran.incrementAndGet(), call -> {
        asked.add(call);
        return ReconcileAnswer.done(Map.of("payment", call.toolCallId()));
      });
      RunResult result = client.resume("java-done", Map.of("pay", pay)).result();
      assertEquals(FinishReason.FINISH_REASON_STOP, result.finishReason());
      assertEquals(1, asked.size());
      ReconcileCall call = asked.get(0);
      assertEquals(List.of("java-done", "call_0_0", "pay", 5, 1),
          List.of(call.sessionId(), call.toolCallId(), call.toolName(), call.arguments().get("amount").asInt(), call.attempt()));
      assertEquals(0, ran.get(), "DONE: the tool did not run again");
      List<String> types = result.events().stream().map(Event::getType).toList();
      assertTrue(types.contains("tool.reconcile") && !types.contains("tool.call"), types.toString());
      Checkpoint cp = client.getSession("java-done");
      String paid = cp.getMessagesList().stream().filter(m -> m.getToolCallId().equals("call_0_0")).findFirst()
          .orElseThrow().getContent();
      assertEquals("call_0_0", Tools.JSON.readTree(paid).get("payment").asText());
      assertTrue(cp.getAgent().getTools(0).getReconcile(), "set by the client on the tool given a function");
      assertEquals(1, cp.getToolCalls(0).getAttempts());
    }
  }

  @Test
  void r77NotStartedAndUnknownRunTheToolAgainWithAttempt2() throws Exception {
    for (ReconcileAnswer answer : List.of(ReconcileAnswer.NOT_STARTED, ReconcileAnswer.UNKNOWN)) {
      String sid = answer == ReconcileAnswer.UNKNOWN ? "java-unknown" : "java-not-started";
      String name = answer == ReconcileAnswer.UNKNOWN ? "UNKNOWN" : "NOT_STARTED";
      leaveAtTheToolCall(sid, payAgent(false), call -> answer);
      List<List<Object>> seen = Collections.synchronizedList(new ArrayList<>());
      // The async client this time: its tools run on the client's executor.
      try (AsyncClient client = new AsyncClient(daemon.address)) {
        ToolHandler pay = ToolHandler.reconciled(ToolHandler.withContext((args, ctx) -> {
          seen.add(List.of(ctx.attempt(), ctx.reconciled(), ctx.mayHaveRun()));
          return "paid now";
        }), call -> answer);
        CompletableFuture<RunResult> run = client.resume(sid, Map.of("pay", pay), e -> { });
        assertEquals(FinishReason.FINISH_REASON_STOP, run.get(60, TimeUnit.SECONDS).finishReason());
        assertEquals(List.of(List.of(2, name, answer == ReconcileAnswer.UNKNOWN)), seen, name);
        assertEquals(2, client.getSession(sid).get(30, TimeUnit.SECONDS).getToolCalls(0).getAttempts());
      }
    }
  }

  @Test
  void r77AReconcilerThatThrowsAndAFlaggedToolWithoutOneAnswerUnknownAtOnce() throws Exception {
    leaveAtTheToolCall("java-throws", payAgent(true), null);
    leaveAtTheToolCall("java-none", payAgent(true), null);
    long began = System.nanoTime();
    try (Client client = new Client(daemon.address)) {
      for (String sid : List.of("java-throws", "java-none")) {
        List<String> seen = Collections.synchronizedList(new ArrayList<>());
        ToolHandler pay = ToolHandler.withContext((args, ctx) -> {
          seen.add(ctx.reconciled());
          return "checked by key";
        });
        if (sid.equals("java-throws")) {
          pay = ToolHandler.reconciled(pay, call -> {
            throw new IllegalStateException("the provider is down");
          });
        }
        RunResult result = client.resume(sid, Map.of("pay", pay)).result();
        assertEquals(FinishReason.FINISH_REASON_STOP, result.finishReason(), sid);
        assertEquals(List.of("UNKNOWN"), seen, sid);
      }
    }
    assertTrue(System.nanoTime() - began < TimeUnit.SECONDS.toNanos(10), "not the tool timeout");
  }
}
