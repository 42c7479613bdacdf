package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;
import java.util.Optional;

/**
 * PROVIDER_REJECTED ({@code FAILED_PRECONDITION}): the model provider refused the call in a way
 * no retry can fix (HTTP 400, 401, 403, 404, 422, a refused setting, a context-length error, an
 * answer that could not be read). Never retried, neither by the daemon nor by the client. A
 * {@link ProviderException}, so code that catches provider failures catches it too; the
 * details are in {@link #metadata()}, with accessors for the usual keys.
 */
public class ProviderRejectedException extends ProviderException {
  public ProviderRejectedException(Status.Code code, String reason, String message, Map<String, String> metadata,
      Throwable cause) {
    super(code, reason, message, metadata, cause);
  }

  /** The provider's entry in the daemon's configuration, e.g. "llm". */
  public String provider() { return metadata().getOrDefault("provider", ""); }

  /** The model called, e.g. "test-model". */
  public String model() { return metadata().getOrDefault("model", ""); }

  /** The HTTP status the provider answered (empty when the failure had none, e.g. an unreadable answer). */
  public Optional<Integer> httpStatus() {
    try {
      String s = metadata().get("status");
      return s == null || s.isEmpty() ? Optional.empty() : Optional.of(Integer.parseInt(s.trim()));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }

  /** The provider's error type, e.g. "invalid_request_error" ("" when it gave none). */
  public String errorType() { return metadata().getOrDefault("error_type", ""); }

  /** The provider's error message (keys redacted, at most 500 characters). */
  public String providerMessage() { return metadata().getOrDefault("provider_message", ""); }
}
