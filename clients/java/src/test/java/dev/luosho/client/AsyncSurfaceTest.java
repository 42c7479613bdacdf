package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import dev.luosho.v1.*;
import org.junit.jupiter.api.Test;

/**
 * The {@link AsyncClient}'s calls beyond execute/resume, each against the shared daemon: the
 * same surface as the blocking {@link Client}.
 */
class AsyncSurfaceTest extends SharedDaemonTest {
  @Test
  void historyForkCompareWatchAndDeleteSession() throws Exception {
    String session = "java-async-surface";
    RunResult result = await(async.execute(session, "Add twice", Scripts.twoAdds(), Map.of("add", Scripts.add()), null));
    assertEquals(FinishReason.FINISH_REASON_STOP, result.finishReason());

    List<HistoryEntry> history = await(async.history(session, false));
    assertEquals(client.history(session, false), history);
    assertTrue(history.size() >= 3, history.toString());
    assertFalse(history.get(0).hasCheckpoint());
    assertTrue(await(async.history(session, true)).get(0).hasCheckpoint());

    ForkResponse fork = await(async.fork(session, 1, session + "-fork", null));
    assertEquals(session + "-fork", fork.getSessionId());
    RunResult forked = await(async.resume(fork.getSessionId(), Map.of("add", (ToolHandler) args -> 100), null));
    assertEquals(FinishReason.FINISH_REASON_STOP, forked.finishReason());
    CompareResponse compare = await(async.compare(session, fork.getSessionId()));
    assertFalse(compare.getAList().isEmpty());
    assertFalse(compare.getBList().isEmpty());
    assertTrue(compare.hasDivergedAt(), compare.toString()); // the fork's tool answered 100, not 3
    assertEquals(client.compare(session, fork.getSessionId()), compare);

    List<Long> seqs = Collections.synchronizedList(new ArrayList<>());
    long last = await(async.watch(session, 0, false, e -> seqs.add(e.getSeq())));
    assertEquals(result.events().stream().map(Event::getSeq).toList(), seqs);
    assertEquals(seqs.get(seqs.size() - 1), last);
    List<Long> after = Collections.synchronizedList(new ArrayList<>());
    assertEquals(last, await(async.watch(session, last - 2, false, e -> after.add(e.getSeq()))));
    assertEquals(List.of(last - 1, last), after);

    // With follow the watch goes on: the next run's events come to the listener, until cancelled.
    List<String> live = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch runDone = new CountDownLatch(1);
    CompletableFuture<Long> following = async.watch(session, last, true, e -> {
      live.add(e.getType());
      if (e.getType().equals("run.done")) runDone.countDown();
    });
    RunResult again = await(async.execute(Requests.execute(session, Scripts.agent(false, Scripts.text("again")), "more"),
        Map.of(), null));
    assertTrue(runDone.await(30, TimeUnit.SECONDS), live.toString());
    assertEquals(again.events().stream().map(Event::getType).toList(), live);
    assertThrows(TimeoutException.class, () -> following.get(200, TimeUnit.MILLISECONDS)); // still following
    assertTrue(following.cancel(true));
    assertTrue(following.isCancelled());

    assertTrue(await(async.listSessions(CheckpointStatus.CHECKPOINT_STATUS_UNSPECIFIED)).stream()
        .map(SessionSummary::getSessionId).toList().containsAll(List.of(session, fork.getSessionId())));
    assertTrue(await(async.deleteSession(fork.getSessionId())));
    failure(CheckpointNotFoundException.class, async.getSession(fork.getSessionId()));
    assertFalse(await(async.deleteSession(fork.getSessionId())));
    assertTrue(await(async.listSessions(CheckpointStatus.CHECKPOINT_STATUS_FINISHED)).stream()
        .map(SessionSummary::getSessionId).noneMatch(fork.getSessionId()::equals));
  }

  @Test
  void anApprovalIsListedAndResolvedNamingItsSession() throws Exception {
    String session = "java-async-approval";
    AgentSpec agent = Scripts.agent(true, Scripts.call("add", 2, 5), Scripts.text("approved and done"));
    RunResult paused = await(async.execute(session, "Add with approval", agent, Map.of("add", Scripts.add()), null));
    assertEquals(FinishReason.FINISH_REASON_AWAITING_APPROVAL, paused.finishReason());
    assertEquals(List.of(paused.approvalId()), await(async.listApprovals(session)).stream()
        .map(Approval::getApprovalId).toList());
    assertTrue(await(async.listApprovals("")).stream().anyMatch(a -> a.getApprovalId().equals(paused.approvalId())));

    List<String> seen = Collections.synchronizedList(new ArrayList<>());
    RunResult done = await(async.resolve(paused.approvalId(), true, "fine", session, Map.of("add", Scripts.add()),
        e -> seen.add(e.getType())));
    assertEquals(session, done.sessionId());
    assertEquals(List.of(FinishReason.FINISH_REASON_STOP, "approved and done"), List.of(done.finishReason(), done.finalText()));
    assertTrue(done.events().stream().anyMatch(e -> e.hasToolResult() && e.getToolResult().getResultJson().equals("7")));
    assertEquals(done.events().stream().map(Event::getType).toList(), seen);
    assertEquals(List.of(), await(async.listApprovals(session)));
  }

  @Test
  void aQuestionIsAnswered() throws Exception {
    String session = "java-async-r88";
    ObjectNode ask = Tools.JSON.createObjectNode();
    ask.putArray("tool_calls").addObject().put("name", "ask").putObject("arguments").put("question", "Daily or weekly?");
    AgentSpec agent = Scripts.agent(false, ask, Scripts.text("weekly it is")).toBuilder()
        .addTools(ToolSpec.newBuilder().setName("ask").setDescription("ask the person in charge")
            .setInputSchemaJson("{\"type\":\"object\",\"properties\":{\"question\":{\"type\":\"string\"}}}")
            .setQuestion(true))
        .build();
    RunResult paused = await(async.execute(session, "make the report", agent, Map.of(), null));
    assertEquals(ApprovalKind.APPROVAL_KIND_QUESTION, paused.approval().getKind());

    RunResult done = await(async.answer(paused.approvalId(), "weekly", Map.of(), null));
    assertEquals(List.of(session, FinishReason.FINISH_REASON_STOP, "weekly it is"),
        List.of(done.sessionId(), done.finishReason(), done.finalText()));
    Message answered = await(async.getSession(session)).getMessagesList().stream()
        .filter(m -> m.getRole() == Role.ROLE_TOOL).findFirst().orElseThrow();
    assertEquals(Tools.JSON.readTree("{\"answer\": \"weekly\"}"), Tools.JSON.readTree(answered.getContent()));
  }

  @Test
  void aToolResultSubmittedByHandIsTheCallsResult() throws Exception {
    String session = "java-async-submit";
    List<SubmitOutcome> outcomes = Collections.synchronizedList(new ArrayList<>());
    // The handler answers its own call by hand first: the client's answer after it is a duplicate.
    ToolHandler byHand = ToolHandler.withContext((args, ctx) -> {
      outcomes.add(async.submitToolResult(ctx.sessionId(), ctx.toolCallId(), Map.of("sum", 42), false)
          .get(30, TimeUnit.SECONDS));
      outcomes.add(async.submitToolResult(ctx.sessionId(), ctx.toolCallId(), Map.of("sum", 43), false)
          .get(30, TimeUnit.SECONDS));
      return "not this";
    });
    RunResult done = await(async.execute(session, "Add", Scripts.agent(false, Scripts.call("add", 40, 2),
        Scripts.text("done")), Map.of("add", byHand), null));
    assertEquals(FinishReason.FINISH_REASON_STOP, done.finishReason());
    assertEquals(List.of(SubmitOutcome.SUBMIT_OUTCOME_ACCEPTED, SubmitOutcome.SUBMIT_OUTCOME_DUPLICATE), outcomes);
    Message result = await(async.getSession(session)).getMessagesList().stream()
        .filter(m -> m.getRole() == Role.ROLE_TOOL).findFirst().orElseThrow();
    assertEquals(Tools.JSON.readTree("{\"sum\": 42}"), Tools.JSON.readTree(result.getContent()));
    assertThrows(IllegalArgumentException.class,
        () -> async.submitToolResult(session, "call-x", new Object(), false));
  }

  @Test
  void compactByHandAPruneThenASummary() throws Exception {
    String session = "java-async-r85";
    String summary = "Two pages were fetched and read.";
    AgentSpec agent = Scripts.pagesWithCompaction(summary);
    await(async.execute(session, "Read pages 1 and 2.", agent,
        Map.of("fetch", Scripts.fetch()), null));
    CompactResponse pruned = await(async.compact(session, CompactionStrategy.COMPACTION_STRATEGY_PRUNE));
    assertTrue(pruned.getCompacted());
    assertTrue(pruned.getCheckpoint().getCompaction().getPrunedBefore() > 0);
    assertEquals("", pruned.getCheckpoint().getCompaction().getSummary());
    CompactResponse both = await(async.compact(session, CompactionStrategy.COMPACTION_STRATEGY_UNSPECIFIED));
    assertEquals(List.of(true, summary, 2), List.of(both.getCompacted(),
        both.getCheckpoint().getCompaction().getSummary(), both.getCheckpoint().getCompaction().getCount()));
    assertEquals(both.getCheckpoint().getCompaction(), await(async.getSession(session)).getCompaction());
    failure(CheckpointNotFoundException.class, async.compact(session + "-nobody", CompactionStrategy.COMPACTION_STRATEGY_PRUNE));
  }
}
