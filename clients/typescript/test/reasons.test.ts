// The client maps an ErrorInfo reason through the proto's ErrorReason enum: the wire string
// is the value's name without ERROR_REASON_.
import assert from "node:assert/strict";
import { test } from "node:test";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { ERROR_BY_REASON, LuoshoError, REASON_PREFIX, SessionBusyError, errorReasonOf, pb } from "@luosho/client";

test("every ErrorReason maps back from its wire name", () => {
  const names = Object.keys(pb.ErrorReason).filter((k) => k.startsWith(REASON_PREFIX) && k !== "ERROR_REASON_UNSPECIFIED");
  assert.ok(names.length > 50, `only ${names.length} reasons`);
  for (const name of names) {
    const value = pb.ErrorReason[name as keyof typeof pb.ErrorReason];
    assert.equal(errorReasonOf(name.slice(REASON_PREFIX.length)), value, name);
  }
  assert.equal(errorReasonOf("A_NEWER_DAEMONS_REASON"), pb.ErrorReason.ERROR_REASON_UNSPECIFIED);
  assert.equal(errorReasonOf(""), pb.ErrorReason.ERROR_REASON_UNSPECIFIED);
});

test("the class table is keyed by the enum", () => {
  assert.equal(ERROR_BY_REASON[pb.ErrorReason.ERROR_REASON_SESSION_BUSY], SessionBusyError);
  const busy = new SessionBusyError(GrpcStatus.ABORTED, "SESSION_BUSY", "busy");
  assert.equal(busy.errorReason, pb.ErrorReason.ERROR_REASON_SESSION_BUSY);
  assert.equal(new LuoshoError(GrpcStatus.ABORTED, "A_NEWER_DAEMONS_REASON", "x").errorReason, pb.ErrorReason.ERROR_REASON_UNSPECIFIED);
});
