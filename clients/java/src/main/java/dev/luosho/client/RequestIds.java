package dev.luosho.client;

import java.security.SecureRandom;
import java.util.UUID;

/** Request ids: the idempotency keys of Execute, Resume and Resolve (docs/reference/rules.md R74–R75). */
public final class RequestIds {
  private static final SecureRandom RANDOM = new SecureRandom();

  private RequestIds() {}

  /**
   * A new UUIDv7 (RFC 9562): time-ordered, so the ids of a session sort by when they were made
   * (a 48-bit Unix millisecond timestamp first), and with 74 random bits, so two clients never
   * pick the same one.
   */
  public static String newRequestId() {
    return uuid7(System.currentTimeMillis(), RANDOM).toString();
  }

  static UUID uuid7(long unixMillis, java.util.Random random) {
    long randA = random.nextInt(1 << 12); // 12 bits
    long randB = random.nextLong() & 0x3FFF_FFFF_FFFF_FFFFL; // 62 bits
    long high = (unixMillis & 0xFFFF_FFFF_FFFFL) << 16 | 0x7L << 12 | randA;
    long low = 0b10L << 62 | randB;
    return new UUID(high, low);
  }
}
