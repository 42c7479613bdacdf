package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;

/** SHUTTING_DOWN: the daemon is draining for shutdown. */
public class ShuttingDownException extends UnavailableException {
  public ShuttingDownException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(code, reason, message, metadata, cause);
  }
}
