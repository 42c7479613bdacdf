package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.rpc.Code;
import com.google.rpc.ErrorInfo;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import dev.luosho.v1.*;
import dev.luosho.v1.AgentServiceGrpc;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 35, the client's half: {@code maxAttempts} bounds the attempts in a row without
 * progress (a new, not replayed {@code model.turn} or {@code tool.result}), not without any new
 * event; each retry waits at least the failure's {@code retry_after_s}; PROVIDER_REJECTED is
 * never retried. A fake AgentService on grpc-java's in-process transport plays each attempt,
 * since a real daemon cannot easily produce these sequences.
 */
class RetryProgressTest {
  /** Attempts the fake answers before it lets the run finish: a client that never stops fails the test, not hangs. */
  private static final int CAP = 8;

  /** What one attempt of the fake sends: events, then a failure (null: run.done and the end). */
  private record Attempt(List<Event> events, StatusRuntimeException failure) {}

  /** A fake AgentService whose n-th Execute (from 1) plays script(n), recording when each began and failed. */
  private static final class FakeService extends AgentServiceGrpc.AgentServiceImplBase {
    final IntFunction<Attempt> script;
    final List<Long> started = Collections.synchronizedList(new ArrayList<>());
    final List<Long> failed = Collections.synchronizedList(new ArrayList<>());

    FakeService(IntFunction<Attempt> script) {
      this.script = script;
    }

    @Override
    public void execute(ExecuteRequest request, StreamObserver<ExecuteResponse> out) {
      started.add(System.nanoTime());
      int n = started.size();
      Attempt attempt = n > CAP ? finish(n) : script.apply(n);
      for (Event e : attempt.events()) out.onNext(ExecuteResponse.newBuilder().setEvent(e).build());
      if (attempt.failure() != null) {
        failed.add(System.nanoTime());
        out.onError(attempt.failure());
      } else {
        out.onCompleted();
      }
    }
  }

  private final List<Server> servers = new ArrayList<>();
  private final List<ManagedChannel> channels = new ArrayList<>();

  @AfterEach
  void stop() throws InterruptedException {
    for (ManagedChannel c : channels) c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    for (Server s : servers) s.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  private ManagedChannel serve(FakeService service) throws Exception {
    String name = InProcessServerBuilder.generateName();
    servers.add(InProcessServerBuilder.forName(name).addService(service).build().start());
    ManagedChannel channel = InProcessChannelBuilder.forName(name).build();
    channels.add(channel);
    return channel;
  }

  private static final String SID = "progress-1";

  private static Event event(long seq, String type) {
    Event.Builder b = Event.newBuilder().setSessionId(SID).setRunId("run-1").setSeq(seq).setType(type);
    switch (type) {
      case "run.start" -> b.setRunStart(RunStart.newBuilder().setMode(RunMode.RUN_MODE_RESUME));
      case "step.start" -> b.setStepStart(StepStart.newBuilder().setStep(1));
      case "model.turn" -> b.setModelTurn(ModelTurn.newBuilder().setStep(1));
      case "tool.result" -> b.setToolResult(ToolResult.newBuilder().setStep(1).setToolCallId("c1")
          .setToolName("lookup").setResultJson("{}"));
      case "run.done" -> b.setRunDone(RunDone.newBuilder().setFinishReason(FinishReason.FINISH_REASON_STOP)
          .setStatus(CheckpointStatus.CHECKPOINT_STATUS_FINISHED).setFinalText("done"));
      default -> { }
    }
    return b.build();
  }

  private static StatusRuntimeException failure(Code code, String reason, Map<String, String> metadata) {
    ErrorInfo info = ErrorInfo.newBuilder().setDomain(Errors.DOMAIN).setReason(reason).putAllMetadata(metadata).build();
    return StatusProto.toStatusRuntimeException(com.google.rpc.Status.newBuilder()
        .setCode(code.getNumber()).setMessage(reason.toLowerCase()).addDetails(Any.pack(info)).build());
  }

  /** The daemon's answer while the session's failure backoff holds: UNAVAILABLE, PROVIDER_ERROR, retry_after_s. */
  private static StatusRuntimeException providerError(String retryAfterS) {
    Map<String, String> md = new java.util.HashMap<>(Map.of("provider", "llm", "model", "test-model",
        "error_type", "session_backoff", "transient", "true", "session_id", SID));
    if (retryAfterS != null) md.put("retry_after_s", retryAfterS);
    return failure(Code.UNAVAILABLE, "PROVIDER_ERROR", md);
  }

  /** Attempt n resumes the run: run.start and step.start with seqs never sent before, then fails. */
  private static Attempt noProgress(int n, String retryAfterS) {
    return new Attempt(List.of(event(2L * n - 1, "run.start"), event(2L * n, "step.start")), providerError(retryAfterS));
  }

  /** The run as the fake finishes it (after CAP attempts): run.done at a seq above any other. */
  private static Attempt finish(int n) {
    return new Attempt(List.of(event(1000L + n, "run.done")), null);
  }

  /** The seqs of the events a blocking run handed out before it ended (normally or not). */
  private static List<Long> drain(Run run, List<Long> seqs) {
    for (Event e : run) seqs.add(e.getSeq());
    return seqs;
  }

  private static final double RETRY_AFTER_S = 0.3;
  /** A backoff far below retry_after_s: the waits measured are the daemon's, not the policy's. */
  private static final RetryPolicy THREE = new RetryPolicy(3, Duration.ofMillis(10), Duration.ofMillis(20), 2.0, 0.2);

  private static void assertWaitedRetryAfter(FakeService service, int attempts) {
    assertEquals(attempts, service.started.size(), "attempts the fake saw");
    for (int i = 1; i < attempts; i++) {
      long waitedMs = TimeUnit.NANOSECONDS.toMillis(service.started.get(i) - service.failed.get(i - 1));
      assertTrue(waitedMs >= (long) (RETRY_AFTER_S * 1000),
          "retry " + i + " came " + waitedMs + " ms after the failure, before retry_after_s");
    }
  }

  @Test
  void attemptsWithoutProgressStopAfterMaxAttemptsAndWaitRetryAfter() throws Exception {
    FakeService service = new FakeService(n -> noProgress(n, String.valueOf(RETRY_AFTER_S)));
    Client client = new Client(serve(service), THREE);
    Run run = client.execute(SID, "hi", AgentSpec.newBuilder().setModel("llm:test-model").build(), Map.of());
    List<Long> seqs = new ArrayList<>();
    ProviderException error = assertThrows(ProviderException.class, () -> drain(run, seqs));
    // The last failure, typed, with its metadata; every new event was still handed out.
    assertSame(ProviderException.class, error.getClass());
    assertEquals(Status.Code.UNAVAILABLE, error.code());
    assertEquals("PROVIDER_ERROR", error.reason());
    assertEquals("session_backoff", error.metadata().get("error_type"));
    assertEquals(Optional.of(Duration.ofMillis(300)), error.retryAfter());
    assertEquals(3, run.attempts());
    assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L), seqs);
    assertWaitedRetryAfter(service, 3);
  }

  @Test
  void asyncAttemptsWithoutProgressStopAfterMaxAttemptsAndWaitRetryAfter() throws Exception {
    FakeService service = new FakeService(n -> noProgress(n, String.valueOf(RETRY_AFTER_S)));
    List<Long> seqs = Collections.synchronizedList(new ArrayList<>());
    try (AsyncClient client = new AsyncClient(serve(service), THREE)) {
      ExecutionException failed = assertThrows(ExecutionException.class, () -> client.execute(SID, "hi",
          AgentSpec.newBuilder().setModel("llm:test-model").build(), Map.of(), e -> seqs.add(e.getSeq()))
          .get(30, TimeUnit.SECONDS));
      ProviderException error = assertInstanceOf(ProviderException.class, failed.getCause());
      assertEquals(Status.Code.UNAVAILABLE, error.code());
      assertEquals("0.3", error.metadata().get("retry_after_s"));
    }
    assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L), seqs);
    assertWaitedRetryAfter(service, 3);
  }

  /**
   * Attempts 1, 3, 5 bring a new model.turn or tool.result; 2, 4, 6 only run.start/step.start;
   * 7 finishes. With 2 attempts in a row allowed, no row of attempts without progress is longer
   * than 1, so the run goes on through six failures.
   */
  private static Attempt alternating(int n) {
    long base = 10L * n;
    if (n == 7) return new Attempt(List.of(event(base, "run.start"), event(base + 1, "run.done")), null);
    if (n % 2 == 0) return new Attempt(List.of(event(base, "run.start"), event(base + 1, "step.start")), providerError(null));
    String progress = n == 3 ? "tool.result" : "model.turn";
    return new Attempt(List.of(event(base, "run.start"), event(base + 1, "step.start"), event(base + 2, progress)),
        providerError(null));
  }

  private static final RetryPolicy TWO = new RetryPolicy(2, Duration.ZERO, Duration.ZERO, 2.0, 0);

  @Test
  void aModelTurnOrToolResultStartsTheCountAgain() throws Exception {
    FakeService service = new FakeService(RetryProgressTest::alternating);
    Client client = new Client(serve(service), TWO);
    RunResult result = client.execute(SID, "hi", AgentSpec.getDefaultInstance(), Map.of()).result();
    assertEquals("done", result.finalText());
    assertEquals(7, result.attempts());

    FakeService again = new FakeService(RetryProgressTest::alternating);
    try (AsyncClient async = new AsyncClient(serve(again), TWO)) {
      RunResult r = async.execute(SID, "hi", AgentSpec.getDefaultInstance(), Map.of(), null)
          .get(30, TimeUnit.SECONDS);
      assertEquals(7, r.attempts());
    }
  }

  /**
   * Attempt 1 brings model.turn 3 (progress); attempt 2 sends seqs 1-3 again (delivered
   * before); attempt 3 a replayed model.turn; attempt 4 a tool.result at an old seq. None of
   * 2-4 is progress, so with 3 attempts in a row allowed the run gives up after attempt 4.
   */
  @Test
  void turnsDeliveredBeforeOrReplayedAreNotProgress() throws Exception {
    IntFunction<Attempt> script = n -> switch (n) {
      case 1, 2 -> new Attempt(List.of(event(1, "run.start"), event(2, "step.start"), event(3, "model.turn")),
          providerError(null));
      case 3 -> new Attempt(List.of(event(4, "run.start"), event(5, "model.turn").toBuilder().setReplayed(true).build()),
          providerError(null));
      default -> new Attempt(List.of(event(2, "tool.result"), event(6, "step.start")), providerError(null));
    };
    FakeService service = new FakeService(script);
    Client client = new Client(serve(service), new RetryPolicy(3, Duration.ZERO, Duration.ZERO, 2.0, 0));
    Run run = client.execute(SID, "hi", AgentSpec.getDefaultInstance(), Map.of());
    List<Long> seqs = new ArrayList<>();
    assertThrows(ProviderException.class, () -> drain(run, seqs));
    assertEquals(4, run.attempts());
    assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L), seqs); // each seq once; the replayed turn handed out too

    assertFalse(RetryPolicy.isProgress(event(9, "run.start")));
    assertFalse(RetryPolicy.isProgress(event(9, "step.start")));
    assertFalse(RetryPolicy.isProgress(event(9, "tool.call")));
    assertFalse(RetryPolicy.isProgress(event(9, "text.delta")));
    assertTrue(RetryPolicy.isProgress(event(9, "model.turn")));
    assertTrue(RetryPolicy.isProgress(event(9, "tool.result")));
    assertTrue(RetryPolicy.isProgress(event(9, "tool.result").toBuilder()
        .setSubagent(SubAgentTag.newBuilder().setName("researcher").setDepth(1)).build())); // a sub-agent's
    assertFalse(RetryPolicy.isProgress(event(9, "tool.result").toBuilder().setReplayed(true).build()));
  }

  @Test
  void providerRejectedIsTypedAndNeverRetried() throws Exception {
    Map<String, String> md = Map.of("provider", "llm", "model", "test-model", "status", "400",
        "error_type", "invalid_request_error", "provider_message", "messages.1.content.0.type: Expected `thinking`",
        "attempts", "1", "transient", "false", "session_id", SID);
    FakeService service = new FakeService(n -> new Attempt(
        List.of(event(1, "run.start"), event(2, "step.start")), failure(Code.FAILED_PRECONDITION, "PROVIDER_REJECTED", md)));
    Client client = new Client(serve(service), RetryPolicy.DEFAULT);
    Run run = client.execute(SID, "hi", AgentSpec.getDefaultInstance(), Map.of());
    ProviderRejectedException e = assertThrows(ProviderRejectedException.class, run::result);
    assertEquals(1, run.attempts());
    assertEquals(1, service.started.size());
    assertInstanceOf(ProviderException.class, e); // caught as a provider failure too
    assertEquals(Status.Code.FAILED_PRECONDITION, e.code());
    assertEquals("PROVIDER_REJECTED", e.reason());
    assertEquals("llm", e.provider());
    assertEquals("test-model", e.model());
    assertEquals(Optional.of(400), e.httpStatus());
    assertEquals("invalid_request_error", e.errorType());
    assertTrue(e.providerMessage().contains("Expected"), e.providerMessage());
    assertEquals(md, e.metadata());
    assertFalse(RetryPolicy.DEFAULT.shouldRetry(e, 1, 0));
    assertFalse(RetryPolicy.DEFAULT.leavesSubmissionToRetry(e));

    try (AsyncClient async = new AsyncClient(serve(new FakeService(n -> new Attempt(List.of(),
        failure(Code.FAILED_PRECONDITION, "PROVIDER_REJECTED", md)))), RetryPolicy.DEFAULT)) {
      ExecutionException failed = assertThrows(ExecutionException.class,
          () -> async.execute(SID, "hi", AgentSpec.getDefaultInstance(), Map.of(), null).get(30, TimeUnit.SECONDS));
      assertInstanceOf(ProviderRejectedException.class, failed.getCause());
    }
  }

  @Test
  void theDelayIsTheLongerOfTheBackoffAndRetryAfter() {
    RetryPolicy exact = new RetryPolicy(5, Duration.ofMillis(100), Duration.ofMillis(400), 2.0, 0);
    LuoshoException none = Errors.translate(providerError(null));
    LuoshoException shortWait = Errors.translate(providerError("0.05"));
    LuoshoException longWait = Errors.translate(providerError("2"));
    LuoshoException fraction = Errors.translate(providerError("0.75"));
    LuoshoException garbage = Errors.translate(providerError("soon"));
    assertEquals(Optional.empty(), none.retryAfter());
    assertEquals(Optional.of(Duration.ofMillis(50)), shortWait.retryAfter());
    assertEquals(Optional.of(Duration.ofMillis(750)), fraction.retryAfter());
    assertEquals(Optional.empty(), garbage.retryAfter());
    assertEquals(Duration.ofMillis(100), exact.delay(1, none));
    assertEquals(Duration.ofMillis(200), exact.delay(2, shortWait)); // the backoff is longer
    assertEquals(Duration.ofSeconds(2), exact.delay(3, longWait)); // retry_after_s beyond maxBackoff too
    assertEquals(Duration.ofMillis(750), exact.delay(1, fraction));
    assertEquals(Duration.ofMillis(100), exact.delay(1, garbage));
    for (int i = 0; i < 50; i++) {
      assertTrue(RetryPolicy.DEFAULT.delay(1, fraction).compareTo(Duration.ofMillis(750)) >= 0); // jitter never shortens it
    }
  }
}
