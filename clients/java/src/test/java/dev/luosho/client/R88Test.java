package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;
import dev.luosho.v1.*;
import org.junit.jupiter.api.Test;

/**
 * R88 against a real daemon: a run pauses on a question tool, the inbox lists it with kind
 * QUESTION and its text, {@code answer} resolves it, and the run finishes with
 * {"answer": TEXT} as the call's result.
 */
class R88Test extends SharedDaemonTest {
  @Test
  void aQuestionIsListedAnsweredAndItsAnswerIsTheCallsResult() throws Exception {
    ObjectNode ask = Tools.JSON.createObjectNode();
    ask.putArray("tool_calls").addObject().put("name", "ask").putObject("arguments")
        .put("question", "Daily or weekly?");
    AgentSpec agent = Scripts.agent(false, ask, Scripts.text("weekly it is")).toBuilder()
        .addTools(ToolSpec.newBuilder().setName("ask").setDescription("ask the person in charge")
            .setInputSchemaJson("{\"type\":\"object\",\"properties\":{\"question\":{\"type\":\"string\"}}}")
            .setQuestion(true))
        .build();
    RunResult paused = client.execute("java-r88", "make the report", agent, Map.of()).result();
    assertEquals(FinishReason.FINISH_REASON_AWAITING_APPROVAL, paused.finishReason());
    assertEquals(ApprovalKind.APPROVAL_KIND_QUESTION, paused.approval().getKind());

    List<Approval> listed = client.listApprovals("java-r88");
    assertEquals(1, listed.size(), listed.toString());
    Approval question = listed.get(0);
    assertEquals(List.of(paused.approvalId(), ApprovalKind.APPROVAL_KIND_QUESTION, "Daily or weekly?", "ask"),
        List.of(question.getApprovalId(), question.getKind(), question.getQuestion(),
            question.getToolCall().getName()));

    RunResult done = client.answer(question.getApprovalId(), "weekly", Map.of()).result();
    assertEquals("java-r88", done.sessionId());
    assertEquals(FinishReason.FINISH_REASON_STOP, done.finishReason());
    assertEquals("weekly it is", done.finalText());
    List<Message> results = client.getSession("java-r88").getMessagesList().stream()
        .filter(m -> m.getRole() == Role.ROLE_TOOL).toList();
    assertEquals(1, results.size(), results.toString());
    assertEquals("ask", results.get(0).getToolName());
    assertEquals(Tools.JSON.readTree("{\"answer\": \"weekly\"}"), Tools.JSON.readTree(results.get(0).getContent()));
    assertEquals(false, results.get(0).getIsError());
  }
}
