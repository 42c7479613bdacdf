package dev.luosho.client;

import dev.luosho.v1.ReconcileOutcome;

/**
 * A {@link Reconciler}'s answer (R77): {@link #done} (the call happened: its result is recorded
 * and the tool is not run again), {@link #NOT_STARTED} or {@link #UNKNOWN} (the call is handed
 * out again; with UNKNOWN the tool sees {@link ToolContext#mayHaveRun()}).
 *
 * @param outcome what the answer says
 * @param result the call's result (any value Jackson writes) for DONE; null otherwise
 * @param isError whether that result is an error result
 */
public record ReconcileAnswer(ReconcileOutcome outcome, Object result, boolean isError) {
  /** The call never started: it is handed out again. */
  public static final ReconcileAnswer NOT_STARTED =
      new ReconcileAnswer(ReconcileOutcome.RECONCILE_OUTCOME_NOT_STARTED, null, false);
  /** The client cannot tell: it is handed out again, and the tool checks by the call id first. */
  public static final ReconcileAnswer UNKNOWN =
      new ReconcileAnswer(ReconcileOutcome.RECONCILE_OUTCOME_UNKNOWN, null, false);

  /** The call happened; {@code result} is its result. */
  public static ReconcileAnswer done(Object result) {
    return new ReconcileAnswer(ReconcileOutcome.RECONCILE_OUTCOME_DONE, result, false);
  }

  /** The call happened and failed; {@code result} is its error result. */
  public static ReconcileAnswer doneWithError(Object result) {
    return new ReconcileAnswer(ReconcileOutcome.RECONCILE_OUTCOME_DONE, result, true);
  }
}
