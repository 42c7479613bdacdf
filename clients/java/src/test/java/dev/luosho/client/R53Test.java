package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import dev.luosho.v1.*;
import org.junit.jupiter.api.Test;

/**
 * R53 against a real daemon: a tool result sent as input that answers no open call is an
 * {@link InvalidArgumentException} (reason INVALID_MESSAGE, the message's index and call id in
 * its metadata), not retried, nothing saved. The client sends tool messages only when the
 * caller's request holds them: its run loop answers tool.call events with SubmitToolResult,
 * and a retry sends the caller's request again, unchanged.
 */
class R53Test extends SharedDaemonTest {
  private static Message tool(String callId, String content) {
    return Message.newBuilder().setRole(Role.ROLE_TOOL).setToolCallId(callId)
        .setToolName("add").setContent(content).build();
  }

  private static void refused(Run run, String index, String callId) {
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, run::result);
    assertEquals("INVALID_MESSAGE", e.reason());
    assertEquals(index, e.metadata().get("index"));
    assertEquals(callId, e.metadata().get("tool_call_id"));
    assertEquals(1, run.attempts()); // an invalid argument is not retried
    assertEquals(List.of(), run.events());
  }

  @Test
  void anOrphanToolResultInANewSession() {
    ExecuteRequest request = Requests.execute("java-r53-new", Scripts.agent(false, Scripts.text("done")),
        "Read gauge G-1").toBuilder().addInput(tool("call_x_9", "{\"bar\": 1}")).build();
    refused(client.execute(request, Map.of()), "1", "call_x_9");
    assertThrows(CheckpointNotFoundException.class, () -> client.getSession("java-r53-new"));
  }

  @Test
  void aSecondResultAfterAFinishedRun() {
    AgentSpec agent = Scripts.agent(false, Scripts.call("add", 1, 2), Scripts.text("done"));
    assertEquals(FinishReason.FINISH_REASON_STOP,
        client.execute("java-r53-done", "add", agent, Map.of("add", Scripts.add())).result().finishReason());
    Checkpoint before = client.getSession("java-r53-done");
    ExecuteRequest request = Requests.execute("java-r53-done", agent, null).toBuilder()
        .addInput(tool("call_0_0", "{\"bar\": 9}")).build();
    refused(client.execute(request, Map.of("add", Scripts.add())), "0", "call_0_0");
    Checkpoint after = client.getSession("java-r53-done");
    assertEquals(before.getVersion(), after.getVersion());
    assertEquals(before.getMessagesCount(), after.getMessagesCount());
  }
}
