package dev.luosho.client;

import io.grpc.Metadata;
import io.grpc.Status;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * An RPC failed. {@link #reason()} is the {@code google.rpc.ErrorInfo} reason the daemon sent
 * (domain {@code luosho.dev}; "" when none), and it picks the subclass (see {@link Errors}).
 * The original {@code StatusRuntimeException} is kept as the cause.
 */
public class LuoshoException extends RuntimeException {
  private final Status.Code code;
  private final String reason;
  private final Map<String, String> metadata;
  private static final Metadata.Key<String> PUSHBACK =
      Metadata.Key.of("grpc-retry-pushback-ms", Metadata.ASCII_STRING_MARSHALLER);

  public LuoshoException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super((reason.isEmpty() ? code.name() : reason) + (message.isEmpty() ? "" : ": " + message), cause);
    this.code = code;
    this.reason = reason;
    this.metadata = Map.copyOf(metadata);
  }

  /** The gRPC status code. */
  public Status.Code code() { return code; }

  /** The ErrorInfo reason, e.g. "SESSION_BUSY" ("" when the server sent none). */
  public String reason() { return reason; }

  /** {@link #reason()} as the proto's ErrorReason (ERROR_REASON_UNSPECIFIED when unknown or absent). */
  public dev.luosho.v1.ErrorReason errorReason() { return Errors.reasonOf(reason); }

  /** The ErrorInfo metadata: the message's variables. */
  public Map<String, String> metadata() { return metadata; }

  /**
   * The daemon's {@code retry_after_s} (an UNAVAILABLE or RESOURCE_EXHAUSTED answer may carry
   * it): how long to wait before sending the request again; empty when absent or unreadable.
   * A run's retry waits at least this long (see {@link RetryPolicy#delay}).
   */
  public Optional<Duration> retryAfter() {
    String s = metadata.get("retry_after_s");
    if (s == null || s.isBlank()) return Optional.empty();
    try {
      double seconds = Double.parseDouble(s.trim());
      if (!(seconds >= 0) || Double.isInfinite(seconds)) return Optional.empty();
      return Optional.of(Duration.ofNanos((long) Math.min(Long.MAX_VALUE, Math.ceil(seconds * 1e9))));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }

  /**
   * gRPC's {@code grpc-retry-pushback-ms} trailer of the failed call (from the cause), when the
   * server sent one: the wait it asks for before a retry; negative means do not retry. Empty
   * when absent or not a whole number of milliseconds.
   */
  public Optional<Duration> pushback() {
    Metadata trailers = getCause() == null ? null : Status.trailersFromThrowable(getCause());
    String value = trailers == null ? null : trailers.get(PUSHBACK);
    if (value == null) return Optional.empty();
    try {
      return Optional.of(Duration.ofMillis(Long.parseLong(value.trim())));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }
}
