package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
import java.util.concurrent.TimeUnit;
import dev.luosho.v1.*;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * R82 against a real daemon whose provider {@code llm} is the fake model server (scenario
 * {@code fallback}: the model "down" answers HTTP 503, "test-model" answers): the run's
 * provider.retry and provider.fallback events typed in {@code RunResult.retries()} and
 * {@code fallbacks()}, the lead's and a sub-agent's with its path.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class R82Test {
  static Process fake;
  static JsonNode info;
  static Daemon daemon;
  static Client client;

  @BeforeAll
  static void start() throws IOException {
    Path dir = Daemon.tempDir("luoshod-java-fallback");
    Path script = Path.of(System.getProperty("user.dir")).resolve("../..").normalize()
        .resolve("tests/support/fake_model_server.py");
    ProcessBuilder pb = new ProcessBuilder(Daemon.python(), script.toString(), "--wire", "anthropic",
        "--scenario", "fallback", "--fast", "--dir", dir.resolve("fake").toString(), "--max-seconds", "300");
    pb.redirectError(ProcessBuilder.Redirect.appendTo(dir.resolve("fake-stderr.log").toFile()));
    fake = pb.start();
    BufferedReader out = new BufferedReader(new InputStreamReader(fake.getInputStream(), StandardCharsets.UTF_8));
    String line = out.readLine();
    if (line == null) {
      fake.destroyForcibly();
      throw new IllegalStateException("the fake model server did not start:\n"
          + Files.readString(dir.resolve("fake-stderr.log")));
    }
    info = Tools.JSON.readTree(line);
    daemon = Daemon.start(dir, "127.0.0.1:0", Map.of(info.get("key_env").asText(), info.get("key").asText()),
        "--config", info.get("config").asText());
    client = new Client(daemon.address);
  }

  @AfterAll
  static void stop() throws InterruptedException {
    if (client != null) client.close();
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

  private static AgentSpec down(String instructions) {
    return AgentSpec.newBuilder().setModel("llm:down").setInstructions(instructions)
        .addFallbackModels(info.get("model").asText()).build();
  }

  @Test
  void theLeadsRetryAndFallbackAreInTheResult() throws Exception {
    String to = info.get("model").asText();
    RunResult result = client.execute("java-r82-lead", "hi", down("Answer."), Map.of()).result();
    assertEquals(FinishReason.FINISH_REASON_STOP, result.finishReason());
    assertEquals("done", result.finalText());
    assertEquals(1, result.retries().size(), result.retries().toString());
    RunResult.Retry retry = result.retries().get(0);
    assertEquals(List.of(1, "llm:down", 1, List.of()),
        List.of(retry.step(), retry.model(), retry.attempt(), retry.subagent()));
    assertTrue(retry.error().contains("503"), retry.error());
    assertTrue(!retry.delay().isNegative(), retry.delay().toString());
    assertEquals(1, result.fallbacks().size(), result.fallbacks().toString());
    RunResult.Fallback fallback = result.fallbacks().get(0);
    assertEquals(List.of(1, "llm:down", to, "PROVIDER_ERROR", "overloaded_error", List.of()),
        List.of(fallback.step(), fallback.fromModel(), fallback.toModel(), fallback.reason(),
            fallback.errorType(), fallback.subagent()));
    assertTrue(fallback.error().contains("2 attempt(s)"), fallback.error());
    HttpResponse<String> stats = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create(info.get("stats_url").asText())).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals("[503,503,200]", Tools.JSON.readTree(stats.body()).get("statuses").toString());
  }

  @Test
  void aSubagentsFallbackCarriesItsPath() {
    ObjectNode task = Tools.JSON.createObjectNode();
    task.putArray("tool_calls").addObject().put("name", "task").putObject("arguments")
        .put("agent", "researcher").put("prompt", "find it").put("description", "d");
    AgentSpec lead = Scripts.agent(false, task, Scripts.text("all done")).toBuilder()
        .addSubagents(SubAgent.newBuilder().setName("researcher").setDescription("finds facts")
            .setAgent(down("Research.")))
        .build();
    RunResult result = client.execute("java-r82-sub", "go", lead, Map.of()).result();
    assertEquals("all done", result.finalText());
    assertEquals(1, result.retries().size(), result.retries().toString());
    assertEquals(List.of("researcher"), result.retries().get(0).subagent());
    assertEquals(1, result.fallbacks().size(), result.fallbacks().toString());
    RunResult.Fallback f = result.fallbacks().get(0);
    assertEquals(List.of("llm:down", info.get("model").asText(), List.of("researcher")),
        List.of(f.fromModel(), f.toModel(), f.subagent()));
  }
}
