package dev.luosho.client;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import dev.luosho.v1.*;
import dev.luosho.v1.AgentServiceGrpc;

/**
 * The blocking client of a luoshod daemon. Streams are {@link Run}s and {@link Watch}es read
 * in the calling thread; every failure is a typed {@link LuoshoException}.
 *
 * <p>Runs (execute, resume, resolve) carry a request id and retry a stream the daemon or the
 * network broke as the client's {@link RetryPolicy} says: {@link RetryPolicy#DEFAULT} unless
 * given, {@link RetryPolicy#NO_RETRY} for one attempt only. After a retry's backoff the channel
 * is told to reconnect at once ({@link ManagedChannel#resetConnectBackoff()}) instead of
 * waiting out grpc-java's reconnect backoff (1 s growing to 2 minutes), and the retry waits for
 * it to be READY (at most the policy's max backoff) before it opens the next attempt: in
 * {@code TRANSIENT_FAILURE} every call would fail at once. The policy bounds the attempts in a
 * row without progress (no new model turn or tool result), each retry waits at least the
 * failure's {@code retry_after_s}, and an answer no retry can fix (such as
 * {@link ProviderRejectedException}) is thrown at once.
 */
public final class Client implements AutoCloseable {
  private final ManagedChannel channel;
  private final boolean ownsChannel;
  private final AgentServiceGrpc.AgentServiceBlockingStub stub;
  private final RetryPolicy retry;

  /** A client on a new plaintext channel to {@code host:port}, with the default retries. */
  public Client(String target) {
    this(target, RetryPolicy.DEFAULT);
  }

  /** A client on a new plaintext channel to {@code host:port}; {@code retry} null: no retries. */
  public Client(String target, RetryPolicy retry) {
    this(ManagedChannelBuilder.forTarget(target).usePlaintext().build(), true, retry);
  }

  /** A client on the caller's channel (not closed by {@link #close()}), with the default retries. */
  public Client(ManagedChannel channel) {
    this(channel, false, RetryPolicy.DEFAULT);
  }

  /** A client on the caller's channel (not closed by {@link #close()}). */
  public Client(ManagedChannel channel, RetryPolicy retry) {
    this(channel, false, retry);
  }

  private Client(ManagedChannel channel, boolean ownsChannel, RetryPolicy retry) {
    this.channel = channel;
    this.ownsChannel = ownsChannel;
    this.stub = AgentServiceGrpc.newBlockingStub(channel);
    this.retry = retry == null ? RetryPolicy.NO_RETRY : retry;
  }

  /** How this client's runs retry. */
  public RetryPolicy retryPolicy() { return retry; }

  /** Start, continue or resume the run of sessionId with one user message. */
  public Run execute(String sessionId, String input, AgentSpec agent, Map<String, ToolHandler> tools) {
    return execute(Requests.execute(sessionId, agent, input), tools);
  }

  /**
   * Start, continue or resume a run from a full ExecuteRequest. Its {@code request_id} is the
   * call's idempotency key, sent unchanged on every attempt; empty, a new UUIDv7 is used.
   */
  public Run execute(ExecuteRequest request, Map<String, ToolHandler> tools) {
    request = Tools.markReconciled(request, tools); // R77: the flag goes with the function
    ExecuteRequest sent = request.getRequestId().isEmpty()
        ? request.toBuilder().setRequestId(RequestIds.newRequestId()).build() : request;
    return run(sent.getSessionId(), sent.getRequestId(), known -> stub.execute(sent),
        r -> ((ExecuteResponse) r).getEvent(), tools, false);
  }

  /** Finish an interrupted run with the agent saved in its checkpoint. */
  public Run resume(String sessionId, Map<String, ToolHandler> tools) {
    return resume(Requests.resume(sessionId, null), tools);
  }

  /** Finish an interrupted run; an empty {@code request_id} gets a new UUIDv7. */
  public Run resume(ResumeRequest request, Map<String, ToolHandler> tools) {
    request = Tools.markReconciled(request, tools); // R77: the flag goes with the function
    ResumeRequest sent = request.getRequestId().isEmpty()
        ? request.toBuilder().setRequestId(RequestIds.newRequestId()).build() : request;
    return run(sent.getSessionId(), sent.getRequestId(), known -> stub.resume(sent),
        r -> ((ResumeResponse) r).getEvent(), tools, true);
  }

  /**
   * Wake a sleeping session now and run it to its end (R86); {@link NotSleepingException} when
   * it is not sleeping. (A plain {@code resume} of a sleeping session throws
   * {@link SessionSleepingException}, whose {@code wakeAt()} says until when.)
   */
  public Run wake(String sessionId, Map<String, ToolHandler> tools) {
    return resume(Requests.wake(sessionId), tools);
  }

  /** Decide a pending approval and continue its run. */
  public Run resolve(String approvalId, boolean approved, String note, Map<String, ToolHandler> tools) {
    return resolve(Requests.resolve(approvalId, approved, note), tools);
  }

  /** Answer a pending question (R88) and continue its run: the answer is the call's result. */
  public Run answer(String approvalId, String answer, Map<String, ToolHandler> tools) {
    return resolve(Requests.answer(approvalId, answer), tools);
  }

  /**
   * Decide a pending approval of {@code sessionId} and continue its run: the session lets a
   * retry be recognised even when the first attempt broke before its first event.
   */
  public Run resolve(String approvalId, boolean approved, String note, String sessionId,
      Map<String, ToolHandler> tools) {
    return resolve(Requests.resolve(approvalId, approved, note, sessionId), tools);
  }

  /**
   * Decide a pending approval from a full ResolveRequest; an empty {@code request_id} gets a
   * new UUIDv7, and an empty {@code session_id} is filled in for a retry once an event named it.
   */
  public Run resolve(ResolveRequest request, Map<String, ToolHandler> tools) {
    request = Tools.markReconciled(request, tools); // R77: the flag goes with the function
    ResolveRequest sent = request.getRequestId().isEmpty()
        ? request.toBuilder().setRequestId(RequestIds.newRequestId()).build() : request;
    return run(sent.getSessionId(), sent.getRequestId(), known -> stub.resolve(
            sent.getSessionId().isEmpty() && !known.isEmpty() ? sent.toBuilder().setSessionId(known).build() : sent),
        r -> ((ResolveResponse) r).getEvent(), tools, false);
  }

  private Run run(String sessionId, String requestId,
      java.util.function.Function<String, java.util.Iterator<? extends com.google.protobuf.Message>> start,
      java.util.function.Function<Object, Event> eventOf, Map<String, ToolHandler> tools,
      boolean emptyMeansFinished) {
    return new Run(sessionId, requestId, start, eventOf, new Tools(tools), this::submit, emptyMeansFinished,
        retry, limit -> ChannelReady.await(channel, limit));
  }

  private void submit(SubmitToolResultRequest request) {
    call(() -> stub.submitToolResult(request));
  }

  /** Answer a tool call by hand; the outcome (ACCEPTED or DUPLICATE). */
  public SubmitOutcome submitToolResult(String sessionId, String toolCallId, Object result, boolean isError) {
    SubmitToolResultRequest request = Requests.submitToolResult(sessionId, toolCallId, result, isError);
    return call(() -> stub.submitToolResult(request)).getOutcome();
  }

  /** Abort the session's running run; false when none was running in the daemon. */
  public boolean cancel(String sessionId) {
    return call(() -> stub.cancel(CancelRequest.newBuilder().setSessionId(sessionId).build())).getCancelled();
  }

  /** The inputs queued on the session (if_busy), in the order they will run. */
  public List<QueuedInput> queue(String sessionId) {
    return call(() -> stub.getSession(GetSessionRequest.newBuilder().setSessionId(sessionId).build()))
        .getQueueList();
  }

  /** Remove a queued input; false when the session queues none of that request id. */
  public boolean dequeueInput(String sessionId, String requestId) {
    return call(() -> stub.dequeueInput(DequeueInputRequest.newBuilder().setSessionId(sessionId)
        .setRequestId(requestId).build())).getRemoved();
  }

  /** The session's latest checkpoint. */
  public Checkpoint getSession(String sessionId) {
    return call(() -> stub.getSession(GetSessionRequest.newBuilder().setSessionId(sessionId).build()))
        .getCheckpoint();
  }

  public boolean deleteSession(String sessionId) {
    return call(() -> stub.deleteSession(DeleteSessionRequest.newBuilder().setSessionId(sessionId).build()))
        .getDeleted();
  }

  /** Compact the session's transcript by hand (R85); UNSPECIFIED takes the agent's strategy. */
  public CompactResponse compact(String sessionId, CompactionStrategy strategy) {
    return call(() -> stub.compact(
        CompactRequest.newBuilder().setSessionId(sessionId).setStrategy(strategy).build()));
  }

  /**
   * A new schedule (R87, see {@link Requests#cronSchedule} and {@link Requests#intervalSchedule}):
   * the daemon runs its agent at each fire. Throws {@link InvalidArgumentException}
   * (INVALID_SCHEDULE, UNKNOWN_TIME_ZONE) or {@link ScheduleExistsException}.
   */
  public Schedule createSchedule(ScheduleSpec spec) {
    return call(() -> stub.createSchedule(CreateScheduleRequest.newBuilder().setSpec(spec).build()))
        .getSchedule();
  }

  /** Every schedule, ordered by name. */
  public List<Schedule> listSchedules() {
    return call(() -> stub.listSchedules(ListSchedulesRequest.getDefaultInstance())).getSchedulesList();
  }

  /** The schedule of that name; empty when there is none. */
  public java.util.Optional<Schedule> getSchedule(String name) {
    return Requests.named(listSchedules(), name);
  }

  /** Stop the schedule's fires until {@link #resumeSchedule} (fires due meanwhile do not run). */
  public Schedule pauseSchedule(String name) {
    return call(() -> stub.pauseSchedule(PauseScheduleRequest.newBuilder().setName(name).build()))
        .getSchedule();
  }

  /** Let a paused schedule fire again, from its next time after now. */
  public Schedule resumeSchedule(String name) {
    return call(() -> stub.resumeSchedule(ResumeScheduleRequest.newBuilder().setName(name).build()))
        .getSchedule();
  }

  /** Delete the schedule (the runs it started go on); {@link ScheduleNotFoundException} if none. */
  public void deleteSchedule(String name) {
    call(() -> stub.deleteSchedule(DeleteScheduleRequest.newBuilder().setName(name).build()));
  }

  /** Fire the schedule once now: the fire's session and request id (follow it with watch). */
  public TriggerScheduleResponse triggerSchedule(String name) {
    return call(() -> stub.triggerSchedule(TriggerScheduleRequest.newBuilder().setName(name).build()));
  }

  /**
   * The sessions (of one status, or all when UNSPECIFIED), by session id, every page; a
   * SLEEPING one's {@code getWakeAt()} says when it wakes (R86).
   */
  public List<SessionSummary> listSessions(CheckpointStatus status) {
    List<SessionSummary> out = new ArrayList<>();
    String token = "";
    do {
      ListSessionsResponse page = call(stub::listSessions, Requests.listSessions(status, token));
      out.addAll(page.getSessionsList());
      token = page.getNextPageToken();
    } while (!token.isEmpty());
    return out;
  }

  /** Pending approvals (of one session, or all when sessionId is empty), every page. */
  public List<Approval> listApprovals(String sessionId) {
    List<Approval> out = new ArrayList<>();
    String token = "";
    do {
      ListApprovalsResponse page = call(stub::listApprovals, Requests.listApprovals(sessionId, token));
      out.addAll(page.getApprovalsList());
      token = page.getNextPageToken();
    } while (!token.isEmpty());
    return out;
  }

  /** The session's checkpoint history, newest first, every page. */
  public List<HistoryEntry> history(String sessionId, boolean includeCheckpoint) {
    List<HistoryEntry> out = new ArrayList<>();
    String token = "";
    do {
      HistoryResponse page = call(stub::history, Requests.history(sessionId, includeCheckpoint, token));
      out.addAll(page.getEntriesList());
      token = page.getNextPageToken();
    } while (!token.isEmpty());
    return out;
  }

  /** A new session from step fromStep of sessionId's history, with a patch (may be null). */
  public ForkResponse fork(String sessionId, int fromStep, String newSessionId, ForkPatch patch) {
    return call(stub::fork, Requests.fork(sessionId, fromStep, newSessionId, patch));
  }

  /** Two sessions' trajectories side by side. */
  public CompareResponse compare(String sessionIdA, String sessionIdB) {
    return call(stub::compare, CompareRequest.newBuilder()
        .setSessionIdA(sessionIdA).setSessionIdB(sessionIdB).build());
  }

  /** The session's events with seq greater than afterSeq; with follow, live events too. */
  public Watch watch(String sessionId, long afterSeq, boolean follow) {
    WatchRequest request = Requests.watch(sessionId, afterSeq, follow);
    return new Watch(afterSeq, () -> stub.watch(request));
  }


  private static <Q, R> R call(java.util.function.Function<Q, R> rpc, Q request) {
    return call(() -> rpc.apply(request));
  }

  private static <R> R call(java.util.function.Supplier<R> rpc) {
    try {
      return rpc.get();
    } catch (RuntimeException e) {
      throw Errors.translate(e);
    }
  }

  /** Close the channel if this client created it. */
  @Override
  public void close() {
    if (ownsChannel) {
      channel.shutdownNow();
      try {
        channel.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
