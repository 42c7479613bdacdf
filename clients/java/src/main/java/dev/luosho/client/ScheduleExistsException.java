package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;

/** SCHEDULE_EXISTS: createSchedule with the name of a schedule that exists (R87). */
public class ScheduleExistsException extends LuoshoException {
  public ScheduleExistsException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(code, reason, message, metadata, cause);
  }
}
