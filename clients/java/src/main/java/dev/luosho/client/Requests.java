package dev.luosho.client;

import dev.luosho.v1.*;

/** Small builders for the requests the facades send. */
public final class Requests {
  private Requests() {}

  /** A user message. */
  public static Message user(String text) {
    return Message.newBuilder().setRole(Role.ROLE_USER).setContent(text).build();
  }

  /** An Execute request with one user message (input may be null: no new input). */
  public static ExecuteRequest execute(String sessionId, AgentSpec agent, String input) {
    ExecuteRequest.Builder b = ExecuteRequest.newBuilder().setSessionId(sessionId);
    if (agent != null) b.setAgent(agent);
    if (input != null) b.addInput(user(input));
    return b.build();
  }

  /**
   * An Execute request that says what to do when the session is busy (docs/reference/rules.md R68):
   * IF_BUSY_ENQUEUE queues the input (the run's first event is input.queued), IF_BUSY_INTERRUPT
   * aborts the current run first, IF_BUSY_ROLLBACK also puts back the checkpoint from before it.
   */
  public static ExecuteRequest execute(String sessionId, AgentSpec agent, String input,
      IfBusy ifBusy) {
    return execute(sessionId, agent, input).toBuilder().setIfBusy(ifBusy).build();
  }

  public static ResumeRequest resume(String sessionId, AgentSpec agent) {
    ResumeRequest.Builder b = ResumeRequest.newBuilder().setSessionId(sessionId);
    if (agent != null) b.setAgent(agent);
    return b.build();
  }

  public static ResolveRequest resolve(String approvalId, boolean approved, String note) {
    return resolve(approvalId, approved, note, "");
  }

  /** A Resolve request naming the approval's session (lets a retry be recognised, R74). */
  public static ResolveRequest resolve(String approvalId, boolean approved, String note, String sessionId) {
    return ResolveRequest.newBuilder().setApprovalId(approvalId).setApproved(approved)
        .setNote(note == null ? "" : note).setSessionId(sessionId == null ? "" : sessionId).build();
  }

  /**
   * A Resolve request answering a question (an approval of kind QUESTION, R88): the answer
   * becomes the question call's result {"answer": TEXT}.
   */
  public static ResolveRequest answer(String approvalId, String answer) {
    return ResolveRequest.newBuilder().setApprovalId(approvalId).setApproved(true)
        .setAnswer(answer == null ? "" : answer).build();
  }
}
