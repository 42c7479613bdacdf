package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;

/** SESSION_BUSY: another run holds the session. */
public class SessionBusyException extends LuoshoException {
  public SessionBusyException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(code, reason, message, metadata, cause);
  }
}
