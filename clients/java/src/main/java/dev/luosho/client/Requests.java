package dev.luosho.client;

import luosho.v1.Agent;

/** Small builders for the requests the facades send. */
public final class Requests {
  private Requests() {}

  /** A user message. */
  public static Agent.Message user(String text) {
    return Agent.Message.newBuilder().setRole(Agent.Role.ROLE_USER).setContent(text).build();
  }

  /** An Execute request with one user message (input may be null: no new input). */
  public static Agent.ExecuteRequest execute(String sessionId, Agent.AgentSpec agent, String input) {
    Agent.ExecuteRequest.Builder b = Agent.ExecuteRequest.newBuilder().setSessionId(sessionId);
    if (agent != null) b.setAgent(agent);
    if (input != null) b.addInput(user(input));
    return b.build();
  }

  /**
   * An Execute request that says what to do when the session is busy (docs/reference/rules.md R68):
   * IF_BUSY_ENQUEUE queues the input (the run's first event is input.queued), IF_BUSY_INTERRUPT
   * aborts the current run first, IF_BUSY_ROLLBACK also puts back the checkpoint from before it.
   */
  public static Agent.ExecuteRequest execute(String sessionId, Agent.AgentSpec agent, String input,
      Agent.IfBusy ifBusy) {
    return execute(sessionId, agent, input).toBuilder().setIfBusy(ifBusy).build();
  }

  public static Agent.ResumeRequest resume(String sessionId, Agent.AgentSpec agent) {
    Agent.ResumeRequest.Builder b = Agent.ResumeRequest.newBuilder().setSessionId(sessionId);
    if (agent != null) b.setAgent(agent);
    return b.build();
  }

  public static Agent.ResolveRequest resolve(String approvalId, boolean approved, String note) {
    return resolve(approvalId, approved, note, "");
  }

  /** A Resolve request naming the approval's session (lets a retry be recognised, R74). */
  public static Agent.ResolveRequest resolve(String approvalId, boolean approved, String note, String sessionId) {
    return Agent.ResolveRequest.newBuilder().setApprovalId(approvalId).setApproved(approved)
        .setNote(note == null ? "" : note).setSessionId(sessionId == null ? "" : sessionId).build();
  }
}
