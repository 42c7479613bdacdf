// The error classes of @luosho/client, and the one place gRPC errors are translated.
//
// Every error the daemon sends is a google.rpc.Status with one ErrorInfo (domain
// "luosho.dev"); its reason picks the class, its metadata travels along. Any other status
// is a plain LuoshoError (INVALID_ARGUMENT: InvalidArgumentError; UNAVAILABLE:
// UnavailableError). The original grpc-js error is kept as `cause`.
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { status as Status, type Metadata, type ServiceError } from "@grpc/grpc-js";
import { ErrorReason, errorReasonFromJSON } from "./gen/luosho/v1/agent.js";

export const ERROR_DOMAIN = "luosho.dev";
const STATUS_DETAILS_KEY = "grpc-status-details-bin";
const ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo";

/** An RPC failed. `reason` is the ErrorInfo reason ("" when the server sent none). */
export class LuoshoError extends Error {
  readonly code: Status;
  readonly reason: string;
  readonly metadata: Readonly<Record<string, string>>;
  /** gRPC's `grpc-retry-pushback-ms` trailer, when the server sent one (negative: do not retry). */
  readonly pushbackMs: number | undefined;

  constructor(code: Status, reason: string, message: string, metadata: Record<string, string> = {}, options?: { cause?: unknown; pushbackMs?: number }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.reason = reason;
    this.metadata = { ...metadata };
    this.pushbackMs = options?.pushbackMs;
  }

  /** `reason` as the proto's ErrorReason (ERROR_REASON_UNSPECIFIED when unknown or absent). */
  get errorReason(): ErrorReason {
    return errorReasonOf(this.reason);
  }

  override toString(): string {
    const label = this.reason || Status[this.code] || String(this.code);
    return this.message ? `${this.name}: ${label}: ${this.message}` : `${this.name}: ${label}`;
  }
}

/** The request was refused as invalid; `reason` says which rule it broke. */
export class InvalidArgumentError extends LuoshoError {}
/** The session (or the requested step of its history) has no checkpoint. */
export class CheckpointNotFoundError extends LuoshoError {}
/** The approval is unknown, was already decided, or is being decided right now. */
export class ApprovalNotFoundError extends LuoshoError {
  get approvalId(): string { return this.metadata.approval_id ?? ""; }
}
/** SubmitToolResult named a tool call that the session does not have. */
export class ToolCallNotFoundError extends LuoshoError {}
/** Fork's newSessionId already has a checkpoint. */
export class SessionExistsError extends LuoshoError {}
/** Watch's cursor is older than the session's kept event log. */
export class EventsOutOfRangeError extends LuoshoError {
  get oldestKeptSeq(): number { return Number(this.metadata.oldest_kept_seq ?? 0) || 0; }
}
/** The tool call has no result and no run is waiting for one: resume the session. */
export class ToolCallNotPendingError extends LuoshoError {}
/** The session is paused on an approval; resolve it before executing again. */
export class SessionAwaitingApprovalError extends LuoshoError {
  get approvalId(): string { return this.metadata.approval_id ?? ""; }
}
/** The resuming agent differs from the saved one and onAgentDrift is "error". */
export class AgentDriftError extends LuoshoError {}
/** A pending tool call names a tool the resuming agent no longer declares. */
export class ResumeToolMissingError extends LuoshoError {}
/** Another run holds the session. */
export class SessionBusyError extends LuoshoError {}
/** The daemon lost the session's lease (another writer took over). */
export class LeaseLostError extends LuoshoError {}
/** A payload is over the daemon's configured limit. */
export class PayloadTooLargeError extends LuoshoError {}
/** The daemon's store refused the write: it is full. */
export class StoreFullError extends LuoshoError {}
/**
 * The model provider failed. The ErrorInfo metadata names the provider entry and model,
 * the HTTP status (when there was one), the provider's error type and message (keys
 * redacted). As such (reason PROVIDER_ERROR, UNAVAILABLE) the failure is transient and a
 * run retries it, after at least `retryAfterMs` when the daemon says when it will call
 * that model again.
 */
export class ProviderError extends LuoshoError {
  /** The provider entry of the daemon's configuration, e.g. "llm". */
  get provider(): string { return this.metadata.provider ?? ""; }
  /** The model, e.g. "test-model". */
  get model(): string { return this.metadata.model ?? ""; }
  /** The HTTP status the provider answered, e.g. "400"; "" when there was no HTTP answer. */
  get httpStatus(): string { return this.metadata.status ?? ""; }
  /** The provider's error type, e.g. "invalid_request_error", "session_backoff", "circuit_open". */
  get errorType(): string { return this.metadata.error_type ?? ""; }
  /** The provider's error message (keys redacted, at most 500 characters). */
  get providerMessage(): string { return this.metadata.provider_message ?? ""; }
  /** Whether a retry may succeed (metadata transient; false for a ProviderRejectedError). */
  get transient(): boolean { return this.metadata.transient !== "false"; }
  /** The earliest the daemon calls that model again, in ms (metadata retry_after_s); undefined when not said. */
  get retryAfterMs(): number | undefined { return retryAfterMs(this); }
}
/**
 * The provider refused the model call for good (HTTP 400, 401, 403, 404, 422, a refused
 * setting, a context too long, a malformed answer): reason PROVIDER_REJECTED,
 * FAILED_PRECONDITION. No retry can fix it, so none is made; `httpStatus`,
 * `providerMessage`, `errorType` say why.
 */
export class ProviderRejectedError extends ProviderError {}
/** The daemon is unreachable or unavailable; retrying later may succeed. */
export class UnavailableError extends LuoshoError {}
/** The daemon is draining for shutdown. */
export class ShuttingDownError extends UnavailableError {}
/** The session sleeps (R86): resume it with `wake`, or send input with an ifBusy mode. */
export class SessionSleepingError extends LuoshoError {
  /** When it wakes (metadata wake_at, RFC 3339); undefined when not said. */
  get wakeAt(): Date | undefined {
    const text = this.metadata.wake_at;
    const at = text ? new Date(text) : undefined;
    return at && !Number.isNaN(at.getTime()) ? at : undefined;
  }
}
/** Resume with `wake` of a session that is not sleeping (R86). */
export class NotSleepingError extends LuoshoError {}
/** createSchedule with the name of a schedule that exists (R87). */
export class ScheduleExistsError extends LuoshoError {}
/** No schedule has that name (R87). */
export class ScheduleNotFoundError extends LuoshoError {}
/** Client side: a run's stream ended without its run.done event. */
export class IncompleteRunError extends LuoshoError {}

/**
 * The wait an error asks for before a retry, in ms: its ErrorInfo metadata
 * `retry_after_s` (decimal seconds, e.g. "2" or "0.75"); undefined when absent or not a
 * non-negative number.
 */
export function retryAfterMs(error: unknown): number | undefined {
  if (!(error instanceof LuoshoError)) return undefined;
  const text = error.metadata.retry_after_s?.trim();
  if (!text) return undefined;
  const seconds = Number(text);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

type ErrorClass = new (code: Status, reason: string, message: string, metadata?: Record<string, string>, options?: { cause?: unknown; pushbackMs?: number }) => LuoshoError;

/** The prefix of every ErrorReason value's name; the ErrorInfo reason is the name without it
 * (ERROR_REASON_SESSION_BUSY travels as "SESSION_BUSY"). */
export const REASON_PREFIX = "ERROR_REASON_";

/** The proto's ErrorReason of an ErrorInfo reason: ERROR_REASON_UNSPECIFIED for "" or a
 * reason this client's proto does not know (a newer daemon's). */
export function errorReasonOf(reason: string): ErrorReason {
  if (!reason) return ErrorReason.ERROR_REASON_UNSPECIFIED;
  const value = errorReasonFromJSON(REASON_PREFIX + reason);
  return value === ErrorReason.UNRECOGNIZED ? ErrorReason.ERROR_REASON_UNSPECIFIED : value;
}

/** The one mapping table: ErrorReason (the ErrorInfo reason, domain luosho.dev) -> class. */
export const ERROR_BY_REASON: Readonly<Partial<Record<ErrorReason, ErrorClass>>> = {
  [ErrorReason.ERROR_REASON_SESSION_BUSY]: SessionBusyError,
  [ErrorReason.ERROR_REASON_SESSION_AWAITING_APPROVAL]: SessionAwaitingApprovalError,
  [ErrorReason.ERROR_REASON_CHECKPOINT_NOT_FOUND]: CheckpointNotFoundError,
  [ErrorReason.ERROR_REASON_APPROVAL_NOT_FOUND]: ApprovalNotFoundError,
  [ErrorReason.ERROR_REASON_TOOL_CALL_NOT_FOUND]: ToolCallNotFoundError,
  [ErrorReason.ERROR_REASON_TOOL_CALL_NOT_PENDING]: ToolCallNotPendingError,
  [ErrorReason.ERROR_REASON_SESSION_EXISTS]: SessionExistsError,
  [ErrorReason.ERROR_REASON_EVENTS_OUT_OF_RANGE]: EventsOutOfRangeError,
  [ErrorReason.ERROR_REASON_AGENT_DRIFT]: AgentDriftError,
  [ErrorReason.ERROR_REASON_RESUME_TOOL_MISSING]: ResumeToolMissingError,
  [ErrorReason.ERROR_REASON_LEASE_LOST]: LeaseLostError,
  [ErrorReason.ERROR_REASON_PAYLOAD_TOO_LARGE]: PayloadTooLargeError,
  [ErrorReason.ERROR_REASON_STORE_FULL]: StoreFullError,
  [ErrorReason.ERROR_REASON_PROVIDER_ERROR]: ProviderError,
  [ErrorReason.ERROR_REASON_PROVIDER_REJECTED]: ProviderRejectedError,
  [ErrorReason.ERROR_REASON_SHUTTING_DOWN]: ShuttingDownError,
  [ErrorReason.ERROR_REASON_SESSION_SLEEPING]: SessionSleepingError,
  [ErrorReason.ERROR_REASON_NOT_SLEEPING]: NotSleepingError,
  [ErrorReason.ERROR_REASON_SCHEDULE_EXISTS]: ScheduleExistsError,
  [ErrorReason.ERROR_REASON_SCHEDULE_NOT_FOUND]: ScheduleNotFoundError,
};

const ERROR_BY_CODE: Partial<Record<Status, ErrorClass>> = {
  [Status.INVALID_ARGUMENT]: InvalidArgumentError,
  [Status.UNAVAILABLE]: UnavailableError,
};

interface ErrorInfo { reason: string; domain: string; metadata: Record<string, string> }
interface RichStatus { message: string; info?: ErrorInfo }

// google.rpc.Status {int32 code = 1; string message = 2; repeated Any details = 3}
function decodeStatus(bytes: Uint8Array): RichStatus {
  const r = new BinaryReader(bytes);
  const out: RichStatus = { message: "" };
  while (r.pos < r.len) {
    const [field, wire] = r.tag();
    if (field === 2) out.message = r.string();
    else if (field === 3) {
      const any = decodeAny(r.bytes());
      if (any.typeUrl === ERROR_INFO_TYPE && !out.info) out.info = decodeErrorInfo(any.value);
    } else r.skip(wire);
  }
  return out;
}

// google.protobuf.Any {string type_url = 1; bytes value = 2}
function decodeAny(bytes: Uint8Array): { typeUrl: string; value: Uint8Array } {
  const r = new BinaryReader(bytes);
  let typeUrl = "";
  let value: Uint8Array = new Uint8Array();
  while (r.pos < r.len) {
    const [field, wire] = r.tag();
    if (field === 1) typeUrl = r.string();
    else if (field === 2) value = r.bytes();
    else r.skip(wire);
  }
  return { typeUrl, value };
}

// google.rpc.ErrorInfo {string reason = 1; string domain = 2; map<string, string> metadata = 3}
function decodeErrorInfo(bytes: Uint8Array): ErrorInfo {
  const r = new BinaryReader(bytes);
  const info: ErrorInfo = { reason: "", domain: "", metadata: {} };
  while (r.pos < r.len) {
    const [field, wire] = r.tag();
    if (field === 1) info.reason = r.string();
    else if (field === 2) info.domain = r.string();
    else if (field === 3) {
      const e = new BinaryReader(r.bytes());
      let key = "";
      let value = "";
      while (e.pos < e.len) {
        const [f, w] = e.tag();
        if (f === 1) key = e.string();
        else if (f === 2) value = e.string();
        else e.skip(w);
      }
      info.metadata[key] = value;
    } else r.skip(wire);
  }
  return info;
}

function richStatus(metadata: Metadata | undefined): RichStatus | undefined {
  const value = metadata?.get(STATUS_DETAILS_KEY)?.[0];
  if (value === undefined || typeof value === "string") return undefined;
  try {
    return decodeStatus(new Uint8Array(value));
  } catch {
    return undefined;
  }
}

function isServiceError(error: unknown): error is ServiceError {
  return typeof error === "object" && error !== null && "code" in error && typeof (error as { code: unknown }).code === "number";
}

/** The typed error for a failed call (a grpc-js ServiceError); other errors pass through. */
export function fromServiceError(error: unknown): unknown {
  if (error instanceof LuoshoError || !isServiceError(error)) return error;
  const status = richStatus(error.metadata);
  const info = status?.info;
  let cls: ErrorClass | undefined;
  if (info && info.domain === ERROR_DOMAIN) cls = ERROR_BY_REASON[errorReasonOf(info.reason)];
  cls ??= ERROR_BY_CODE[error.code as Status] ?? LuoshoError;
  const message = status?.message || error.details || "";
  return new cls(error.code as Status, info?.reason ?? "", message, info?.metadata ?? {}, { cause: error, pushbackMs: pushbackMs(error.metadata) });
}

/** The `grpc-retry-pushback-ms` trailer in ms; undefined when absent or not an integer. */
function pushbackMs(metadata: Metadata | undefined): number | undefined {
  const value = metadata?.get("grpc-retry-pushback-ms")?.[0];
  if (value === undefined) return undefined;
  const text = (typeof value === "string" ? value : value.toString()).trim();
  return /^-?\d+$/.test(text) ? Number(text) : undefined;
}
