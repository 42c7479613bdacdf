package dev.luosho.client;

import java.util.Optional;

/**
 * What a tool may want to know about the call it runs; a handler made with
 * {@link ToolHandler#withContext} receives it.
 *
 * @param sessionId the run's session
 * @param toolCallId stable across re-runs of the same call: usable as an idempotency key. A
 *     sub-agent's calls have ids qualified by their path ({@code "<lead call id>/<its call id>"})
 * @param toolName the tool's name
 * @param step the step of the run that asked
 * @param timeoutMs how long the run waits for the result before recording a timeout
 * @param subagent the sub-agent that asks; empty when the lead asks
 * @param attempt which hand-out of the call this is (R77): 1 the first time, one more each time
 *     the same call is handed out again after a daemon restart, a takeover or a resume (0: a
 *     daemon older than the field)
 * @param reconciled how the call's {@code tool.reconcile} was answered when this hand-out
 *     follows one: "" (none), "NOT_STARTED" or "UNKNOWN" (also when it went unanswered)
 */
public record ToolContext(String sessionId, String toolCallId, String toolName, int step, long timeoutMs,
    Optional<SubagentInfo> subagent, int attempt, String reconciled) {
  public ToolContext {
    subagent = subagent == null ? Optional.empty() : subagent;
    reconciled = reconciled == null ? "" : reconciled;
  }

  /** A context without the hand-out's attempt (0) and reconcile answer (""). */
  public ToolContext(String sessionId, String toolCallId, String toolName, int step, long timeoutMs,
      Optional<SubagentInfo> subagent) {
    this(sessionId, toolCallId, toolName, step, timeoutMs, subagent, 0, "");
  }

  /**
   * An earlier hand-out may have had its effect ({@code reconciled} is "UNKNOWN"): check by
   * {@link #toolCallId} before acting again.
   */
  public boolean mayHaveRun() {
    return reconciled.equals("UNKNOWN");
  }
}
