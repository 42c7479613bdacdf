package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import com.google.protobuf.Any;
import com.google.rpc.Code;
import com.google.rpc.ErrorInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** ErrorInfo.reason picks the exception class; unknown reasons fall back on the status code. */
class ErrorsTest {
  private static StatusRuntimeException error(Code code, String domain, String reason, Map<String, String> md) {
    ErrorInfo info = ErrorInfo.newBuilder().setDomain(domain).setReason(reason).putAllMetadata(md).build();
    return StatusProto.toStatusRuntimeException(com.google.rpc.Status.newBuilder()
        .setCode(code.getNumber()).setMessage("the message").addDetails(Any.pack(info)).build());
  }

  @Test
  void everyReasonHasItsClass() {
    Map<String, Class<?>> table = Map.ofEntries(
        Map.entry("SESSION_BUSY", SessionBusyException.class),
        Map.entry("SESSION_AWAITING_APPROVAL", SessionAwaitingApprovalException.class),
        Map.entry("CHECKPOINT_NOT_FOUND", CheckpointNotFoundException.class),
        Map.entry("APPROVAL_NOT_FOUND", ApprovalNotFoundException.class),
        Map.entry("TOOL_CALL_NOT_FOUND", ToolCallNotFoundException.class),
        Map.entry("TOOL_CALL_NOT_PENDING", ToolCallNotPendingException.class),
        Map.entry("SESSION_EXISTS", SessionExistsException.class),
        Map.entry("EVENTS_OUT_OF_RANGE", EventsOutOfRangeException.class),
        Map.entry("AGENT_DRIFT", AgentDriftException.class),
        Map.entry("RESUME_TOOL_MISSING", ResumeToolMissingException.class),
        Map.entry("LEASE_LOST", LeaseLostException.class),
        Map.entry("PAYLOAD_TOO_LARGE", PayloadTooLargeException.class),
        Map.entry("STORE_FULL", StoreFullException.class),
        Map.entry("PROVIDER_ERROR", ProviderException.class),
        Map.entry("PROVIDER_REJECTED", ProviderRejectedException.class),
        Map.entry("SHUTTING_DOWN", ShuttingDownException.class));
    table.forEach((reason, cls) -> {
      LuoshoException e = Errors.translate(error(Code.ABORTED, Errors.DOMAIN, reason, Map.of("approval_id", "a1")));
      assertSame(cls, e.getClass(), reason);
      assertEquals(reason, e.reason());
      assertEquals("a1", e.metadata().get("approval_id"));
      assertEquals(Status.Code.ABORTED, e.code());
      assertEquals(reason + ": the message", e.getMessage());
    });
  }

  @Test
  void fallbacks() {
    LuoshoException invalid = Errors.translate(error(Code.INVALID_ARGUMENT, Errors.DOMAIN, "INVALID_SESSION_ID", Map.of()));
    assertSame(InvalidArgumentException.class, invalid.getClass());
    assertEquals("INVALID_SESSION_ID", invalid.reason());
    // A reason from another domain does not pick a class.
    assertSame(LuoshoException.class,
        Errors.translate(error(Code.ABORTED, "example.com", "SESSION_BUSY", Map.of())).getClass());
    LuoshoException down = Errors.translate(Status.UNAVAILABLE.withDescription("no route").asRuntimeException());
    assertSame(UnavailableException.class, down.getClass());
    assertEquals("", down.reason());
    assertEquals(120L, ((EventsOutOfRangeException) Errors.translate(error(Code.OUT_OF_RANGE, Errors.DOMAIN,
        "EVENTS_OUT_OF_RANGE", Map.of("oldest_kept_seq", "120")))).oldestKeptSeq());
  }

  @Test
  void reasonsMapThroughTheEnum() {
    for (dev.luosho.v1.ErrorReason r : dev.luosho.v1.ErrorReason.values()) {
      if (r == dev.luosho.v1.ErrorReason.UNRECOGNIZED || r == dev.luosho.v1.ErrorReason.ERROR_REASON_UNSPECIFIED) continue;
      assertEquals(r, Errors.reasonOf(r.name().substring(Errors.REASON_PREFIX.length())));
    }
    assertEquals(dev.luosho.v1.ErrorReason.ERROR_REASON_UNSPECIFIED, Errors.reasonOf("A_NEWER_DAEMONS_REASON"));
    assertEquals(dev.luosho.v1.ErrorReason.ERROR_REASON_UNSPECIFIED, Errors.reasonOf(""));
    LuoshoException busy = Errors.translate(error(Code.ABORTED, Errors.DOMAIN, "SESSION_BUSY", Map.of()));
    assertEquals(dev.luosho.v1.ErrorReason.ERROR_REASON_SESSION_BUSY, busy.errorReason());
    LuoshoException newer = Errors.translate(error(Code.ABORTED, Errors.DOMAIN, "A_NEWER_DAEMONS_REASON", Map.of()));
    assertSame(LuoshoException.class, newer.getClass());
  }
}
