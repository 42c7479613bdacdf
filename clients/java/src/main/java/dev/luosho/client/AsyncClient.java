package dev.luosho.client;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import luosho.v1.Agent;
import luosho.v1.AgentServiceGrpc;

/**
 * The asynchronous client: runs complete {@link CompletableFuture}s and report each event to
 * an optional listener; tool handlers run on the client's executor (calls handed out together
 * run concurrently). A failed future holds a typed {@link LuoshoException}.
 */
public final class AsyncClient implements AutoCloseable {
  private final ManagedChannel channel;
  private final boolean ownsChannel;
  private final AgentServiceGrpc.AgentServiceStub stub;
  private final ExecutorService tools;

  public AsyncClient(String target) {
    this(ManagedChannelBuilder.forTarget(target).usePlaintext().build(), true);
  }

  /** A client on the caller's channel (not closed by {@link #close()}). */
  public AsyncClient(ManagedChannel channel) {
    this(channel, false);
  }

  private AsyncClient(ManagedChannel channel, boolean ownsChannel) {
    this.channel = channel;
    this.ownsChannel = ownsChannel;
    this.stub = AgentServiceGrpc.newStub(channel);
    this.tools = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "luosho-tool");
      t.setDaemon(true);
      return t;
    });
  }

  public CompletableFuture<RunResult> execute(String sessionId, String input, Agent.AgentSpec agent,
      Map<String, ToolHandler> tools, Consumer<Agent.Event> onEvent) {
    return execute(Requests.execute(sessionId, agent, input), tools, onEvent);
  }

  public CompletableFuture<RunResult> execute(Agent.ExecuteRequest request, Map<String, ToolHandler> tools,
      Consumer<Agent.Event> onEvent) {
    RunObserver<Agent.ExecuteResponse> o = new RunObserver<>(request.getSessionId(), tools, onEvent, false,
        Agent.ExecuteResponse::getEvent);
    stub.execute(request, o);
    return o.future;
  }

  public CompletableFuture<RunResult> resume(String sessionId, Map<String, ToolHandler> tools,
      Consumer<Agent.Event> onEvent) {
    RunObserver<Agent.ResumeResponse> o = new RunObserver<>(sessionId, tools, onEvent, true,
        Agent.ResumeResponse::getEvent);
    stub.resume(Requests.resume(sessionId, null), o);
    return o.future;
  }

  public CompletableFuture<RunResult> resolve(String approvalId, boolean approved, String note,
      Map<String, ToolHandler> tools, Consumer<Agent.Event> onEvent) {
    RunObserver<Agent.ResolveResponse> o = new RunObserver<>("", tools, onEvent, false,
        Agent.ResolveResponse::getEvent);
    stub.resolve(Requests.resolve(approvalId, approved, note), o);
    return o.future;
  }

  public CompletableFuture<Agent.Checkpoint> getSession(String sessionId) {
    return AsyncClient.<Agent.GetSessionResponse>unary(o -> stub.getSession(Agent.GetSessionRequest.newBuilder().setSessionId(sessionId).build(), o))
        .thenApply(Agent.GetSessionResponse::getCheckpoint);
  }

  public CompletableFuture<Boolean> cancel(String sessionId) {
    return AsyncClient.<Agent.CancelResponse>unary(o -> stub.cancel(Agent.CancelRequest.newBuilder().setSessionId(sessionId).build(), o))
        .thenApply(Agent.CancelResponse::getCancelled);
  }

  public CompletableFuture<Agent.HistoryResponse> history(Agent.HistoryRequest request) {
    return unary(o -> stub.history(request, o));
  }

  public CompletableFuture<Agent.ForkResponse> fork(Agent.ForkRequest request) {
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

  private final class RunObserver<T> implements StreamObserver<T> {
    final CompletableFuture<RunResult> future = new CompletableFuture<>();
    private final Tools handlers;
    private final Consumer<Agent.Event> onEvent;
    private final boolean emptyMeansFinished;
    private final java.util.function.Function<T, Agent.Event> eventOf;
    private final List<Agent.Event> events = Collections.synchronizedList(new ArrayList<>());
    private final List<CompletableFuture<Void>> submissions = Collections.synchronizedList(new ArrayList<>());
    private volatile String sessionId;

    RunObserver(String sessionId, Map<String, ToolHandler> tools, Consumer<Agent.Event> onEvent,
        boolean emptyMeansFinished, java.util.function.Function<T, Agent.Event> eventOf) {
      this.sessionId = sessionId;
      this.handlers = new Tools(tools);
      this.onEvent = onEvent;
      this.emptyMeansFinished = emptyMeansFinished;
      this.eventOf = eventOf;
    }

    @Override
    public void onNext(T response) {
      Agent.Event event = eventOf.apply(response);
      events.add(event);
      if (sessionId.isEmpty()) sessionId = event.getSessionId();
      if (onEvent != null) onEvent.accept(event);
      if (event.hasToolCall()) {
        String session = sessionId;
        submissions.add(CompletableFuture
            .supplyAsync(() -> handlers.answer(session, event), tools)
            .thenCompose(req -> AsyncClient.<Agent.SubmitToolResultResponse>unary(o -> stub.submitToolResult(req, o)))
            .thenApply(r -> null));
      }
    }

    @Override
    public void onError(Throwable t) {
      future.completeExceptionally(Errors.translate(t));
    }

    @Override
    public void onCompleted() {
      CompletableFuture.allOf(submissions.toArray(CompletableFuture[]::new)).whenComplete((v, err) -> {
        if (err != null) {
          future.completeExceptionally(err instanceof java.util.concurrent.CompletionException ? err.getCause() : err);
          return;
        }
        try {
          future.complete(RunResult.of(sessionId, List.copyOf(events), emptyMeansFinished));
        } catch (RuntimeException e) {
          future.completeExceptionally(e);
        }
      });
    }
  }

  @Override
  public void close() {
    tools.shutdownNow();
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
