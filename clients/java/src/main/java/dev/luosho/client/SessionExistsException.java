package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;

/** SESSION_EXISTS: Fork's new session id already has a checkpoint. */
public class SessionExistsException extends LuoshoException {
  public SessionExistsException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(code, reason, message, metadata, cause);
  }
}
