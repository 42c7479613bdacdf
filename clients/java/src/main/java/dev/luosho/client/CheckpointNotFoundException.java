package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;

/** CHECKPOINT_NOT_FOUND: the session (or the step of its history) has no checkpoint. */
public class CheckpointNotFoundException extends LuoshoException {
  public CheckpointNotFoundException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(code, reason, message, metadata, cause);
  }
}
