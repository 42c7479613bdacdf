package dev.luosho.client;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import dev.luosho.v1.*;
import dev.luosho.v1.AgentServiceGrpc;

/**
 * The asynchronous client: runs complete {@link CompletableFuture}s and report each event to
 * an optional listener; tool handlers run on the client's executor (calls handed out together
 * run concurrently). A failed future holds a typed {@link LuoshoException}.
 *
 * <p>Runs carry a request id and retry as the client's {@link RetryPolicy} says (see
 * {@link Client}): at most {@code maxAttempts} attempts in a row without progress, each retry
 * after the larger of the backoff and the failure's {@code retry_after_s}. The listener never
 * sees an event twice, replayed {@code tool.call}s are not answered, and a call's tool runs
 * once per run; {@link RunResult#attempts()} counts the streams.
 */
public final class AsyncClient implements AutoCloseable {
  private final ManagedChannel channel;
  private final boolean ownsChannel;
  private final AgentServiceGrpc.AgentServiceStub stub;
  private final ExecutorService tools;
  private final ScheduledExecutorService retries;
  private final RetryPolicy retry;

  /** A client on a new plaintext channel to {@code host:port}, with the default retries. */
  public AsyncClient(String target) {
    this(target, RetryPolicy.DEFAULT);
  }

  /** A client on a new plaintext channel to {@code host:port}; {@code retry} null: no retries. */
  public AsyncClient(String target, RetryPolicy retry) {
    this(ManagedChannelBuilder.forTarget(target).usePlaintext().build(), true, retry);
  }

  /** A client on the caller's channel (not closed by {@link #close()}), with the default retries. */
  public AsyncClient(ManagedChannel channel) {
    this(channel, false, RetryPolicy.DEFAULT);
  }

  /** A client on the caller's channel (not closed by {@link #close()}). */
  public AsyncClient(ManagedChannel channel, RetryPolicy retry) {
    this(channel, false, retry);
  }

  private AsyncClient(ManagedChannel channel, boolean ownsChannel, RetryPolicy retry) {
    this.channel = channel;
    this.ownsChannel = ownsChannel;
    this.stub = AgentServiceGrpc.newStub(channel);
    this.retry = retry == null ? RetryPolicy.NO_RETRY : retry;
    this.tools = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "luosho-tool");
      t.setDaemon(true);
      return t;
    });
    this.retries = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "luosho-retry");
      t.setDaemon(true);
      return t;
    });
  }

  /** How this client's runs retry. */
  public RetryPolicy retryPolicy() { return retry; }

  public CompletableFuture<RunResult> execute(String sessionId, String input, AgentSpec agent,
      Map<String, ToolHandler> tools, Consumer<Event> onEvent) {
    return execute(Requests.execute(sessionId, agent, input), tools, onEvent);
  }

  /** A run from a full ExecuteRequest; an empty {@code request_id} gets a new UUIDv7. */
  public CompletableFuture<RunResult> execute(ExecuteRequest request, Map<String, ToolHandler> tools,
      Consumer<Event> onEvent) {
    request = Tools.markReconciled(request, tools); // R77: the flag goes with the function
    ExecuteRequest sent = request.getRequestId().isEmpty()
        ? request.toBuilder().setRequestId(RequestIds.newRequestId()).build() : request;
    return new AsyncRun<ExecuteResponse>(sent.getSessionId(), sent.getRequestId(), tools, onEvent, false,
        ExecuteResponse::getEvent, (known, o) -> stub.execute(sent, o)).start();
  }

  public CompletableFuture<RunResult> resume(String sessionId, Map<String, ToolHandler> tools,
      Consumer<Event> onEvent) {
    return resume(Requests.resume(sessionId, null), tools, onEvent);
  }

  /** A Resume from a full ResumeRequest; an empty {@code request_id} gets a new UUIDv7. */
  public CompletableFuture<RunResult> resume(ResumeRequest request, Map<String, ToolHandler> tools,
      Consumer<Event> onEvent) {
    request = Tools.markReconciled(request, tools); // R77: the flag goes with the function
    ResumeRequest sent = request.getRequestId().isEmpty()
        ? request.toBuilder().setRequestId(RequestIds.newRequestId()).build() : request;
    return new AsyncRun<ResumeResponse>(sent.getSessionId(), sent.getRequestId(), tools, onEvent, true,
        ResumeResponse::getEvent, (known, o) -> stub.resume(sent, o)).start();
  }

  /**
   * Wake a sleeping session now and run it to its end (R86); fails with
   * {@link NotSleepingException} when it is not sleeping. (A plain {@code resume} of a sleeping
   * session fails with {@link SessionSleepingException}, whose {@code wakeAt()} says until when.)
   */
  public CompletableFuture<RunResult> wake(String sessionId, Map<String, ToolHandler> tools,
      Consumer<Event> onEvent) {
    return resume(Requests.wake(sessionId), tools, onEvent);
  }

  public CompletableFuture<RunResult> resolve(String approvalId, boolean approved, String note,
      Map<String, ToolHandler> tools, Consumer<Event> onEvent) {
    return resolve(Requests.resolve(approvalId, approved, note), tools, onEvent);
  }

  /**
   * Decide a pending approval of {@code sessionId} and continue its run: the session lets a
   * retry be recognised even when the first attempt broke before its first event.
   */
  public CompletableFuture<RunResult> resolve(String approvalId, boolean approved, String note, String sessionId,
      Map<String, ToolHandler> tools, Consumer<Event> onEvent) {
    return resolve(Requests.resolve(approvalId, approved, note, sessionId), tools, onEvent);
  }

  /** Answer a pending question (R88) and continue its run: the answer is the call's result. */
  public CompletableFuture<RunResult> answer(String approvalId, String answer, Map<String, ToolHandler> tools,
      Consumer<Event> onEvent) {
    return resolve(Requests.answer(approvalId, answer), tools, onEvent);
  }

  /**
   * A Resolve from a full ResolveRequest; an empty {@code request_id} gets a new UUIDv7, and an
   * empty {@code session_id} is filled in for a retry once an event named it.
   */
  public CompletableFuture<RunResult> resolve(ResolveRequest request, Map<String, ToolHandler> tools,
      Consumer<Event> onEvent) {
    request = Tools.markReconciled(request, tools); // R77: the flag goes with the function
    ResolveRequest sent = request.getRequestId().isEmpty()
        ? request.toBuilder().setRequestId(RequestIds.newRequestId()).build() : request;
    return new AsyncRun<ResolveResponse>(sent.getSessionId(), sent.getRequestId(), tools, onEvent, false,
        ResolveResponse::getEvent, (known, o) -> stub.resolve(
            sent.getSessionId().isEmpty() && !known.isEmpty() ? sent.toBuilder().setSessionId(known).build() : sent,
            o)).start();
  }

  public CompletableFuture<Checkpoint> getSession(String sessionId) {
    return AsyncClient.<GetSessionResponse>unary(o -> stub.getSession(GetSessionRequest.newBuilder().setSessionId(sessionId).build(), o))
        .thenApply(GetSessionResponse::getCheckpoint);
  }

  /** The inputs queued on the session (if_busy), in the order they will run. */
  public CompletableFuture<java.util.List<QueuedInput>> queue(String sessionId) {
    return AsyncClient.<GetSessionResponse>unary(o -> stub.getSession(GetSessionRequest.newBuilder().setSessionId(sessionId).build(), o))
        .thenApply(GetSessionResponse::getQueueList);
  }

  /** Remove a queued input; false when the session queues none of that request id. */
  public CompletableFuture<Boolean> dequeueInput(String sessionId, String requestId) {
    return AsyncClient.<DequeueInputResponse>unary(o -> stub.dequeueInput(DequeueInputRequest.newBuilder()
        .setSessionId(sessionId).setRequestId(requestId).build(), o))
        .thenApply(DequeueInputResponse::getRemoved);
  }

  public CompletableFuture<Boolean> cancel(String sessionId) {
    return AsyncClient.<CancelResponse>unary(o -> stub.cancel(CancelRequest.newBuilder().setSessionId(sessionId).build(), o))
        .thenApply(CancelResponse::getCancelled);
  }

  /**
   * Answer a tool call by hand; the outcome (ACCEPTED or DUPLICATE). Throws
   * {@link IllegalArgumentException} at once when the result is not JSON-serialisable.
   */
  public CompletableFuture<SubmitOutcome> submitToolResult(String sessionId, String toolCallId, Object result,
      boolean isError) {
    SubmitToolResultRequest request = Requests.submitToolResult(sessionId, toolCallId, result, isError);
    return AsyncClient.<SubmitToolResultResponse>unary(o -> stub.submitToolResult(request, o))
        .thenApply(SubmitToolResultResponse::getOutcome);
  }

  /** Delete the session's checkpoint; false when there was none. */
  public CompletableFuture<Boolean> deleteSession(String sessionId) {
    return AsyncClient.<DeleteSessionResponse>unary(o -> stub.deleteSession(
        DeleteSessionRequest.newBuilder().setSessionId(sessionId).build(), o))
        .thenApply(DeleteSessionResponse::getDeleted);
  }

  /** Compact the session's transcript by hand (R85); UNSPECIFIED takes the agent's strategy. */
  public CompletableFuture<CompactResponse> compact(String sessionId, CompactionStrategy strategy) {
    return unary(o -> stub.compact(
        CompactRequest.newBuilder().setSessionId(sessionId).setStrategy(strategy).build(), o));
  }

  /**
   * A new schedule (R87, see {@link Requests#cronSchedule} and {@link Requests#intervalSchedule}):
   * the daemon runs its agent at each fire. Fails with {@link InvalidArgumentException}
   * (INVALID_SCHEDULE, UNKNOWN_TIME_ZONE) or {@link ScheduleExistsException}.
   */
  public CompletableFuture<Schedule> createSchedule(ScheduleSpec spec) {
    return AsyncClient.<CreateScheduleResponse>unary(o -> stub.createSchedule(
        CreateScheduleRequest.newBuilder().setSpec(spec).build(), o))
        .thenApply(CreateScheduleResponse::getSchedule);
  }

  /** Every schedule, ordered by name. */
  public CompletableFuture<List<Schedule>> listSchedules() {
    return AsyncClient.<ListSchedulesResponse>unary(o -> stub.listSchedules(ListSchedulesRequest.getDefaultInstance(), o))
        .thenApply(ListSchedulesResponse::getSchedulesList);
  }

  /** The schedule of that name; empty when there is none. */
  public CompletableFuture<java.util.Optional<Schedule>> getSchedule(String name) {
    return listSchedules().thenApply(all -> Requests.named(all, name));
  }

  /** Stop the schedule's fires until {@link #resumeSchedule} (fires due meanwhile do not run). */
  public CompletableFuture<Schedule> pauseSchedule(String name) {
    return AsyncClient.<PauseScheduleResponse>unary(o -> stub.pauseSchedule(
        PauseScheduleRequest.newBuilder().setName(name).build(), o))
        .thenApply(PauseScheduleResponse::getSchedule);
  }

  /** Let a paused schedule fire again, from its next time after now. */
  public CompletableFuture<Schedule> resumeSchedule(String name) {
    return AsyncClient.<ResumeScheduleResponse>unary(o -> stub.resumeSchedule(
        ResumeScheduleRequest.newBuilder().setName(name).build(), o))
        .thenApply(ResumeScheduleResponse::getSchedule);
  }

  /** Delete the schedule (the runs it started go on); {@link ScheduleNotFoundException} if none. */
  public CompletableFuture<Void> deleteSchedule(String name) {
    return AsyncClient.<DeleteScheduleResponse>unary(o -> stub.deleteSchedule(
        DeleteScheduleRequest.newBuilder().setName(name).build(), o))
        .thenApply(r -> null);
  }

  /** Fire the schedule once now: the fire's session and request id (follow it with watch). */
  public CompletableFuture<TriggerScheduleResponse> triggerSchedule(String name) {
    return unary(o -> stub.triggerSchedule(TriggerScheduleRequest.newBuilder().setName(name).build(), o));
  }

  /**
   * The sessions (of one status, or all when UNSPECIFIED), by session id, every page; a
   * SLEEPING one's {@code getWakeAt()} says when it wakes (R86).
   */
  public CompletableFuture<List<SessionSummary>> listSessions(CheckpointStatus status) {
    return pages(token -> AsyncClient.<ListSessionsResponse>unary(
            o -> stub.listSessions(Requests.listSessions(status, token), o)),
        ListSessionsResponse::getSessionsList, ListSessionsResponse::getNextPageToken);
  }

  /** Pending approvals (of one session, or all when sessionId is empty), every page. */
  public CompletableFuture<List<Approval>> listApprovals(String sessionId) {
    return pages(token -> AsyncClient.<ListApprovalsResponse>unary(
            o -> stub.listApprovals(Requests.listApprovals(sessionId, token), o)),
        ListApprovalsResponse::getApprovalsList, ListApprovalsResponse::getNextPageToken);
  }

  /** The session's checkpoint history, newest first, every page. */
  public CompletableFuture<List<HistoryEntry>> history(String sessionId, boolean includeCheckpoint) {
    return pages(token -> history(Requests.history(sessionId, includeCheckpoint, token)),
        HistoryResponse::getEntriesList, HistoryResponse::getNextPageToken);
  }

  /** A new session from step fromStep of sessionId's history, with a patch (may be null). */
  public CompletableFuture<ForkResponse> fork(String sessionId, int fromStep, String newSessionId, ForkPatch patch) {
    return fork(Requests.fork(sessionId, fromStep, newSessionId, patch));
  }

  /** Two sessions' trajectories side by side. */
  public CompletableFuture<CompareResponse> compare(String sessionIdA, String sessionIdB) {
    return unary(o -> stub.compare(CompareRequest.newBuilder()
        .setSessionIdA(sessionIdA).setSessionIdB(sessionIdB).build(), o));
  }

  /**
   * The session's events with seq greater than afterSeq, each handed to {@code onEvent} (on a
   * gRPC thread, in order); with follow, live events too. The future completes with the highest
   * seq seen (afterSeq if none) when the stream ends, and fails with the typed error when it
   * broke off (watch again from the last event's seq). Cancelling it cancels the stream.
   */
  public CompletableFuture<Long> watch(String sessionId, long afterSeq, boolean follow, Consumer<Event> onEvent) {
    CompletableFuture<Long> done = new CompletableFuture<>();
    java.util.concurrent.atomic.AtomicLong last = new java.util.concurrent.atomic.AtomicLong(afterSeq);
    try {
      stub.watch(Requests.watch(sessionId, afterSeq, follow), new ClientResponseObserver<WatchRequest, WatchResponse>() {
        @Override
        public void beforeStart(ClientCallStreamObserver<WatchRequest> call) {
          done.whenComplete((v, e) -> {
            if (done.isCancelled()) call.cancel("the watch was cancelled", null);
          });
        }

        @Override
        public void onNext(WatchResponse response) {
          Event event = response.getEvent();
          last.accumulateAndGet(event.getSeq(), Math::max);
          if (onEvent != null) onEvent.accept(event);
        }

        @Override
        public void onError(Throwable t) { done.completeExceptionally(Errors.translate(t)); }

        @Override
        public void onCompleted() { done.complete(last.get()); }
      });
    } catch (RuntimeException e) {
      done.completeExceptionally(Errors.translate(e));
    }
    return done;
  }

  /** Every page's items in order: {@code page} fetches the page of a token ("" first). */
  private static <R, E> CompletableFuture<List<E>> pages(Function<String, CompletableFuture<R>> page,
      Function<R, List<E>> items, Function<R, String> next) {
    List<E> out = new ArrayList<>();
    return pages(page, items, next, "", out).thenApply(v -> List.copyOf(out));
  }

  private static <R, E> CompletableFuture<Void> pages(Function<String, CompletableFuture<R>> page,
      Function<R, List<E>> items, Function<R, String> next, String token, List<E> out) {
    return page.apply(token).thenCompose(r -> {
      out.addAll(items.apply(r));
      String more = next.apply(r);
      return more.isEmpty() ? CompletableFuture.completedFuture(null) : pages(page, items, next, more, out);
    });
  }

  public CompletableFuture<HistoryResponse> history(HistoryRequest request) {
    return unary(o -> stub.history(request, o));
  }

  public CompletableFuture<ForkResponse> fork(ForkRequest request) {
    return unary(o -> stub.fork(request, o));
  }

  private static <R> CompletableFuture<R> unary(Consumer<StreamObserver<R>> start) {
    CompletableFuture<R> f = new CompletableFuture<>();
    start.accept(new StreamObserver<R>() {
      @Override public void onNext(R value) { f.complete(value); }
      @Override public void onError(Throwable t) { f.completeExceptionally(Errors.translate(t)); }
      @Override public void onCompleted() {}
    });
    return f;
  }

  /** One run: its attempts (streams), the events delivered and the tools' outcomes. */
  private final class AsyncRun<T> {
    final CompletableFuture<RunResult> future = new CompletableFuture<>();
    private final String requestId;
    private final Tools handlers;
    private final Consumer<Event> onEvent;
    private final boolean emptyMeansFinished;
    private final Function<T, Event> eventOf;
    private final BiConsumer<String, StreamObserver<T>> call;
    private final List<Event> events = Collections.synchronizedList(new ArrayList<>());
    private final List<CompletableFuture<Void>> submissions = Collections.synchronizedList(new ArrayList<>());
    private final Map<String, CompletableFuture<SubmitToolResultRequest>> outcomes = new ConcurrentHashMap<>();
    private volatile String sessionId;
    private int attempts;
    private int fruitless; // attempts in a row without progress (a new model.turn or tool.result)
    private final RetryPolicy.Refusals refusals = new RetryPolicy.Refusals(); // attempts the admission refused
    private long seen; // the highest seq delivered: a retry skips what came before

    AsyncRun(String sessionId, String requestId, Map<String, ToolHandler> tools, Consumer<Event> onEvent,
        boolean emptyMeansFinished, Function<T, Event> eventOf, BiConsumer<String, StreamObserver<T>> call) {
      this.sessionId = sessionId;
      this.requestId = requestId;
      this.handlers = new Tools(tools);
      this.onEvent = onEvent;
      this.emptyMeansFinished = emptyMeansFinished;
      this.eventOf = eventOf;
      this.call = call;
    }

    CompletableFuture<RunResult> start() {
      attempt();
      return future;
    }

    private synchronized void attempt() {
      attempts++;
      fruitless++;
      try {
        call.accept(sessionId, new Attempt());
      } catch (RuntimeException e) {
        future.completeExceptionally(Errors.translate(e));
      }
    }

    /** Whether the event is new (not delivered by an earlier attempt); records it if so. */
    private synchronized boolean fresh(Event event) {
      if (event.getSeq() > 0 && event.getSeq() <= seen) return false;
      seen = Math.max(seen, event.getSeq());
      if (RetryPolicy.isProgress(event)) fruitless = 0; // the run got further: the count starts again
      events.add(event);
      if (sessionId.isEmpty()) sessionId = event.getSessionId();
      return true;
    }

    private void answer(Event event) {
      String session = sessionId;
      // The tool runs once; a call asked again (after a retry) gets the same result.
      CompletableFuture<SubmitToolResultRequest> outcome = outcomes.computeIfAbsent(
          event.getToolCall().getCall().getId(),
          id -> CompletableFuture.supplyAsync(() -> handlers.answer(session, event), tools));
      submissions.add(outcome
          .thenCompose(req -> AsyncClient.<SubmitToolResultResponse>unary(o -> stub.submitToolResult(req, o)))
          .handle((response, err) -> {
            if (err == null) return null;
            Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
            if (retry.leavesSubmissionToRetry(cause)) return null;
            throw err instanceof CompletionException ce ? ce : new CompletionException(cause);
          }));
    }

    private void reconcile(Event event) {
      String session = sessionId;
      // The tool ran in this run object: that is the call's result (DONE).
      CompletableFuture<SubmitToolResultRequest> ran = outcomes.get(event.getToolReconcile().getCall().getId());
      CompletableFuture<SubmitToolResultRequest> answer = ran != null
          ? ran.thenApply(r -> handlers.reconcile(session, event, r))
          : CompletableFuture.supplyAsync(() -> handlers.reconcile(session, event, null), tools);
      submissions.add(answer
          .thenCompose(req -> AsyncClient.<SubmitToolResultResponse>unary(o -> stub.submitToolResult(req, o)))
          .handle((response, err) -> {
            if (err == null) return null;
            Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
            if (retry.leavesSubmissionToRetry(cause)) return null;
            throw err instanceof CompletionException ce ? ce : new CompletionException(cause);
          }));
    }

    private void failed(Throwable t, int got) {
      LuoshoException error = Errors.translate(t);
      int row;
      synchronized (this) {
        row = Math.max(1, fruitless);
      }
      Duration wait;
      if (RetryPolicy.refusedByAdmission(error, got)) {
        // Refused before it started: come back when told, not counted in the row.
        wait = retry.overloadWait(error, refusals).orElse(null);
        synchronized (this) {
          fruitless--;
        }
      } else {
        wait = retry.shouldRetry(error, row, got) ? retry.delay(row, error) : null;
      }
      if (wait == null) {
        future.completeExceptionally(error);
        return;
      }
      try {
        // After the backoff, the attempt waits for the channel to be READY (at most the max
        // backoff): in TRANSIENT_FAILURE every call would fail at once (see ChannelReady).
        retries.schedule(() -> ChannelReady.await(channel, retry.maxBackoff())
            .whenComplete((v, e) -> retryNow(error)), wait.toNanos(), TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException closed) {
        future.completeExceptionally(error); // the client was closed
      }
    }

    private void retryNow(LuoshoException error) {
      try {
        retries.execute(this::attempt);
      } catch (RejectedExecutionException closed) {
        future.completeExceptionally(error); // the client was closed
      }
    }

    private void completed() {
      CompletableFuture.allOf(submissions.toArray(CompletableFuture[]::new)).whenComplete((v, err) -> {
        if (err != null) {
          future.completeExceptionally(err instanceof CompletionException ? err.getCause() : err);
          return;
        }
        try {
          int n;
          synchronized (this) {
            n = attempts;
          }
          future.complete(RunResult.of(sessionId, List.copyOf(events), emptyMeansFinished, requestId, n));
        } catch (RuntimeException e) {
          future.completeExceptionally(e);
        }
      });
    }

    /** One attempt's stream. */
    private final class Attempt implements StreamObserver<T> {
      private int got; // responses of this attempt

      @Override
      public void onNext(T response) {
        Event event = eventOf.apply(response);
        got++;
        if (!fresh(event)) return; // delivered by an earlier attempt
        if (onEvent != null) onEvent.accept(event);
        // A replayed call has its result; a daemon tool's call (an MCP tool) is the daemon's.
        if (event.hasToolCall() && !event.getReplayed() && !DaemonTools.isDaemonCall(event)) answer(event);
        // A call handed out before whose fate the daemon asks about (R77).
        if (event.hasToolReconcile() && !event.getReplayed()) reconcile(event);
      }

      @Override
      public void onError(Throwable t) {
        failed(t, got);
      }

      @Override
      public void onCompleted() {
        completed();
      }
    }
  }

  @Override
  public void close() {
    tools.shutdownNow();
    retries.shutdown(); // a retry already scheduled still runs, and fails on the closed channel
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
