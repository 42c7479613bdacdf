package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;
import dev.luosho.v1.*;
import org.junit.jupiter.api.Test;

/**
 * R84 against the shared daemon: an agent's reasoning reaches the daemon, the run's
 * {@code reasoning.delta} text is {@code RunResult.reasoning()}, and the turn keeps its block.
 */
class R84Test extends SharedDaemonTest {
  @Test
  void theStreamedReasoningIsInTheResultAndTheTurnKeepsItsBlock() throws Exception {
    ObjectNode first = Scripts.withCall(Tools.JSON.createObjectNode(), "add", "a", 1);
    first.putArray("reasoning").add("I need add.");
    AgentSpec agent = Scripts.agent(false, first, Scripts.text("2")).toBuilder()
        .setReasoning(Reasoning.newBuilder().setEffort("high").setBudgetTokens(4096)).build();
    RunResult result = client.execute("java-r84", "one plus one", agent,
        Map.of("add", args -> args.get("a").asInt() + 1)).result();
    assertEquals(List.of(FinishReason.FINISH_REASON_STOP, "2", "I need add."),
        List.of(result.finishReason(), result.finalText(), result.reasoning()));
    Checkpoint cp = client.getSession("java-r84");
    assertEquals("high", cp.getAgent().getReasoning().getEffort());
    assertEquals(4096, cp.getAgent().getReasoning().getBudgetTokens());
    List<JsonNode> blocks = new java.util.ArrayList<>();
    for (Message m : cp.getMessagesList()) {
      for (ReasoningBlock b : m.getReasoningList()) blocks.add(Tools.JSON.readTree(b.getRawJson()));
    }
    assertEquals(List.of(Tools.JSON.readTree("{\"type\": \"thinking\", \"thinking\": \"I need add.\"}")), blocks);
  }
}
