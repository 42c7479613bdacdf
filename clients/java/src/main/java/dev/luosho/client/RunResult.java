package dev.luosho.client;

import java.util.List;
import luosho.v1.Agent;

/**
 * The outcome of one Execute, Resume or Resolve stream, read from its {@code run.done} event.
 * {@code ran} is false only for a Resume of a session with nothing left to run. A run paused on
 * a tool that needs approval has finish reason AWAITING_APPROVAL, its {@code approvalId} and the
 * {@code approval} (null otherwise): decide it with {@code resolve}. {@code requestId} is the
 * run's idempotency key and {@code attempts} how many streams it took (more than 1 when the
 * client retried, see {@link RetryPolicy}).
 */
public record RunResult(
    String sessionId,
    boolean ran,
    Agent.FinishReason finishReason,
    Agent.CheckpointStatus status,
    String finalText,
    int stepIndex,
    Agent.Usage usage,
    String approvalId,
    int messageCount,
    String runId,
    List<Agent.Event> events,
    Agent.Approval approval,
    String requestId,
    int attempts) {

  static RunResult of(String sessionId, List<Agent.Event> events, boolean emptyMeansFinished,
      String requestId, int attempts) {
    if (events.isEmpty() && emptyMeansFinished) {
      return new RunResult(sessionId, false, Agent.FinishReason.FINISH_REASON_UNSPECIFIED,
          Agent.CheckpointStatus.CHECKPOINT_STATUS_FINISHED, "", 0, Agent.Usage.getDefaultInstance(),
          "", 0, "", List.of(), null, requestId, attempts);
    }
    Agent.Event last = null;
    Agent.Approval approval = null;
    for (int i = events.size() - 1; i >= 0; i--) {
      Agent.Event e = events.get(i);
      if (last == null && e.hasRunDone()) last = e;
      if (approval == null && e.hasApprovalRequested()) approval = e.getApprovalRequested().getApproval();
    }
    if (last == null) {
      throw new IncompleteRunException(io.grpc.Status.Code.UNKNOWN, "INCOMPLETE_RUN",
          "the stream of session '" + sessionId + "' ended without a run.done event ("
              + events.size() + " events received)",
          java.util.Map.of("session_id", sessionId, "events", String.valueOf(events.size())), null);
    }
    Agent.RunDone done = last.getRunDone();
    if (approval != null && !approval.getApprovalId().equals(done.getApprovalId())) approval = null;
    return new RunResult(
        last.getSessionId().isEmpty() ? sessionId : last.getSessionId(), true,
        done.getFinishReason(), done.getStatus(), done.getFinalText(), done.getStepIndex(),
        done.getUsage(), done.getApprovalId(), done.getMessageCount(), last.getRunId(),
        List.copyOf(events), approval, requestId, attempts);
  }
}
