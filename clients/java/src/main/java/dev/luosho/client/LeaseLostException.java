package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;

/** LEASE_LOST: the daemon lost the session's lease. */
public class LeaseLostException extends LuoshoException {
  public LeaseLostException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(code, reason, message, metadata, cause);
  }
}
