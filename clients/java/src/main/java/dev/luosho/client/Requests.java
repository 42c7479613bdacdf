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

  /**
   * A Resume request that wakes a sleeping session now (R86): its {@code sleep} call's result
   * says "woken": "resume". Without wake, Resume of a sleeping session throws
   * {@link SessionSleepingException}; with it, Resume of one that is not sleeping throws
   * {@link NotSleepingException}.
   */
  public static ResumeRequest wake(String sessionId) {
    return ResumeRequest.newBuilder().setSessionId(sessionId).setWake(true).build();
  }

  /**
   * A schedule (R87) firing by a five-field cron expression read in {@code timeZone} (IANA;
   * empty: UTC), running {@code agent} with one user message; the policies are the
   * defaults (overlap SKIP, catch-up LATEST, a new session each fire): set others on
   * {@code toBuilder()}.
   */
  public static ScheduleSpec cronSchedule(String name, AgentSpec agent, String input, String cron,
      String timeZone) {
    return schedule(name, agent, input).setCron(ScheduleCron.newBuilder().setExpression(cron)
        .setTimeZone(timeZone == null ? "" : timeZone)).build();
  }

  /** A schedule (R87) firing every {@code interval} (at least a second) from its creation. */
  public static ScheduleSpec intervalSchedule(String name, AgentSpec agent, String input,
      java.time.Duration interval) {
    return schedule(name, agent, input).setIntervalMs(interval.toMillis()).build();
  }

  private static ScheduleSpec.Builder schedule(String name, AgentSpec agent, String input) {
    ScheduleSpec.Builder b = ScheduleSpec.newBuilder().setName(name).setAgent(agent);
    if (input != null) b.addInput(user(input));
    return b;
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

  /**
   * A SubmitToolResult request answering a call by hand: {@code result} written as JSON.
   * Throws {@link IllegalArgumentException} when it is not JSON-serialisable.
   */
  public static SubmitToolResultRequest submitToolResult(String sessionId, String toolCallId, Object result,
      boolean isError) {
    String json;
    try {
      json = Tools.dumps(result);
    } catch (Exception e) {
      throw new IllegalArgumentException("the result is not JSON-serialisable", e);
    }
    return SubmitToolResultRequest.newBuilder().setSessionId(sessionId).setToolCallId(toolCallId)
        .setResultJson(json).setIsError(isError).build();
  }

  /** A Fork request: a new session from step fromStep, with a patch (may be null; newSessionId null: the daemon names it). */
  public static ForkRequest fork(String sessionId, int fromStep, String newSessionId, ForkPatch patch) {
    ForkRequest.Builder b = ForkRequest.newBuilder()
        .setSessionId(sessionId).setFromStep(fromStep).setNewSessionId(newSessionId == null ? "" : newSessionId);
    if (patch != null) b.setPatch(patch);
    return b.build();
  }

  /** A Watch request: the session's events with seq greater than afterSeq; with follow, live events too. */
  public static WatchRequest watch(String sessionId, long afterSeq, boolean follow) {
    return WatchRequest.newBuilder().setSessionId(sessionId).setAfterSeq(afterSeq).setFollow(follow).build();
  }

  /** One page of ListSessions (status UNSPECIFIED: every status) from the page token. */
  static ListSessionsRequest listSessions(CheckpointStatus status, String pageToken) {
    return ListSessionsRequest.newBuilder().setStatus(status).setPageToken(pageToken).build();
  }

  /** One page of ListApprovals (sessionId empty: every session's) from the page token. */
  static ListApprovalsRequest listApprovals(String sessionId, String pageToken) {
    return ListApprovalsRequest.newBuilder().setSessionId(sessionId).setPageToken(pageToken).build();
  }

  /** One page of History from the page token. */
  static HistoryRequest history(String sessionId, boolean includeCheckpoint, String pageToken) {
    return HistoryRequest.newBuilder().setSessionId(sessionId).setIncludeCheckpoint(includeCheckpoint)
        .setPageToken(pageToken).build();
  }

  /** The schedule of that name among {@code schedules} (ListSchedules has no filter). */
  static java.util.Optional<Schedule> named(java.util.List<Schedule> schedules, String name) {
    return schedules.stream().filter(s -> s.getSpec().getName().equals(name)).findFirst();
  }
}
