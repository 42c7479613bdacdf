package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import dev.luosho.v1.*;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 35 end to end: a real daemon whose provider {@code llm} is the fake model server
 * ({@code tests/support/fake_model_server.py --wire anthropic --scenario refuse-continuation}):
 * the first model call asks for the client tool {@code lookup}, the continuation is refused
 * with HTTP 400. With the client's default retry policy, the run ends with the typed
 * PROVIDER_REJECTED after exactly one model call for the continuation.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ProviderRejectedTest {
  private Process fake;
  private JsonNode info;
  private Daemon daemon;

  private static Path repoRoot() {
    // Surefire runs in clients/java.
    return Path.of(System.getProperty("user.dir")).resolve("../..").normalize();
  }

  @BeforeEach
  void start() throws IOException {
    Path dir = Daemon.tempDir("luoshod-java-rejected");
    Path script = repoRoot().resolve("tests/support/fake_model_server.py");
    ProcessBuilder pb = new ProcessBuilder(Daemon.python(), script.toString(), "--wire", "anthropic",
        "--scenario", "refuse-continuation", "--dir", dir.resolve("fake").toString(), "--max-seconds", "300");
    pb.redirectError(ProcessBuilder.Redirect.appendTo(dir.resolve("fake-stderr.log").toFile()));
    fake = pb.start();
    BufferedReader out = new BufferedReader(new InputStreamReader(fake.getInputStream(), StandardCharsets.UTF_8));
    String line = out.readLine(); // one JSON line once it serves
    if (line == null) {
      fake.destroyForcibly();
      throw new IllegalStateException("the fake model server did not start:\n"
          + Files.readString(dir.resolve("fake-stderr.log")));
    }
    info = Tools.JSON.readTree(line);
    daemon = Daemon.start(dir, "127.0.0.1:0", Map.of(info.get("key_env").asText(), info.get("key").asText()),
        "--config", info.get("config").asText());
  }

  @AfterEach
  void stop() throws InterruptedException {
    if (daemon != null) daemon.stop();
    if (fake != null) {
      try {
        fake.getOutputStream().close(); // it stops when its stdin closes
      } catch (IOException ignored) {
        // already gone
      }
      if (!fake.waitFor(10, TimeUnit.SECONDS)) fake.destroyForcibly().waitFor();
    }
  }

  private AgentSpec agent() {
    return AgentSpec.newBuilder().setModel(info.get("model").asText())
        .addTools(ToolSpec.newBuilder().setName(info.get("tool").asText()).setInputSchemaJson("{\"type\":\"object\"}"))
        .build();
  }

  private JsonNode stats() throws IOException, InterruptedException {
    HttpResponse<String> r = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create(info.get("stats_url").asText())).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return Tools.JSON.readTree(r.body());
  }

  private void assertPermanent(ProviderRejectedException e) {
    assertEquals("PROVIDER_REJECTED", e.reason());
    assertEquals(io.grpc.Status.Code.FAILED_PRECONDITION, e.code());
    assertEquals("400", e.metadata().get("status"), e.metadata().toString());
    assertEquals(Optional.of(400), e.httpStatus());
    assertTrue(e.providerMessage().contains("Expected"), e.metadata().toString());
    assertEquals("false", e.metadata().get("transient"), e.metadata().toString());
  }

  /** requests == 2, turns [0, 1]: the first call and exactly one for the continuation. */
  private void assertOneContinuationCall() throws IOException, InterruptedException {
    JsonNode stats = stats();
    assertEquals(2, stats.get("requests").asInt(), stats.toString());
    assertEquals(List.of(0, 1), List.of(stats.get("turns").get(0).asInt(), stats.get("turns").get(1).asInt()),
        stats.toString());
  }

  @Test
  void aRefusedContinuationEndsTheRunWithTheTypedErrorAfterOneModelCall() throws Exception {
    AtomicInteger lookups = new AtomicInteger();
    Map<String, ToolHandler> tools = Map.of("lookup", args -> {
      lookups.incrementAndGet();
      return Map.of("found", true);
    });
    try (Client client = new Client(daemon.address)) { // the default retry policy
      assertEquals(RetryPolicy.DEFAULT, client.retryPolicy());
      Run run = client.execute("java-rejected-1", "Look it up.", agent(), tools);
      ProviderRejectedException e = assertThrows(ProviderRejectedException.class, run::result);
      assertInstanceOf(ProviderException.class, e);
      assertPermanent(e);
      assertEquals(1, run.attempts(), "never retried");
      assertEquals(1, lookups.get(), "the tool ran once");
      assertTrue(run.events().stream().anyMatch(ev -> ev.getType().equals("tool.result")), "the run got that far");
    }
    assertOneContinuationCall();
  }

  @Test
  void theAsyncClientGetsTheSameTypedError() throws Exception {
    try (AsyncClient client = new AsyncClient(daemon.address)) { // the default retry policy
      ExecutionException failed = assertThrows(ExecutionException.class, () -> client.execute("java-rejected-2",
          "Look it up.", agent(), Map.of("lookup", args -> Map.of("found", true)), null).get(120, TimeUnit.SECONDS));
      assertPermanent(assertInstanceOf(ProviderRejectedException.class, failed.getCause()));
    }
    assertOneContinuationCall();
  }
}
