package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;

/** SESSION_AWAITING_APPROVAL: the session is paused on an approval; resolve it first. */
public class SessionAwaitingApprovalException extends LuoshoException {
  public SessionAwaitingApprovalException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(code, reason, message, metadata, cause);
  }

  /** The approval in question. */
  public String approvalId() { return metadata().getOrDefault("approval_id", ""); }
}
