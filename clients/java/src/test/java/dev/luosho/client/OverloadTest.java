package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.rpc.Code;
import com.google.rpc.ErrorInfo;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import dev.luosho.v1.*;
import dev.luosho.v1.AgentServiceGrpc;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A run the daemon's admission refused before it started ({@code RESOURCE_EXHAUSTED} /
 * {@code DAEMON_OVERLOADED} with {@code retry_after_s}, or gRPC's {@code grpc-retry-pushback-ms}
 * trailer) comes back after the wait it was told with the same request (R75), bounded by
 * {@code overloadAttempts} and {@code overloadMaxWait}. A real daemon with a tiny start budget
 * refuses most of a burst; the trailer, which the daemon does not send, comes from a fake
 * AgentService on grpc-java's in-process transport.
 */
class OverloadTest {
  private static final int BURST = 24;

  private static List<CompletableFuture<RunResult>> burst(AsyncClient client, String prefix) {
    AgentSpec agent = Scripts.agent(false, Scripts.text("done"));
    List<CompletableFuture<RunResult>> runs = new ArrayList<>();
    for (int k = 0; k < BURST; k++) runs.add(client.execute(prefix + "-" + k, "go", agent, Map.of(), e -> { }));
    return runs;
  }

  @Test
  void r75ABurstTheDaemonRefusesComesBackAsToldAndEveryRunFinishes() throws Exception {
    // Room for four starts at once (4 ms of loop work each): the rest of a burst is refused.
    Daemon daemon = Daemon.start(Daemon.tempDir("luoshod-java-overload"), "127.0.0.1:0", "--max-loop-lag-ms", "16");
    try {
      int refused = 0;
      try (AsyncClient once = new AsyncClient(daemon.address, RetryPolicy.DEFAULT.withOverload(1, Duration.ofMinutes(5)))) {
        for (CompletableFuture<RunResult> run : burst(once, "once")) {
          try {
            run.get(60, TimeUnit.SECONDS);
          } catch (ExecutionException e) {
            LuoshoException error = assertInstanceOf(LuoshoException.class, e.getCause());
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, error.code());
            assertEquals("DAEMON_OVERLOADED", error.reason());
            assertTrue(error.retryAfter().orElseThrow().compareTo(Duration.ofSeconds(1)) >= 0);
            refused++;
          }
        }
      }
      assertTrue(refused >= BURST / 2, refused + " of " + BURST + " refused without overload retries");
      Thread.sleep(1000); // the start budget fills again

      long started = System.nanoTime();
      int retried = 0;
      try (AsyncClient client = new AsyncClient(daemon.address)) { // the default policy
        for (CompletableFuture<RunResult> run : burst(client, "paced")) {
          RunResult result = run.get(60, TimeUnit.SECONDS);
          assertEquals("done", result.finalText());
          if (result.attempts() > 1) retried++;
        }
      }
      assertTrue(retried >= BURST / 2, retried + " of " + BURST + " retried: the burst was not refused");
      assertTrue(System.nanoTime() - started >= TimeUnit.SECONDS.toNanos(1),
          "a refused run waited its retry_after_s (at least 1 s)");
    } finally {
      daemon.stop();
    }
  }

  private static final Metadata.Key<String> PUSHBACK =
      Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER);

  /** Refuses the first Execute with DAEMON_OVERLOADED (retry_after_s 1, and the pushback trailer when set), finishes the next. */
  private static final class Refuser extends AgentServiceGrpc.AgentServiceImplBase {
    final String pushback;
    final List<ExecuteRequest> requests = Collections.synchronizedList(new ArrayList<>());
    final List<Long> at = Collections.synchronizedList(new ArrayList<>());

    Refuser(String pushback) {
      this.pushback = pushback;
    }

    @Override
    public void execute(ExecuteRequest request, StreamObserver<ExecuteResponse> out) {
      requests.add(request);
      at.add(System.nanoTime());
      if (requests.size() == 1) {
        ErrorInfo info = ErrorInfo.newBuilder().setDomain(Errors.DOMAIN).setReason("DAEMON_OVERLOADED")
            .putMetadata("retry_after_s", "1").build();
        Metadata trailers = new Metadata();
        if (pushback != null) trailers.put(PUSHBACK, pushback);
        StatusRuntimeException refusal = StatusProto.toStatusRuntimeException(com.google.rpc.Status.newBuilder()
            .setCode(Code.RESOURCE_EXHAUSTED.getNumber()).setMessage("busy").addDetails(Any.pack(info)).build(), trailers);
        out.onError(refusal);
        return;
      }
      out.onNext(ExecuteResponse.newBuilder().setEvent(Event.newBuilder().setSessionId("s").setRunId("r").setSeq(1)
          .setType("run.done").setRunDone(RunDone.newBuilder().setFinishReason(FinishReason.FINISH_REASON_STOP)
              .setStatus(CheckpointStatus.CHECKPOINT_STATUS_FINISHED).setFinalText("admitted"))).build());
      out.onCompleted();
    }
  }

  private final List<Server> servers = new ArrayList<>();
  private final List<ManagedChannel> channels = new ArrayList<>();

  @AfterEach
  void stopFakes() throws InterruptedException {
    for (ManagedChannel c : channels) c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    for (Server s : servers) s.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  private ManagedChannel serve(Refuser service) throws Exception {
    String name = InProcessServerBuilder.generateName();
    servers.add(InProcessServerBuilder.forName(name).addService(service).build().start());
    ManagedChannel channel = InProcessChannelBuilder.forName(name).build();
    channels.add(channel);
    return channel;
  }

  @Test
  void r75ARefusalIsSentAgainWithTheSameRequestAfterThePushback() throws Exception {
    Refuser fake = new Refuser("300");
    Client client = new Client(serve(fake));
    RunResult result = client.execute("s", "hi", Scripts.twoAdds(), Map.of()).result();
    assertEquals("admitted", result.finalText());
    assertEquals(2, result.attempts());
    assertEquals(fake.requests.get(0), fake.requests.get(1), "the very same request");
    assertFalse(fake.requests.get(0).getRequestId().isEmpty());
    long waitedMs = TimeUnit.NANOSECONDS.toMillis(fake.at.get(1) - fake.at.get(0));
    assertTrue(waitedMs >= 300 && waitedMs < 900, "came back after " + waitedMs + " ms, not the 300 ms pushback");
  }

  @Test
  void aRefusalIsTheRunsFailureWhenThePolicyOrTheServerSaysSo() throws Exception {
    record Case(String name, String pushback, RetryPolicy policy) {}
    // Warm up (classes loaded, the in-process transport started): the times below are the runs'.
    new Client(serve(new Refuser("0"))).execute("s", "hi", Scripts.twoAdds(), Map.of()).result();
    for (Case c : List.of(
        new Case("overload retries off", null, RetryPolicy.DEFAULT.withOverload(1, Duration.ofMinutes(5))),
        new Case("NO_RETRY", null, RetryPolicy.NO_RETRY),
        new Case("past overloadMaxWait", null, RetryPolicy.DEFAULT.withOverload(30, Duration.ofMillis(500))),
        new Case("a negative pushback", "-1", RetryPolicy.DEFAULT))) {
      Refuser fake = new Refuser(c.pushback());
      long started = System.nanoTime();
      Run run = new Client(serve(fake), c.policy()).execute("s", "hi", Scripts.twoAdds(), Map.of());
      LuoshoException e = assertThrows(LuoshoException.class, run::result, c.name());
      assertEquals("DAEMON_OVERLOADED", e.reason(), c.name());
      assertEquals(1, fake.requests.size(), c.name());
      // At once, not after the 1 s retry_after_s.
      assertTrue(System.nanoTime() - started < TimeUnit.MILLISECONDS.toNanos(900), c.name() + ": at once");
    }
  }

  @Test
  void overloadWaitIsTheHintWithUpwardJitterAndOverloadAttemptsInAll() {
    RetryPolicy policy = RetryPolicy.DEFAULT.withOverload(3, Duration.ofMinutes(5));
    LuoshoException full = new LuoshoException(Status.Code.RESOURCE_EXHAUSTED, "TOO_MANY_RUNS", "full",
        Map.of("retry_after_s", "2"), null);
    assertTrue(RetryPolicy.refusedByAdmission(full, 0));
    assertFalse(RetryPolicy.refusedByAdmission(full, 1), "only before the attempt's first event");
    RetryPolicy.Refusals refusals = new RetryPolicy.Refusals();
    for (int k = 1; k < 3; k++) {
      Duration wait = policy.overloadWait(full, refusals).orElseThrow();
      assertTrue(wait.toMillis() >= 2000 && wait.toMillis() <= 2400, wait.toString());
    }
    assertTrue(policy.overloadWait(full, refusals).isEmpty(), "the third refusal of overloadAttempts 3");
    assertThrows(IllegalArgumentException.class, () -> RetryPolicy.DEFAULT.withOverload(0, Duration.ZERO));
  }
}
