package dev.luosho.client;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * What a retry waits for before its next attempt (docs/reference/rules.md R75): the channel READY. While
 * grpc-java's channel is in {@code TRANSIENT_FAILURE} every call on it fails at once with
 * {@code UNAVAILABLE}, however soon the daemon is back, so an attempt opened then would be
 * lost. A deadline on the stream would bound the whole run, so the wait is on the channel.
 */
final class ChannelReady {
  private ChannelReady() {}

  /** The first reconnection in TRANSIENT_FAILURE, as the Go and TypeScript clients' channels. */
  private static final long FIRST_RETRY_MS = 100;
  /** The longest pause between two reconnections while waiting. */
  private static final long MOST_RETRY_MS = 1000;

  /** The waits' timers, on a thread of their own (not the JVM's common pool). */
  private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "luosho-channel-ready");
    t.setDaemon(true);
    return t;
  });

  /**
   * Resets the channel's reconnect backoff, connects it, and completes once it is READY (or
   * shut down), or after {@code limit}, whichever is first; never exceptionally. Then the
   * attempt is opened anyway, and fails or not as the channel is.
   */
  static CompletableFuture<Void> await(ManagedChannel channel, Duration limit) {
    CompletableFuture<Void> ready = new CompletableFuture<>();
    ScheduledFuture<?> timeout = TIMER.schedule(() -> ready.complete(null), limit.toNanos(), TimeUnit.NANOSECONDS);
    ready.whenComplete((v, e) -> timeout.cancel(false));
    try {
      channel.resetConnectBackoff(); // try now, not when grpc-java's own backoff ends
      watch(channel, ready, FIRST_RETRY_MS);
    } catch (RuntimeException e) {
      ready.complete(null); // a channel that cannot tell its state (UnsupportedOperationException): no wait
    }
    return ready;
  }

  /**
   * Follows the channel's state until READY. In TRANSIENT_FAILURE the next connection attempt
   * is made after {@code retryMs} (growing 1.6 times up to a second) by resetting the backoff
   * again: grpc-java's own would wait 1 s growing to 2 minutes, and a daemon back for a short
   * while would be missed.
   */
  private static void watch(ManagedChannel channel, CompletableFuture<Void> ready, long retryMs) {
    if (ready.isDone()) return;
    ConnectivityState state = channel.getState(true); // true: IDLE starts connecting
    if (state == ConnectivityState.READY || state == ConnectivityState.SHUTDOWN) {
      ready.complete(null);
      return;
    }
    long next = retryMs;
    if (state == ConnectivityState.TRANSIENT_FAILURE) {
      TIMER.schedule(() -> {
        if (!ready.isDone()) channel.resetConnectBackoff();
      }, retryMs, TimeUnit.MILLISECONDS);
      next = Math.min(MOST_RETRY_MS, (long) (retryMs * 1.6));
    }
    long after = next;
    channel.notifyWhenStateChanged(state, () -> {
      try {
        watch(channel, ready, after);
      } catch (RuntimeException e) {
        ready.complete(null);
      }
    });
  }
}
