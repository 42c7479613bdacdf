package dev.luosho.client;

import io.grpc.Status;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import dev.luosho.v1.*;

/**
 * How a run (execute, resume, resolve) retries a stream the daemon or the network broke. Every
 * run carries a request id, the same on each attempt, so the daemon applies it once however
 * many times it is sent: the retry resumes the run, or replays it when it had already ended.
 *
 * <p>A stream is tried again when it fails with {@code UNAVAILABLE} (the daemon restarting or
 * draining, the network gone, a model provider failing in a way that may pass) at any point,
 * or with another transport failure ({@code UNKNOWN} or {@code INTERNAL} without an
 * {@code ErrorInfo} reason) before any event of that attempt arrived. Every other answer of
 * the daemon is final: {@code PROVIDER_REJECTED} ({@code FAILED_PRECONDITION}, a model call no
 * retry can fix), {@code RESOURCE_EXHAUSTED}, {@code INVALID_ARGUMENT} and the rest.
 *
 * <p>{@code maxAttempts} bounds the attempts in a row that make no progress (1: never retry).
 * An attempt makes progress when it delivers, for the first time, a {@code model.turn} or a
 * {@code tool.result} (the lead's or a sub-agent's): one with a seq above the highest already
 * delivered and not {@code replayed} (see {@link #isProgress}). Other new events
 * ({@code run.start}, {@code step.start}, {@code tool.call}, {@code text.delta}, ...) are
 * delivered as usual but do not reset the count: every resumed attempt brings a
 * {@code run.start}, and a run whose model call fails the same way each time must end. A run
 * that keeps moving keeps going however often its stream breaks.
 *
 * <p>Before the n-th retry in a row the run waits {@link #delay}: the larger of
 * {@code initialBackoff * multiplier^(n-1)} (at most {@code maxBackoff}, spread by
 * {@code ±jitter}, a fraction, so that many clients do not come back at once) and the
 * {@code retry_after_s} of the failed attempt's {@code ErrorInfo} when it has one. After
 * {@code maxAttempts} attempts in a row without progress the run throws the last attempt's
 * (typed) failure. The {@link #DEFAULT} rides out a daemon that stays away some 30 seconds.
 *
 * <p>An attempt the daemon's admission refused before the run started ({@code RESOURCE_EXHAUSTED}
 * with reason {@code DAEMON_OVERLOADED} or {@code TOO_MANY_RUNS}, or with gRPC's
 * {@code grpc-retry-pushback-ms} trailer; see {@link #refusedByAdmission}) is not counted in
 * {@code maxAttempts}: the run comes back after the wait the daemon named (the trailer's when
 * present, else {@code retry_after_s}, else the backoff), lengthened by up to {@code jitter} of
 * it so that a refused burst comes back spread, with the same request id.
 * {@code overloadAttempts} bounds those attempts in all (1: a refusal is the run's failure) and
 * {@code overloadMaxWait} the time from the first refusal: a wait that would end later gives up
 * at once with the refusal. A negative pushback is final.
 */
public record RetryPolicy(int maxAttempts, Duration initialBackoff, Duration maxBackoff, double multiplier,
    double jitter, int overloadAttempts, Duration overloadMaxWait) {

  /** 20 attempts in a row without progress, 100 ms doubling to 2 s, ±20 %; 30 admission refusals within 5 minutes. */
  public static final RetryPolicy DEFAULT =
      new RetryPolicy(20, Duration.ofMillis(100), Duration.ofSeconds(2), 2.0, 0.2);

  /** Never retry: one attempt, and its failure thrown. */
  public static final RetryPolicy NO_RETRY = DEFAULT.withMaxAttempts(1).withOverload(1, DEFAULT.overloadMaxWait());

  /** A policy with the default overload settings (30 admission refusals within 5 minutes). */
  public RetryPolicy(int maxAttempts, Duration initialBackoff, Duration maxBackoff, double multiplier, double jitter) {
    this(maxAttempts, initialBackoff, maxBackoff, multiplier, jitter, 30, Duration.ofMinutes(5));
  }

  public RetryPolicy {
    if (overloadAttempts < 1 || overloadMaxWait == null || overloadMaxWait.isNegative()) {
      throw new IllegalArgumentException("overloadAttempts must be at least 1 and overloadMaxWait non-negative");
    }
    if (maxAttempts < 1) throw new IllegalArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
    if (initialBackoff == null || maxBackoff == null || initialBackoff.isNegative() || maxBackoff.isNegative()
        || !(multiplier >= 1)) {
      throw new IllegalArgumentException("backoffs must be non-negative and the multiplier at least 1");
    }
    if (!(jitter >= 0 && jitter <= 1)) {
      throw new IllegalArgumentException("jitter is a fraction between 0 and 1, got " + jitter);
    }
  }

  public RetryPolicy withMaxAttempts(int maxAttempts) {
    return new RetryPolicy(maxAttempts, initialBackoff, maxBackoff, multiplier, jitter, overloadAttempts, overloadMaxWait);
  }

  /** The same policy with these backoff bounds. */
  public RetryPolicy withBackoff(Duration initialBackoff, Duration maxBackoff) {
    return new RetryPolicy(maxAttempts, initialBackoff, maxBackoff, multiplier, jitter, overloadAttempts, overloadMaxWait);
  }

  /** The same policy with these bounds on admission refusals ({@code attempts} 1: none retried). */
  public RetryPolicy withOverload(int attempts, Duration maxWait) {
    return new RetryPolicy(maxAttempts, initialBackoff, maxBackoff, multiplier, jitter, attempts, maxWait);
  }

  /** A run's attempts refused by the daemon's admission: how many, and since when. */
  public static final class Refusals {
    private int count;
    private long sinceNanos;

    /** How many attempts were refused so far. */
    public synchronized int count() { return count; }
  }

  /**
   * Whether {@code error} refused a run before it started ({@code eventsInAttempt} 0), saying
   * when to come back: {@code RESOURCE_EXHAUSTED} from the daemon's admission
   * ({@code DAEMON_OVERLOADED}, {@code TOO_MANY_RUNS}) or with a {@code grpc-retry-pushback-ms}
   * trailer.
   */
  public static boolean refusedByAdmission(LuoshoException error, int eventsInAttempt) {
    if (eventsInAttempt > 0 || error.code() != Status.Code.RESOURCE_EXHAUSTED) return false;
    return error.reason().equals("DAEMON_OVERLOADED") || error.reason().equals("TOO_MANY_RUNS")
        || error.pushback().isPresent();
  }

  /**
   * The wait before trying again a run the daemon's admission refused with {@code error} (see
   * the class), counting the refusal in {@code refusals}; empty when the run gives up: at
   * {@code overloadAttempts}, past {@code overloadMaxWait}, or on a negative pushback.
   */
  public Optional<Duration> overloadWait(LuoshoException error, Refusals refusals) {
    long now = System.nanoTime();
    int count;
    long since;
    synchronized (refusals) {
      if (refusals.count == 0) refusals.sinceNanos = now;
      count = ++refusals.count;
      since = refusals.sinceNanos;
    }
    Optional<Duration> pushback = error.pushback();
    if (count >= overloadAttempts || pushback.map(Duration::isNegative).orElse(false)) return Optional.empty();
    Duration hint = pushback.or(error::retryAfter).filter(d -> !d.isZero()).orElseGet(() -> backoff(count));
    double spread = jitter == 0 ? 0 : ThreadLocalRandom.current().nextDouble(0, jitter);
    Duration wait = Duration.ofNanos((long) Math.min(Long.MAX_VALUE / 2, hint.toNanos() * (1 + spread)));
    if (now + wait.toNanos() - since > overloadMaxWait.toNanos()) return Optional.empty();
    return Optional.of(wait);
  }

  /** Whether this policy ever retries. */
  public boolean retries() {
    return maxAttempts > 1;
  }

  /**
   * Whether an attempt that failed with {@code error} after {@code eventsInAttempt} events is
   * tried again, {@code attempt} being its number in the current row of attempts without
   * progress (from 1).
   */
  public boolean shouldRetry(LuoshoException error, int attempt, int eventsInAttempt) {
    if (attempt >= maxAttempts) return false;
    if (error.code() == Status.Code.UNAVAILABLE || connectionClosed(error)) return true;
    // A failure of the connection itself rather than an answer of the daemon (which always
    // carries a reason): before any event it means the request may not have arrived.
    return eventsInAttempt == 0 && error.reason().isEmpty()
        && (error.code() == Status.Code.UNKNOWN || error.code() == Status.Code.INTERNAL);
  }

  /**
   * Whether a tool result's submission that failed with {@code error} is left to the stream's
   * retry: the daemon went away with the run (the stream fails too, and its retry asks for the
   * call again) or already has the result. Without retries it is the run's failure.
   */
  public boolean leavesSubmissionToRetry(Throwable error) {
    if (!retries()) return false;
    if (error instanceof UnavailableException || error instanceof ToolCallNotPendingException) return true;
    return error instanceof LuoshoException e && connectionClosed(e);
  }

  /**
   * grpc-java's Netty transport fails every stream of a connection that closes under it with
   * {@code UNKNOWN: channel closed} (a {@link ClosedChannelException} cause), not UNAVAILABLE:
   * the daemon went away mid-stream, which a retry resumes like any UNAVAILABLE.
   */
  private static boolean connectionClosed(LuoshoException error) {
    if (error.code() != Status.Code.UNKNOWN || !error.reason().isEmpty()) return false;
    for (Throwable c = error.getCause(); c != null; c = c.getCause()) {
      if (c instanceof ClosedChannelException) return true;
    }
    return false;
  }

  /**
   * Whether a new event (its seq above every seq delivered before) is progress: a
   * {@code model.turn} or a {@code tool.result}, of the lead or of a sub-agent, that is not
   * {@code replayed} from the log of a finished run. Such an event starts the count of
   * attempts in a row again.
   */
  public static boolean isProgress(Event event) {
    if (event.getReplayed()) return false;
    String type = event.getType();
    return type.equals("model.turn") || type.equals("tool.result")
        || (type.isEmpty() && (event.hasModelTurn() || event.hasToolResult()));
  }

  /**
   * How long to wait before the next attempt after the {@code attempt}-th failed attempt in a
   * row (from 1), which failed with {@code error}: {@link #backoff}, or the error's
   * {@code retry_after_s} when that is longer (the daemon will not call the model for that
   * session before then).
   */
  public Duration delay(int attempt, LuoshoException error) {
    Duration backoff = backoff(attempt);
    Duration after = error == null ? null
        : error.pushback().filter(d -> !d.isNegative()).or(error::retryAfter).orElse(null);
    return after != null && after.compareTo(backoff) > 0 ? after : backoff;
  }

  /** How long to wait after the {@code attempt}-th failed attempt in a row (from 1), jitter included. */
  public Duration backoff(int attempt) {
    double base = Math.min(maxBackoff.toNanos(),
        initialBackoff.toNanos() * Math.pow(multiplier, Math.max(0, attempt - 1)));
    double spread = jitter == 0 ? 0 : ThreadLocalRandom.current().nextDouble(-jitter, jitter);
    return Duration.ofNanos((long) Math.max(0, base * (1 + spread)));
  }
}
