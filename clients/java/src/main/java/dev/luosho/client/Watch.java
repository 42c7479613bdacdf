package dev.luosho.client;

import io.grpc.Context;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.function.Supplier;
import dev.luosho.v1.*;

/**
 * One Watch stream: a session's events after a cursor. {@link #lastSeq()} is the cursor to
 * watch again from after the stream broke off. {@link #close()} cancels it.
 */
public final class Watch implements Iterable<Event>, Iterator<Event>, AutoCloseable {
  private final Supplier<Iterator<WatchResponse>> start;
  private final Context.CancellableContext context = Context.current().withCancellation();
  private Iterator<WatchResponse> stream;
  private long lastSeq;
  private volatile boolean closed;

  Watch(long afterSeq, Supplier<Iterator<WatchResponse>> start) {
    this.lastSeq = afterSeq;
    this.start = start;
  }

  public long lastSeq() { return lastSeq; }

  @Override
  public Iterator<Event> iterator() { return this; }

  @Override
  public boolean hasNext() {
    if (closed) return false;
    try {
      if (stream == null) stream = context.call(start::get);
      return stream.hasNext();
    } catch (Exception e) {
      if (closed) return false;
      throw Errors.translate(e);
    }
  }

  @Override
  public Event next() {
    if (!hasNext()) throw new NoSuchElementException();
    Event event = stream.next().getEvent();
    lastSeq = Math.max(lastSeq, event.getSeq());
    return event;
  }

  @Override
  public void close() {
    closed = true;
    context.cancel(null);
  }
}
