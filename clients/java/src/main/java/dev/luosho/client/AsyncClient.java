package dev.luosho.client;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
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

  public CompletableFuture<RunResult> resolve(String approvalId, boolean approved, String note,
      Map<String, ToolHandler> tools, Consumer<Event> onEvent) {
    return resolve(Requests.resolve(approvalId, approved, note), tools, onEvent);
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
