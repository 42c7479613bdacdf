package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import dev.luosho.v1.*;
import org.junit.jupiter.api.Test;

/**
 * R83 against a real daemon: an agent's output schema, the answer read as the caller's record
 * after one repair turn, and OUTPUT_INVALID with its errors.
 */
class R83Test extends SharedDaemonTest {
  record City(String city, int population) {}

  static final String SCHEMA = "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"},"
      + "\"population\":{\"type\":\"integer\"}},\"required\":[\"city\",\"population\"]}";

  private static AgentSpec agent(String first, String second) {
    return Scripts.agent(false, Scripts.text(first), Scripts.text(second)).toBuilder()
        .setOutputSchemaJson(SCHEMA).build();
  }

  @Test
  void theAnswerIsReadAsTheCallersTypeAfterARepairTurn() {
    RunResult result = client.execute("java-r83-ok", "where?",
        agent("{\"city\": \"Paris\"}", "{\"population\": 2, \"city\": \"Paris\"}"), Map.of()).result();
    assertEquals(FinishReason.FINISH_REASON_STOP, result.finishReason());
    assertEquals(2, result.stepIndex());
    assertEquals("{\"city\":\"Paris\",\"population\":2}", result.outputJson());
    assertEquals(new City("Paris", 2), result.output(City.class));
  }

  @Test
  void anAnswerInvalidTwiceEndsOutputInvalidWithItsErrors() {
    RunResult result = client.execute("java-r83-bad", "where?",
        agent("Paris", "{\"city\": \"Paris\"}"), Map.of()).result();
    assertEquals(FinishReason.FINISH_REASON_OUTPUT_INVALID, result.finishReason());
    assertEquals(List.of("(root): 'population' is a required property"), result.outputErrors());
    assertThrows(IllegalStateException.class, () -> result.output(City.class));
  }
}
