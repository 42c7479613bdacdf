package dev.luosho.client;

import java.util.List;
import dev.luosho.v1.*;

/**
 * The outcome of one Execute, Resume or Resolve stream, read from its {@code run.done} event.
 * {@code ran} is false only for a Resume of a session with nothing left to run. A run paused on
 * a tool that needs approval has finish reason AWAITING_APPROVAL, its {@code approvalId} and the
 * {@code approval} (null otherwise): decide it with {@code resolve}. {@code requestId} is the
 * run's idempotency key and {@code attempts} how many streams it took (more than 1 when the
 * client retried, see {@link RetryPolicy}). A run a limit stopped has finish reason
 * BUDGET_EXCEEDED or DEADLINE_EXCEEDED and {@code budgetExceeded}, its {@code budget.exceeded}
 * event's payload (which budget and limit, its value, what was used, the call's worst case, the
 * usage; null otherwise). {@code retries} and {@code fallbacks} are the run's
 * {@code provider.retry} and {@code provider.fallback} events in order (R82), the lead's and its
 * sub-agents'. {@code reasoning} is the model's readable reasoning as it streamed (the run's
 * {@code reasoning.delta} events, R84), joined; never part of {@code finalText} (each turn keeps
 * its blocks in the checkpoint, {@code Message.getReasoningList()}). A run that ended on the
 * agent's {@code sleep} call (R86) has finish reason SLEEPING and status SLEEPING.
 */
public record RunResult(
    String sessionId,
    boolean ran,
    FinishReason finishReason,
    CheckpointStatus status,
    String finalText,
    int stepIndex,
    Usage usage,
    String approvalId,
    int messageCount,
    String runId,
    List<Event> events,
    Approval approval,
    String requestId,
    int attempts,
    BudgetExceeded budgetExceeded,
    String outputJson,
    List<String> outputErrors,
    List<Retry> retries,
    List<Fallback> fallbacks,
    String reasoning) {

  /**
   * A {@code provider.retry} event (R82): {@code attempt} (1 = the first) of a call of
   * {@code model} failed with {@code error}, and the provider tries again after {@code delay}.
   * {@code subagent} is the path of the sub-agent whose call it was (empty: the lead).
   */
  public record Retry(int step, String model, int attempt, String error,
      java.time.Duration delay, List<String> subagent) {
    static Retry of(Event e) {
      ProviderRetry r = e.getProviderRetry();
      return new Retry(r.getStep(), r.getModel(), r.getAttempt(), r.getError(),
          java.time.Duration.ofMillis(r.getDelayMs()), List.copyOf(e.getSubagent().getPathList()));
    }
  }

  /**
   * A {@code provider.fallback} event (R82): {@code fromModel} failed with {@code error} (its
   * {@code reason} and the provider's {@code errorType}, "circuit_open" when it was skipped) and
   * {@code toModel} took the same turn. {@code subagent}: as for {@link Retry}.
   */
  public record Fallback(int step, String fromModel, String toModel, String error,
      String reason, String errorType, List<String> subagent) {
    static Fallback of(Event e) {
      ProviderFallback f = e.getProviderFallback();
      return new Fallback(f.getStep(), f.getFromModel(), f.getToModel(), f.getError(),
          f.getReason(), f.getErrorType(), List.copyOf(e.getSubagent().getPathList()));
    }
  }

  /**
   * The structured answer of an agent with {@code output_schema_json} (R83), read as
   * {@code type} with Jackson (a record, a POJO, {@code Map.class}, {@code JsonNode.class}).
   * Throws IllegalStateException when the run has none: see {@code outputErrors} and
   * FINISH_REASON_OUTPUT_INVALID.
   */
  public <T> T output(Class<T> type) {
    if (outputJson.isEmpty()) {
      throw new IllegalStateException("the run has no structured output (finish reason "
          + finishReason + (outputErrors.isEmpty() ? "" : ", errors: " + outputErrors) + ")");
    }
    try {
      return Tools.JSON.readValue(outputJson, type);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalArgumentException("the structured output is not a " + type.getName(), e);
    }
  }

  static RunResult of(String sessionId, List<Event> events, boolean emptyMeansFinished,
      String requestId, int attempts) {
    if (events.isEmpty() && emptyMeansFinished) {
      return new RunResult(sessionId, false, FinishReason.FINISH_REASON_UNSPECIFIED,
          CheckpointStatus.CHECKPOINT_STATUS_FINISHED, "", 0, Usage.getDefaultInstance(),
          "", 0, "", List.of(), null, requestId, attempts, null, "", List.of(), List.of(),
          List.of(), "");
    }
    Event last = null;
    Approval approval = null;
    BudgetExceeded tripped = null;
    for (int i = events.size() - 1; i >= 0; i--) {
      Event e = events.get(i);
      if (last == null && e.hasRunDone()) last = e;
      if (tripped == null && e.hasBudgetExceeded()) tripped = e.getBudgetExceeded();
      if (approval == null && e.hasApprovalRequested()) approval = e.getApprovalRequested().getApproval();
    }
    if (last == null) {
      throw new IncompleteRunException(io.grpc.Status.Code.UNKNOWN, "INCOMPLETE_RUN",
          "the stream of session '" + sessionId + "' ended without a run.done event ("
              + events.size() + " events received)",
          java.util.Map.of("session_id", sessionId, "events", String.valueOf(events.size())), null);
    }
    RunDone done = last.getRunDone();
    if (approval != null && !approval.getApprovalId().equals(done.getApprovalId())) approval = null;
    return new RunResult(
        last.getSessionId().isEmpty() ? sessionId : last.getSessionId(), true,
        done.getFinishReason(), done.getStatus(), done.getFinalText(), done.getStepIndex(),
        done.getUsage(), done.getApprovalId(), done.getMessageCount(), last.getRunId(),
        List.copyOf(events), approval, requestId, attempts, tripped, done.getOutputJson(),
        List.copyOf(done.getOutputErrorsList()),
        events.stream().filter(Event::hasProviderRetry).map(Retry::of).toList(),
        events.stream().filter(Event::hasProviderFallback).map(Fallback::of).toList(),
        events.stream().filter(Event::hasReasoningDelta).map(e -> e.getReasoningDelta().getText())
            .collect(java.util.stream.Collectors.joining()));
  }
}
