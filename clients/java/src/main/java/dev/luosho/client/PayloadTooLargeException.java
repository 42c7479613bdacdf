package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;

/** PAYLOAD_TOO_LARGE: a payload is over the daemon's limit. */
public class PayloadTooLargeException extends LuoshoException {
  public PayloadTooLargeException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(code, reason, message, metadata, cause);
  }
}
