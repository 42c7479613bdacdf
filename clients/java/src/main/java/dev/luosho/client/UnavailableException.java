package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;

/** UNAVAILABLE: the daemon is unreachable or unavailable; retrying later may succeed. */
public class UnavailableException extends LuoshoException {
  public UnavailableException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(code, reason, message, metadata, cause);
  }
}
