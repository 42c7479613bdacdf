package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;

/** APPROVAL_NOT_FOUND: the approval is unknown, already decided, or being decided. */
public class ApprovalNotFoundException extends LuoshoException {
  public ApprovalNotFoundException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(code, reason, message, metadata, cause);
  }

  /** The approval in question. */
  public String approvalId() { return metadata().getOrDefault("approval_id", ""); }
}
