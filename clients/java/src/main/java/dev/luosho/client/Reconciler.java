package dev.luosho.client;

/**
 * A tool's reconcile function (R77): asked, through a {@code tool.reconcile} event, whether a
 * call handed out before with no recorded result happened. Attach it to the tool's handler
 * with {@link ToolHandler#reconciled} (the client then sets {@code reconcile} on that tool of
 * the agent it sends). One that throws answers {@link ReconcileAnswer#UNKNOWN}; so does a
 * flagged tool without one.
 */
@FunctionalInterface
public interface Reconciler {
  ReconcileAnswer reconcile(ReconcileCall call) throws Exception;
}
