package dev.luosho.client;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import luosho.v1.Agent;
import luosho.v1.AgentServiceGrpc;

/**
 * The blocking client of a luoshod daemon. Streams are {@link Run}s and {@link Watch}es read
 * in the calling thread; every failure is a typed {@link LuoshoException}.
 */
public final class Client implements AutoCloseable {
  private final ManagedChannel channel;
  private final boolean ownsChannel;
  private final AgentServiceGrpc.AgentServiceBlockingStub stub;

  /** A client on a new plaintext channel to {@code host:port}. */
  public Client(String target) {
    this(ManagedChannelBuilder.forTarget(target).usePlaintext().build(), true);
  }

  /** A client on the caller's channel (not closed by {@link #close()}). */
  public Client(ManagedChannel channel) {
    this(channel, false);
  }

  private Client(ManagedChannel channel, boolean ownsChannel) {
    this.channel = channel;
    this.ownsChannel = ownsChannel;
    this.stub = AgentServiceGrpc.newBlockingStub(channel);
  }

  /** Start, continue or resume the run of sessionId with one user message. */
  public Run execute(String sessionId, String input, Agent.AgentSpec agent, Map<String, ToolHandler> tools) {
    return execute(Requests.execute(sessionId, agent, input), tools);
  }

  /** Start, continue or resume a run from a full ExecuteRequest. */
  public Run execute(Agent.ExecuteRequest request, Map<String, ToolHandler> tools) {
    return new Run(request.getSessionId(), () -> stub.execute(request),
        r -> ((Agent.ExecuteResponse) r).getEvent(), new Tools(tools), this::submit, false);
  }

  /** Finish an interrupted run with the agent saved in its checkpoint. */
  public Run resume(String sessionId, Map<String, ToolHandler> tools) {
    return resume(Requests.resume(sessionId, null), tools);
  }

  public Run resume(Agent.ResumeRequest request, Map<String, ToolHandler> tools) {
    return new Run(request.getSessionId(), () -> stub.resume(request),
        r -> ((Agent.ResumeResponse) r).getEvent(), new Tools(tools), this::submit, true);
  }

  /** Decide a pending approval and continue its run. */
  public Run resolve(String approvalId, boolean approved, String note, Map<String, ToolHandler> tools) {
    return resolve(Requests.resolve(approvalId, approved, note), tools);
  }

  public Run resolve(Agent.ResolveRequest request, Map<String, ToolHandler> tools) {
    return new Run("", () -> stub.resolve(request),
        r -> ((Agent.ResolveResponse) r).getEvent(), new Tools(tools), this::submit, false);
  }

  private void submit(Agent.SubmitToolResultRequest request) {
    call(() -> stub.submitToolResult(request));
  }

  /** Answer a tool call by hand; the outcome (ACCEPTED or DUPLICATE). */
  public Agent.SubmitOutcome submitToolResult(String sessionId, String toolCallId, Object result, boolean isError) {
    String json;
    try {
      json = Tools.dumps(result);
    } catch (Exception e) {
      throw new IllegalArgumentException("the result is not JSON-serialisable", e);
    }
    return call(() -> stub.submitToolResult(Agent.SubmitToolResultRequest.newBuilder()
        .setSessionId(sessionId).setToolCallId(toolCallId).setResultJson(json).setIsError(isError)
        .build())).getOutcome();
  }

  /** Abort the session's running run; false when none was running in the daemon. */
  public boolean cancel(String sessionId) {
    return call(() -> stub.cancel(Agent.CancelRequest.newBuilder().setSessionId(sessionId).build())).getCancelled();
  }

  /** The session's latest checkpoint. */
  public Agent.Checkpoint getSession(String sessionId) {
    return call(() -> stub.getSession(Agent.GetSessionRequest.newBuilder().setSessionId(sessionId).build()))
        .getCheckpoint();
  }

  public boolean deleteSession(String sessionId) {
    return call(() -> stub.deleteSession(Agent.DeleteSessionRequest.newBuilder().setSessionId(sessionId).build()))
        .getDeleted();
  }

  /** Pending approvals (of one session, or all when sessionId is empty), every page. */
  public List<Agent.Approval> listApprovals(String sessionId) {
    List<Agent.Approval> out = new ArrayList<>();
    String token = "";
    do {
      Agent.ListApprovalsResponse page = call(stub::listApprovals,
          Agent.ListApprovalsRequest.newBuilder().setSessionId(sessionId).setPageToken(token).build());
      out.addAll(page.getApprovalsList());
      token = page.getNextPageToken();
    } while (!token.isEmpty());
    return out;
  }

  /** The session's checkpoint history, newest first, every page. */
  public List<Agent.HistoryEntry> history(String sessionId, boolean includeCheckpoint) {
    List<Agent.HistoryEntry> out = new ArrayList<>();
    String token = "";
    do {
      Agent.HistoryResponse page = call(stub::history, Agent.HistoryRequest.newBuilder()
          .setSessionId(sessionId).setIncludeCheckpoint(includeCheckpoint).setPageToken(token).build());
      out.addAll(page.getEntriesList());
      token = page.getNextPageToken();
    } while (!token.isEmpty());
    return out;
  }

  /** A new session from step fromStep of sessionId's history, with a patch (may be null). */
  public Agent.ForkResponse fork(String sessionId, int fromStep, String newSessionId, Agent.ForkPatch patch) {
    Agent.ForkRequest.Builder b = Agent.ForkRequest.newBuilder()
        .setSessionId(sessionId).setFromStep(fromStep).setNewSessionId(newSessionId == null ? "" : newSessionId);
    if (patch != null) b.setPatch(patch);
    return call(stub::fork, b.build());
  }

  /** Two sessions' trajectories side by side. */
  public Agent.CompareResponse compare(String sessionIdA, String sessionIdB) {
    return call(stub::compare, Agent.CompareRequest.newBuilder()
        .setSessionIdA(sessionIdA).setSessionIdB(sessionIdB).build());
  }

  /** The session's events with seq greater than afterSeq; with follow, live events too. */
  public Watch watch(String sessionId, long afterSeq, boolean follow) {
    Agent.WatchRequest request = Agent.WatchRequest.newBuilder()
        .setSessionId(sessionId).setAfterSeq(afterSeq).setFollow(follow).build();
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
