package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;

/** TOOL_CALL_NOT_FOUND: SubmitToolResult named a call the session does not have. */
public class ToolCallNotFoundException extends LuoshoException {
  public ToolCallNotFoundException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(code, reason, message, metadata, cause);
  }
}
