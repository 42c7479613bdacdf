package dev.luosho.client;

import io.grpc.Context;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.function.Consumer;
import java.util.function.Supplier;
import luosho.v1.Agent;

/**
 * One run's event stream on the blocking client: {@code for (Event e : run)} and/or
 * {@code run.result()}. The RPC starts on first use. Each {@code tool.call} is answered (the
 * handler runs, then SubmitToolResult) before the event is handed to the caller.
 * {@link #close()} cancels the stream.
 */
public final class Run implements Iterable<Agent.Event>, Iterator<Agent.Event>, AutoCloseable {
  private final Supplier<Iterator<? extends com.google.protobuf.Message>> start;
  private final java.util.function.Function<Object, Agent.Event> eventOf;
  private final Tools tools;
  private final Consumer<Agent.SubmitToolResultRequest> submit;
  private final boolean emptyMeansFinished;
  private final Context.CancellableContext context = Context.current().withCancellation();
  private final List<Agent.Event> events = Collections.synchronizedList(new ArrayList<>());
  private String sessionId;
  private Iterator<? extends com.google.protobuf.Message> stream;
  private RunResult result;

  Run(String sessionId, Supplier<Iterator<? extends com.google.protobuf.Message>> start,
      java.util.function.Function<Object, Agent.Event> eventOf, Tools tools,
      Consumer<Agent.SubmitToolResultRequest> submit, boolean emptyMeansFinished) {
    this.sessionId = sessionId;
    this.start = start;
    this.eventOf = eventOf;
    this.tools = tools;
    this.submit = submit;
    this.emptyMeansFinished = emptyMeansFinished;
  }

  /** The session id (a Resolve run learns it from its first event). */
  public String sessionId() { return sessionId; }

  /** The events received so far. */
  public List<Agent.Event> events() { return List.copyOf(events); }

  @Override
  public Iterator<Agent.Event> iterator() { return this; }

  @Override
  public boolean hasNext() {
    try {
      if (stream == null) stream = context.call(start::get);
      boolean more = stream.hasNext();
      if (!more && result == null) result = RunResult.of(sessionId, events(), emptyMeansFinished);
      return more;
    } catch (LuoshoException e) {
      throw e;
    } catch (Exception e) {
      throw Errors.translate(e);
    }
  }

  @Override
  public Agent.Event next() {
    if (!hasNext()) throw new NoSuchElementException();
    Agent.Event event;
    try {
      event = eventOf.apply(stream.next());
    } catch (RuntimeException e) {
      throw Errors.translate(e);
    }
    events.add(event);
    if (sessionId.isEmpty()) sessionId = event.getSessionId();
    if (event.hasToolCall()) submit.accept(tools.answer(sessionId, event));
    return event;
  }

  /** Read the rest of the stream; the run's result. */
  public RunResult result() {
    while (hasNext()) next();
    return result;
  }

  /** Cancel the stream. Idempotent. */
  @Override
  public void close() {
    context.cancel(null);
  }
}
