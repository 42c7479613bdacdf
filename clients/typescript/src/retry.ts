// Retries without duplicates (SEMANTICS.md R75): every Execute, Resume and Resolve carries a
// request id, the same on each attempt, so the daemon applies it once (R74) however many
// times the client has to send it.
//
// A run retries, after a backoff, when its stream fails with UNAVAILABLE (the daemon
// restarting or draining, the network gone; at any point of the stream), or with another
// transport failure before any event of that attempt arrived. After its backoff a retry waits
// for the channel to be READY (connecting it), at most maxBackoffMs, before it opens the next
// attempt. What the earlier attempts
// delivered is not delivered again: the retried stream resumes the run (the daemon runs what
// is left) or replays it (events already seen are skipped).
import { status as Status, type ChannelOptions } from "@grpc/grpc-js";
import { LuoshoError } from "./errors.js";

// Failures of the connection itself rather than answers of the daemon (which always carry
// an ErrorInfo reason): before any event they mean the request may not have arrived.
const TRANSPORT = new Set<Status>([Status.UNKNOWN, Status.INTERNAL]);

/** The settings of a RetryPolicy; every one may be left out. */
export interface RetryOptions {
  /** Attempts in a row that bring no new event (1: never retry). Default 20. */
  maxAttempts?: number;
  /** The first retry's wait, in milliseconds. Default 100. */
  initialBackoffMs?: number;
  /** The longest wait between two attempts, in milliseconds. Default 2000. */
  maxBackoffMs?: number;
  /** How much each retry in a row waits longer than the one before. Default 2. */
  multiplier?: number;
  /** Each wait is spread by ±jitter (a fraction of it). Default 0.2. */
  jitter?: number;
}

/**
 * How a run retries. `maxAttempts` bounds the attempts in a row that bring no new event (1:
 * never retry); an attempt that brings one starts the count again, so a run that keeps
 * moving keeps going however often its stream breaks. The n-th retry in a row waits
 * `initialBackoffMs * multiplier ** (n - 1)` ms, at most `maxBackoffMs`, each spread by
 * `±jitter` so that many clients do not come back at once. The default rides out a daemon
 * that stays away some 30 seconds.
 */
export class RetryPolicy {
  readonly maxAttempts: number;
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
  readonly multiplier: number;
  readonly jitter: number;

  constructor(options: RetryOptions = {}) {
    this.maxAttempts = options.maxAttempts ?? 20;
    this.initialBackoffMs = options.initialBackoffMs ?? 100;
    this.maxBackoffMs = options.maxBackoffMs ?? 2000;
    this.multiplier = options.multiplier ?? 2;
    this.jitter = options.jitter ?? 0.2;
    if (!Number.isInteger(this.maxAttempts) || this.maxAttempts < 1) {
      throw new RangeError(`maxAttempts must be an integer of at least 1, got ${this.maxAttempts}`);
    }
    if (!(this.initialBackoffMs >= 0) || !(this.maxBackoffMs >= 0) || !(this.multiplier >= 1)) {
      throw new RangeError("backoffs must be non-negative and the multiplier at least 1");
    }
    if (!(this.jitter >= 0 && this.jitter <= 1)) {
      throw new RangeError(`jitter is a fraction between 0 and 1, got ${this.jitter}`);
    }
    Object.freeze(this);
  }

  /**
   * Whether an attempt that failed with `error` after `eventsInAttempt` events is tried
   * again, `attempt` being its number in the current row of attempts without a new event
   * (from 1).
   */
  shouldRetry(error: unknown, attempt: number, eventsInAttempt: number): boolean {
    if (attempt >= this.maxAttempts || !(error instanceof LuoshoError)) return false;
    if (error.code === Status.UNAVAILABLE) return true;
    return eventsInAttempt === 0 && !error.reason && TRANSPORT.has(error.code);
  }

  /** Milliseconds to wait after the `attempt`-th failed attempt in a row (from 1). */
  backoffMs(attempt: number): number {
    const base = Math.min(this.maxBackoffMs, this.initialBackoffMs * this.multiplier ** (attempt - 1));
    return Math.max(0, base * (1 + (Math.random() * 2 - 1) * this.jitter));
  }
}

/** Never retry: one attempt, and its failure thrown. */
export const NO_RETRY = new RetryPolicy({ maxAttempts: 1 });

/**
 * Options of a channel the client makes: grpc-js's own reconnect backoff (1 s growing to
 * 2 minutes by default) would otherwise keep a restarted daemon unreachable for longer than
 * the retries wait, each failing at once without trying to connect.
 */
export function channelOptions(policy: RetryPolicy): ChannelOptions {
  if (policy.maxAttempts === 1) return {};
  const most = Math.max(100, Math.trunc(policy.maxBackoffMs));
  return {
    "grpc.initial_reconnect_backoff_ms": Math.min(100, most),
    "grpc.max_reconnect_backoff_ms": most,
  };
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/**
 * A UUIDv7 (RFC 9562): time-ordered, so the ids of a session sort by when they were made,
 * and random enough that two clients never pick the same one.
 */
export function newRequestId(): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  let ms = Date.now();
  for (let i = 5; i >= 0; i--) {
    bytes[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  bytes[6] = 0x70 | (bytes[6]! & 0x0f); // version 7
  bytes[8] = 0x80 | (bytes[8]! & 0x3f); // variant 0b10
  const h = Array.from(bytes, (b) => HEX[b]).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
