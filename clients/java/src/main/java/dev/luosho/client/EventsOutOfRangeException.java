package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;

/** EVENTS_OUT_OF_RANGE: Watch's cursor is older than the kept event log. */
public class EventsOutOfRangeException extends LuoshoException {
  public EventsOutOfRangeException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(code, reason, message, metadata, cause);
  }

  /** Watch again from {@code oldestKeptSeq() - 1} after re-reading the session. */
  public long oldestKeptSeq() {
    try { return Long.parseLong(metadata().getOrDefault("oldest_kept_seq", "0")); }
    catch (NumberFormatException e) { return 0; }
  }
}
