package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;

/** TOOL_CALL_NOT_PENDING: the call has no result and no run waits for one: resume the session. */
public class ToolCallNotPendingException extends LuoshoException {
  public ToolCallNotPendingException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(code, reason, message, metadata, cause);
  }
}
