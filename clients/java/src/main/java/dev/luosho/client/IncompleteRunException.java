package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;

/** Client side: a run's stream ended without its run.done event. */
public class IncompleteRunException extends LuoshoException {
  public IncompleteRunException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(code, reason, message, metadata, cause);
  }
}
