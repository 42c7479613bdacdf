package dev.luosho.client;

import com.google.protobuf.Message;
import io.grpc.Context;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.function.Consumer;
import java.util.function.Function;
import dev.luosho.v1.*;

/**
 * One run's event stream on the blocking client: {@code for (Event e : run)} and/or
 * {@code run.result()}. The RPC starts on first use. Each {@code tool.call} is answered (the
 * handler runs, then SubmitToolResult) before the event is handed to the caller.
 * {@link #close()} cancels the stream.
 *
 * <p>{@link #requestId()} is the call's idempotency key, the same on every attempt: a stream
 * that fails with {@code UNAVAILABLE} (or a transport failure before its first event) is sent
 * again after a backoff, as the client's {@link RetryPolicy} says, once the channel is READY
 * again (the retry waits for it at most the policy's max backoff), and the daemon applies the
 * request once: the retry resumes the run or replays it. Events already delivered are not
 * delivered again, replayed {@code tool.call}s are not answered, and a call's tool runs once
 * per run object (a call asked again after a retry gets the result already computed).
 * {@link #attempts()} counts the streams opened. The policy's {@code maxAttempts} bounds the
 * attempts in a row without progress (a new {@code model.turn} or {@code tool.result}, see
 * {@link RetryPolicy#isProgress}), and each retry waits at least the failure's
 * {@code retry_after_s}; then the last failure is thrown.
 */
public final class Run implements Iterable<Event>, Iterator<Event>, AutoCloseable {
  /** Opens one attempt's stream, given the session id known so far. */
  private final Function<String, Iterator<? extends Message>> start;
  private final Function<Object, Event> eventOf;
  private final Tools tools;
  private final Consumer<SubmitToolResultRequest> submit;
  private final boolean emptyMeansFinished;
  private final String requestId;
  private final RetryPolicy retry;
  /** Completes once the channel is READY, or after the given limit (see ChannelReady). */
  private final Function<Duration, java.util.concurrent.CompletableFuture<Void>> ready;
  private volatile java.util.concurrent.CompletableFuture<Void> waiting;
  private final Context.CancellableContext context = Context.current().withCancellation();
  private final List<Event> events = Collections.synchronizedList(new ArrayList<>());
  private final Map<String, SubmitToolResultRequest> outcomes = new HashMap<>();
  private volatile boolean closed;
  private final java.util.concurrent.CountDownLatch closing = new java.util.concurrent.CountDownLatch(1);
  private String sessionId;
  private Iterator<? extends Message> stream;
  private Event pending;
  private boolean ended;
  private int attempts;
  private int fruitless; // attempts in a row without progress (a new model.turn or tool.result)
  private final RetryPolicy.Refusals refusals = new RetryPolicy.Refusals(); // attempts the admission refused
  private int got; // responses of the current attempt
  private long seen; // the highest seq delivered: a retry skips what came before
  private RunResult result;

  Run(String sessionId, String requestId, Function<String, Iterator<? extends Message>> start,
      Function<Object, Event> eventOf, Tools tools, Consumer<SubmitToolResultRequest> submit,
      boolean emptyMeansFinished, RetryPolicy retry,
      Function<Duration, java.util.concurrent.CompletableFuture<Void>> ready) {
    this.sessionId = sessionId;
    this.requestId = requestId;
    this.start = start;
    this.eventOf = eventOf;
    this.tools = tools;
    this.submit = submit;
    this.emptyMeansFinished = emptyMeansFinished;
    this.retry = retry;
    this.ready = ready;
  }

  /** The session id (a Resolve run learns it from its first event). */
  public String sessionId() { return sessionId; }

  /** The request id sent on every attempt. */
  public String requestId() { return requestId; }

  /** The streams opened so far (1 unless the run was retried). */
  public int attempts() { return attempts; }

  /** The events received so far. */
  public List<Event> events() { return List.copyOf(events); }

  @Override
  public Iterator<Event> iterator() { return this; }

  @Override
  public boolean hasNext() {
    if (pending != null) return true;
    if (!ended) {
      pending = advance();
      if (pending != null) return true;
      ended = true;
    }
    if (result == null) result = RunResult.of(sessionId, events(), emptyMeansFinished, requestId, attempts);
    return false;
  }

  /** The next event not delivered yet, across attempts; null at the end of the stream. */
  private Event advance() {
    while (true) {
      try {
        if (stream == null) {
          attempts++;
          fruitless++;
          got = 0;
          String known = sessionId;
          stream = context.call(() -> start.apply(known));
        }
        while (stream.hasNext()) {
          Event event = eventOf.apply(stream.next());
          got++;
          if (event.getSeq() > 0 && event.getSeq() <= seen) continue; // delivered by an earlier attempt
          seen = Math.max(seen, event.getSeq());
          if (RetryPolicy.isProgress(event)) fruitless = 0; // the run got further: the count starts again
          return event;
        }
        return null;
      } catch (Exception e) {
        LuoshoException error = Errors.translate(e);
        int row = Math.max(1, fruitless);
        if (closed) throw error;
        Duration wait;
        if (RetryPolicy.refusedByAdmission(error, got)) {
          // Refused before it started: come back when told, not counted in the row.
          wait = retry.overloadWait(error, refusals).orElseThrow(() -> error);
          fruitless--;
        } else if (retry.shouldRetry(error, row, got)) {
          wait = retry.delay(row, error);
        } else {
          throw error;
        }
        stream = null;
        pause(wait, error);
        awaitReady(error);
      }
    }
  }

  private void pause(Duration backoff, LuoshoException error) {
    try {
      closing.await(backoff.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS); // close() ends the wait
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw error;
    }
    if (closed) throw error;
  }

  /**
   * A channel in TRANSIENT_FAILURE fails every call at once until its reconnect backoff ends:
   * the next attempt waits for it to be READY (at most the policy's max backoff), so that it
   * is not burnt while the daemon is already back. close() ends the wait.
   */
  private void awaitReady(LuoshoException error) {
    java.util.concurrent.CompletableFuture<Void> wait = ready.apply(retry.maxBackoff());
    waiting = wait;
    if (closed) wait.complete(null);
    try {
      wait.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw error;
    } catch (java.util.concurrent.ExecutionException e) {
      // never: the wait completes normally
    } finally {
      waiting = null;
    }
    if (closed) throw error;
  }

  @Override
  public Event next() {
    if (!hasNext()) throw new NoSuchElementException();
    Event event = pending;
    pending = null;
    events.add(event);
    if (sessionId.isEmpty()) sessionId = event.getSessionId();
    // A replayed call has its result; a daemon tool's call (an MCP tool) is the daemon's to run.
    if (event.hasToolCall() && !event.getReplayed() && !DaemonTools.isDaemonCall(event)) answer(event);
    // A call handed out before whose fate the daemon asks about (R77).
    if (event.hasToolReconcile() && !event.getReplayed()) reconcile(event);
    return event;
  }

  private void reconcile(Event event) {
    SubmitToolResultRequest ran = outcomes.get(event.getToolReconcile().getCall().getId());
    SubmitToolResultRequest answer = tools.reconcile(sessionId, event, ran);
    try {
      submit.accept(answer);
    } catch (LuoshoException e) {
      if (!retry.leavesSubmissionToRetry(e)) throw e;
    }
  }

  private void answer(Event event) {
    // The tool runs once; a call asked again (after a retry) gets the same result.
    SubmitToolResultRequest outcome =
        outcomes.computeIfAbsent(event.getToolCall().getCall().getId(), id -> tools.answer(sessionId, event));
    try {
      submit.accept(outcome);
    } catch (LuoshoException e) {
      if (!retry.leavesSubmissionToRetry(e)) throw e;
    }
  }

  /** Read the rest of the stream; the run's result. */
  public RunResult result() {
    while (hasNext()) next();
    return result;
  }

  /** Cancel the stream (and any retry still to come). Idempotent. */
  @Override
  public void close() {
    closed = true;
    closing.countDown();
    java.util.concurrent.CompletableFuture<Void> wait = waiting;
    if (wait != null) wait.complete(null);
    context.cancel(null);
  }
}
