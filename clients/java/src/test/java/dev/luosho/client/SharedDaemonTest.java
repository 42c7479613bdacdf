package dev.luosho.client;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** A test class whose tests share the suite's one daemon through one {@link Client}. */
abstract class SharedDaemonTest {
  static Client client;

  @BeforeAll
  static void connect() {
    client = new Client(Daemon.shared().address);
  }

  @AfterAll
  static void disconnect() {
    client.close();
  }
}
