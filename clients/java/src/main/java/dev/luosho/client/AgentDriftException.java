package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;

/** AGENT_DRIFT: the resuming agent differs from the saved one and on_agent_drift is ERROR. */
public class AgentDriftException extends LuoshoException {
  public AgentDriftException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(code, reason, message, metadata, cause);
  }
}
