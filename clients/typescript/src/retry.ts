// Retries without duplicates: every Execute, Resume and Resolve carries a request id, the
// same on each attempt, so the daemon applies it once however many times the client has
// to send it.
//
// A run retries, after a backoff, when its stream fails with UNAVAILABLE (the daemon
// restarting or draining, the network gone, a provider failure that may pass; at any point
// of the stream), or with another transport failure before any event of that attempt
// arrived. Every other answer of the daemon is final, PROVIDER_REJECTED (a model call the
// provider refused for good) among them. The wait before a retry is the policy's backoff,
// or the failure's retry_after_s when that is longer. After its backoff a retry waits for
// the channel to be READY (connecting it), at most maxBackoffMs, before it opens the next
// attempt. What the earlier attempts delivered is not delivered again: the retried stream
// resumes the run (the daemon runs what is left) or replays it (events already seen are
// skipped).
//
// The attempts are counted by progress: maxAttempts bounds the attempts in a row that do
// not get the run further, i.e. that deliver no new model.turn or tool.result. A resumed
// run always starts with run.start and step.start, so counting any new event would let a
// model call that fails every time be retried for ever.
import { status as Status, type ChannelOptions } from "@grpc/grpc-js";
import type { Event } from "./gen/luosho/v1/agent.js";
import { LuoshoError, ProviderRejectedError, retryAfterMs } from "./errors.js";

// Failures of the connection itself rather than answers of the daemon (which always carry
// an ErrorInfo reason): before any event they mean the request may not have arrived.
const TRANSPORT = new Set<Status>([Status.UNKNOWN, Status.INTERNAL]);
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The settings of a RetryPolicy; every one may be left out. */
export interface RetryOptions {
  /** Attempts in a row that make no progress (no new model.turn or tool.result; 1: never retry). Default 20. */
  maxAttempts?: number;
  /** The first retry's wait, in milliseconds. Default 100. */
  initialBackoffMs?: number;
  /** The longest wait between two attempts, in milliseconds. Default 2000. */
  maxBackoffMs?: number;
  /** How much each retry in a row waits longer than the one before. Default 2. */
  multiplier?: number;
  /** Each wait is spread by ±jitter (a fraction of it). Default 0.2. */
  jitter?: number;
  /** Attempts in all that the daemon's admission may refuse before the run gives up (1: a refusal is its failure). Default 30. */
  overloadAttempts?: number;
  /** The longest a run keeps coming back after admission refusals, from the first, in ms. Default 300000 (5 minutes). */
  overloadMaxWaitMs?: number;
}

/**
 * The daemon's admission refusing a run before it starts, with a `retry_after_s`: its event
 * loop too busy for one more run, or its count of active runs full.
 */
export const ADMISSION_REASONS: ReadonlySet<string> = new Set(["DAEMON_OVERLOADED", "TOO_MANY_RUNS"]);

/**
 * Whether `error` refused a run before it started (`eventsInAttempt` 0), saying when to
 * come back: RESOURCE_EXHAUSTED from the daemon's admission (DAEMON_OVERLOADED,
 * TOO_MANY_RUNS) or with a `grpc-retry-pushback-ms` trailer.
 */
export function refusedByAdmission(error: unknown, eventsInAttempt: number): boolean {
  if (eventsInAttempt > 0 || !(error instanceof LuoshoError) || error.code !== Status.RESOURCE_EXHAUSTED) return false;
  return ADMISSION_REASONS.has(error.reason) || error.pushbackMs !== undefined;
}

/** A run's attempts refused by the daemon's admission: how many, since when (ms, Date.now()). */
export interface Refusals { count: number; since: number }

/**
 * How a run retries. `maxAttempts` bounds the attempts in a row that make no progress (1:
 * never retry). An attempt makes progress when it delivers, for the first time, a
 * `model.turn` or a `tool.result` event (the lead's or a sub-agent's; see `isProgress`):
 * that starts the count again, so a run that keeps moving keeps going however often its
 * stream breaks, while one whose model call fails every time gives up after `maxAttempts`
 * attempts. Other new events (`run.start`, `step.start`, `tool.call`, `text.delta`, …) are
 * delivered but do not count as progress. The n-th retry in a row waits
 * `initialBackoffMs * multiplier ** (n - 1)` ms, at most `maxBackoffMs`, each spread by
 * `±jitter` so that many clients do not come back at once, or the failure's `retry_after_s`
 * when that is longer (see `waitMs`). The default rides out a daemon that stays away some
 * 30 seconds.
 *
 * An attempt the daemon's admission refused before the run started (see
 * `refusedByAdmission`) is not counted in `maxAttempts`: the run comes back after the wait
 * the daemon named (the `grpc-retry-pushback-ms` trailer's when present, else
 * `retry_after_s`, else the backoff), lengthened by up to `jitter` of it so that a refused
 * burst comes back spread, with the same request id. `overloadAttempts` bounds those
 * attempts in all and `overloadMaxWaitMs` the time from the first refusal: a wait that
 * would end later gives up at once with the refusal. A negative pushback is final.
 */
export class RetryPolicy {
  readonly maxAttempts: number;
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
  readonly multiplier: number;
  readonly jitter: number;
  readonly overloadAttempts: number;
  readonly overloadMaxWaitMs: number;

  constructor(options: RetryOptions = {}) {
    this.maxAttempts = options.maxAttempts ?? 20;
    this.initialBackoffMs = options.initialBackoffMs ?? 100;
    this.maxBackoffMs = options.maxBackoffMs ?? 2000;
    this.multiplier = options.multiplier ?? 2;
    this.jitter = options.jitter ?? 0.2;
    this.overloadAttempts = options.overloadAttempts ?? 30;
    this.overloadMaxWaitMs = options.overloadMaxWaitMs ?? 300_000;
    if (!Number.isInteger(this.overloadAttempts) || this.overloadAttempts < 1 || !(this.overloadMaxWaitMs >= 0)) {
      throw new RangeError("overloadAttempts must be an integer of at least 1 and overloadMaxWaitMs non-negative");
    }
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
   * again, `attempt` being its number in the current row of attempts without progress
   * (from 1). Only UNAVAILABLE answers (and transport failures before the attempt's first
   * event) are; never a ProviderRejectedError.
   */
  shouldRetry(error: unknown, attempt: number, eventsInAttempt: number): boolean {
    if (attempt >= this.maxAttempts || !(error instanceof LuoshoError) || error instanceof ProviderRejectedError) return false;
    if (error.code === Status.UNAVAILABLE) return true;
    return eventsInAttempt === 0 && !error.reason && TRANSPORT.has(error.code);
  }

  /**
   * Milliseconds to wait before trying again a run the daemon's admission refused with
   * `error` (see the class), counting the refusal in `refusals`; undefined when the run
   * gives up: at `overloadAttempts`, past `overloadMaxWaitMs`, or on a negative pushback.
   */
  overloadWaitMs(error: unknown, refusals: Refusals): number | undefined {
    const now = Date.now();
    if (refusals.count === 0) refusals.since = now;
    refusals.count += 1;
    const pushback = error instanceof LuoshoError ? error.pushbackMs : undefined;
    if (refusals.count >= this.overloadAttempts || (pushback !== undefined && pushback < 0)) return undefined;
    let hint = pushback ?? retryAfterMs(error) ?? 0;
    if (hint <= 0) hint = this.backoffMs(refusals.count);
    const wait = Math.min(MAX_TIMER_MS, hint * (1 + Math.random() * this.jitter));
    return now + wait - refusals.since > this.overloadMaxWaitMs ? undefined : wait;
  }

  /** Milliseconds to wait after the `attempt`-th failed attempt in a row (from 1). */
  backoffMs(attempt: number): number {
    const base = Math.min(this.maxBackoffMs, this.initialBackoffMs * this.multiplier ** (attempt - 1));
    return Math.max(0, base * (1 + (Math.random() * 2 - 1) * this.jitter));
  }

  /**
   * Milliseconds to wait before retrying an attempt that failed with `error`, the
   * `attempt`-th failed in a row (from 1): the backoff, or the error's `retry_after_s`
   * (the earliest the daemon will serve it again) when that is longer. At most about 24.8
   * days (setTimeout's limit: a longer wait would fire at once).
   */
  waitMs(error: unknown, attempt: number): number {
    return Math.min(MAX_TIMER_MS, Math.max(this.backoffMs(attempt), retryAfterMs(error) ?? 0));
  }
}

/**
 * Whether a newly delivered event gets the run further: a `model.turn` or a `tool.result`
 * (the lead's or a sub-agent's) that is not `replayed`. Whether it is new (its seq above
 * the highest delivered) is the caller's to say.
 */
export function isProgress(event: Event): boolean {
  return !event.replayed && (event.type === "model.turn" || event.type === "tool.result");
}

/** Never retry: one attempt, and its failure thrown. */
export const NO_RETRY = new RetryPolicy({ maxAttempts: 1, overloadAttempts: 1 });

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
