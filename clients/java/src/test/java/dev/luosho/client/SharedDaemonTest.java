package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * A test class whose tests share the suite's one daemon through one {@link Client} and one
 * {@link AsyncClient}.
 */
abstract class SharedDaemonTest {
  static Client client;
  static AsyncClient async;

  @BeforeAll
  static void connect() {
    client = new Client(Daemon.shared().address);
    async = new AsyncClient(Daemon.shared().address);
  }

  @AfterAll
  static void disconnect() {
    client.close();
    async.close();
  }

  /** The future's value, waited for at most 60 s. */
  static <T> T await(CompletableFuture<T> future) throws Exception {
    return future.get(60, TimeUnit.SECONDS);
  }

  /** The typed error the future failed with (it must fail within 60 s, with that type). */
  static <E extends LuoshoException> E failure(Class<E> type, CompletableFuture<?> future) {
    ExecutionException failed = assertThrows(ExecutionException.class, () -> future.get(60, TimeUnit.SECONDS));
    if (!type.isInstance(failed.getCause())) {
      throw new AssertionError("expected " + type.getSimpleName() + ", got " + failed.getCause(), failed);
    }
    return type.cast(failed.getCause());
  }
}
