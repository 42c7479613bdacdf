package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;

/** INVALID_ARGUMENT: the request broke a rule; {@link #reason()} says which. */
public class InvalidArgumentException extends LuoshoException {
  public InvalidArgumentException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(code, reason, message, metadata, cause);
  }
}
