package dev.luosho.client;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.ErrorInfo;
import dev.luosho.v1.ErrorReason;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.util.Map;

/** The one place gRPC errors become typed {@link LuoshoException}s. */
public final class Errors {
  public static final String DOMAIN = "luosho.dev";

  @FunctionalInterface
  private interface Factory {
    LuoshoException make(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause);
  }

  /** The prefix of every ErrorReason value's name: the ErrorInfo reason is the name without it. */
  public static final String REASON_PREFIX = "ERROR_REASON_";

  // ErrorReason (the ErrorInfo reason, domain luosho.dev) -> exception class.
  private static final Map<ErrorReason, Factory> BY_REASON = Map.ofEntries(
      Map.entry(ErrorReason.ERROR_REASON_SESSION_BUSY, SessionBusyException::new),
      Map.entry(ErrorReason.ERROR_REASON_SESSION_AWAITING_APPROVAL, SessionAwaitingApprovalException::new),
      Map.entry(ErrorReason.ERROR_REASON_CHECKPOINT_NOT_FOUND, CheckpointNotFoundException::new),
      Map.entry(ErrorReason.ERROR_REASON_APPROVAL_NOT_FOUND, ApprovalNotFoundException::new),
      Map.entry(ErrorReason.ERROR_REASON_TOOL_CALL_NOT_FOUND, ToolCallNotFoundException::new),
      Map.entry(ErrorReason.ERROR_REASON_TOOL_CALL_NOT_PENDING, ToolCallNotPendingException::new),
      Map.entry(ErrorReason.ERROR_REASON_SESSION_EXISTS, SessionExistsException::new),
      Map.entry(ErrorReason.ERROR_REASON_EVENTS_OUT_OF_RANGE, EventsOutOfRangeException::new),
      Map.entry(ErrorReason.ERROR_REASON_AGENT_DRIFT, AgentDriftException::new),
      Map.entry(ErrorReason.ERROR_REASON_RESUME_TOOL_MISSING, ResumeToolMissingException::new),
      Map.entry(ErrorReason.ERROR_REASON_LEASE_LOST, LeaseLostException::new),
      Map.entry(ErrorReason.ERROR_REASON_PAYLOAD_TOO_LARGE, PayloadTooLargeException::new),
      Map.entry(ErrorReason.ERROR_REASON_STORE_FULL, StoreFullException::new),
      Map.entry(ErrorReason.ERROR_REASON_PROVIDER_ERROR, ProviderException::new),
      Map.entry(ErrorReason.ERROR_REASON_PROVIDER_REJECTED, ProviderRejectedException::new),
      Map.entry(ErrorReason.ERROR_REASON_SHUTTING_DOWN, ShuttingDownException::new),
      Map.entry(ErrorReason.ERROR_REASON_SESSION_SLEEPING, SessionSleepingException::new),
      Map.entry(ErrorReason.ERROR_REASON_NOT_SLEEPING, NotSleepingException::new),
      Map.entry(ErrorReason.ERROR_REASON_SCHEDULE_EXISTS, ScheduleExistsException::new),
      Map.entry(ErrorReason.ERROR_REASON_SCHEDULE_NOT_FOUND, ScheduleNotFoundException::new));

  /**
   * The proto's ErrorReason of an ErrorInfo reason ("SESSION_BUSY" is ERROR_REASON_SESSION_BUSY);
   * ERROR_REASON_UNSPECIFIED for "" or a reason this client's proto does not know (a newer daemon's).
   */
  public static ErrorReason reasonOf(String reason) {
    if (reason == null || reason.isEmpty()) return ErrorReason.ERROR_REASON_UNSPECIFIED;
    com.google.protobuf.Descriptors.EnumValueDescriptor value =
        ErrorReason.getDescriptor().findValueByName(REASON_PREFIX + reason);
    return value == null ? ErrorReason.ERROR_REASON_UNSPECIFIED : ErrorReason.valueOf(value);
  }

  private Errors() {}

  /** The typed exception for a failed call; anything that is not a gRPC error is wrapped as UNKNOWN. */
  public static LuoshoException translate(Throwable t) {
    if (t instanceof LuoshoException e) return e;
    Status status = Status.fromThrowable(t);
    com.google.rpc.Status rich = (t instanceof StatusRuntimeException || t instanceof StatusException)
        ? StatusProto.fromThrowable(t) : null;
    ErrorInfo info = null;
    if (rich != null) {
      for (Any detail : rich.getDetailsList()) {
        if (detail.is(ErrorInfo.class)) {
          try {
            info = detail.unpack(ErrorInfo.class);
          } catch (InvalidProtocolBufferException ignored) {
            // fall back to the status code
          }
          break;
        }
      }
    }
    String reason = info != null ? info.getReason() : "";
    Map<String, String> metadata = info != null ? info.getMetadataMap() : Map.of();
    String message = rich != null && !rich.getMessage().isEmpty() ? rich.getMessage()
        : status.getDescription() != null ? status.getDescription() : String.valueOf(t.getMessage());
    Factory factory = null;
    if (info != null && DOMAIN.equals(info.getDomain())) factory = BY_REASON.get(reasonOf(reason));
    if (factory == null) {
      factory = switch (status.getCode()) {
        case INVALID_ARGUMENT -> InvalidArgumentException::new;
        case UNAVAILABLE -> UnavailableException::new;
        default -> LuoshoException::new;
      };
    }
    return factory.make(status.getCode(), reason, message, metadata, t);
  }
}
