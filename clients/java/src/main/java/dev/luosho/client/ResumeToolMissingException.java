package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;

/** RESUME_TOOL_MISSING: a pending call names a tool the resuming agent no longer declares. */
public class ResumeToolMissingException extends LuoshoException {
  public ResumeToolMissingException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(code, reason, message, metadata, cause);
  }
}
