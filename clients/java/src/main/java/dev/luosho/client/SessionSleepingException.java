package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;

/** SESSION_SLEEPING: the session sleeps (R86); wake it with {@code Client.wake}, or send input with an if-busy mode. */
public class SessionSleepingException extends LuoshoException {
  public SessionSleepingException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(code, reason, message, metadata, cause);
  }

  /** When the session wakes (metadata wake_at, RFC 3339); empty when not said. */
  public java.util.Optional<java.time.Instant> wakeAt() {
    String text = metadata().get("wake_at");
    if (text == null || text.isEmpty()) return java.util.Optional.empty();
    try {
      return java.util.Optional.of(java.time.OffsetDateTime.parse(text).toInstant());
    } catch (java.time.format.DateTimeParseException e) {
      return java.util.Optional.empty();
    }
  }
}
