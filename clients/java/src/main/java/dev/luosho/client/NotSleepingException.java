package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;

/** NOT_SLEEPING: a resume with wake of a session that is not sleeping (R86). */
public class NotSleepingException extends LuoshoException {
  public NotSleepingException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(code, reason, message, metadata, cause);
  }
}
