package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;

/**
 * PROVIDER_ERROR: the model provider failed in a way that may pass (HTTP 429 or 5xx, a timeout,
 * a dropped connection, or a call the daemon held back while the session's failure backoff or
 * the provider's circuit is open), after the daemon's own retries. It comes as
 * {@code UNAVAILABLE}, so a run retries it, no sooner than {@link #retryAfter()}. The metadata
 * names the {@code provider}, {@code model}, {@code status}, {@code error_type} and
 * {@code provider_message}, with {@code transient} "true". Its subclass
 * {@link ProviderRejectedException} is the failure no retry can fix.
 */
public class ProviderException extends LuoshoException {
  public ProviderException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(code, reason, message, metadata, cause);
  }
}
