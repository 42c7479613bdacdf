package dev.luosho.client;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.ErrorInfo;
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

  // ErrorInfo reason (domain luosho.dev) -> exception class.
  private static final Map<String, Factory> BY_REASON = Map.ofEntries(
      Map.entry("SESSION_BUSY", SessionBusyException::new),
      Map.entry("SESSION_AWAITING_APPROVAL", SessionAwaitingApprovalException::new),
      Map.entry("CHECKPOINT_NOT_FOUND", CheckpointNotFoundException::new),
      Map.entry("APPROVAL_NOT_FOUND", ApprovalNotFoundException::new),
      Map.entry("TOOL_CALL_NOT_FOUND", ToolCallNotFoundException::new),
      Map.entry("TOOL_CALL_NOT_PENDING", ToolCallNotPendingException::new),
      Map.entry("SESSION_EXISTS", SessionExistsException::new),
      Map.entry("EVENTS_OUT_OF_RANGE", EventsOutOfRangeException::new),
      Map.entry("AGENT_DRIFT", AgentDriftException::new),
      Map.entry("RESUME_TOOL_MISSING", ResumeToolMissingException::new),
      Map.entry("LEASE_LOST", LeaseLostException::new),
      Map.entry("PAYLOAD_TOO_LARGE", PayloadTooLargeException::new),
      Map.entry("STORE_FULL", StoreFullException::new),
      Map.entry("PROVIDER_ERROR", ProviderException::new),
      Map.entry("PROVIDER_REJECTED", ProviderRejectedException::new),
      Map.entry("SHUTTING_DOWN", ShuttingDownException::new));

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
    if (info != null && DOMAIN.equals(info.getDomain())) factory = BY_REASON.get(reason);
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
