package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;

/** SCHEDULE_NOT_FOUND: no schedule has that name (R87). */
public class ScheduleNotFoundException extends LuoshoException {
  public ScheduleNotFoundException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(code, reason, message, metadata, cause);
  }
}
