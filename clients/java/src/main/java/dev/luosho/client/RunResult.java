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
 * usage; null otherwise).
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
    BudgetExceeded budgetExceeded) {

  static RunResult of(String sessionId, List<Event> events, boolean emptyMeansFinished,
      String requestId, int attempts) {
    if (events.isEmpty() && emptyMeansFinished) {
      return new RunResult(sessionId, false, FinishReason.FINISH_REASON_UNSPECIFIED,
          CheckpointStatus.CHECKPOINT_STATUS_FINISHED, "", 0, Usage.getDefaultInstance(),
          "", 0, "", List.of(), null, requestId, attempts, null);
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
        List.copyOf(events), approval, requestId, attempts, tripped);
  }
}
