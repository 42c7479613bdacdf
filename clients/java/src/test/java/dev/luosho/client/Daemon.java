package dev.luosho.client;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** A real `luoshod serve` on 127.0.0.1:0 with a SQLite store, shared by the tests of one JVM. */
final class Daemon {
  private static Daemon shared;

  final Process process;
  final String address;
  final Path dir;

  private Daemon(Process process, String address, Path dir) {
    this.process = process;
    this.address = address;
    this.dir = dir;
  }

  private static final java.util.List<Path> TEMP_DIRS = new java.util.ArrayList<>();
  private static boolean hooked;

  static synchronized Daemon shared() {
    if (shared == null) {
      shared = start();
      cleanUpAtExit();
    }
    return shared;
  }

  /**
   * A new temporary folder for a daemon's store and log, removed when the JVM exits (after the
   * shared daemon stopped), so that the tests leave nothing under /tmp.
   */
  static synchronized Path tempDir(String prefix) throws IOException {
    Path dir = Files.createTempDirectory(prefix);
    TEMP_DIRS.add(dir);
    cleanUpAtExit();
    return dir;
  }

  private static synchronized void cleanUpAtExit() {
    if (hooked) return;
    hooked = true;
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      java.util.List<Path> dirs;
      Daemon daemon;
      synchronized (Daemon.class) {
        daemon = shared;
        dirs = new java.util.ArrayList<>(TEMP_DIRS);
      }
      if (daemon != null) daemon.stop();
      for (Path dir : dirs) {
        try (var walk = Files.walk(dir)) {
          walk.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException ignored) {
          // best effort: a folder already gone or still busy
        }
      }
    }, "luoshod-tests-cleanup"));
  }

  static String python() {
    String python = System.getProperty("luoshod.python", "../../.venv/bin/python");
    File f = new File(python);
    if (!f.canExecute()) {
      throw new IllegalStateException("no python at " + f.getAbsolutePath() + " (set -Dluoshod.python)");
    }
    return f.getAbsolutePath();
  }

  static Daemon start() {
    try {
      return start(tempDir("luoshod-java"), "127.0.0.1:0");
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * A daemon listening on {@code listen} with the SQLite store in {@code dir}: started again on
   * the same address and folder, it serves the same sessions (one lease owner for all of them).
   */
  static Daemon start(Path dir, String listen, String... extra) {
    return start(dir, listen, java.util.Map.of(), extra);
  }

  /** As {@link #start(Path, String, String...)}, with {@code env} added to the daemon's environment. */
  static Daemon start(Path dir, String listen, java.util.Map<String, String> env, String... extra) {
    try {
      java.util.List<String> command = new java.util.ArrayList<>(java.util.List.of(python(), "-m", "luoshod", "serve",
          "--listen", listen, "--store", "sqlite:///" + dir.resolve("db.sqlite"),
          "--lease-owner", "java-tests"));
      command.addAll(java.util.List.of(extra));
      ProcessBuilder pb = new ProcessBuilder(command);
      pb.environment().putAll(env);
      pb.redirectError(ProcessBuilder.Redirect.appendTo(dir.resolve("stderr.log").toFile()));
      Process p = pb.start();
      BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      String line = out.readLine(); // blocks until it listens (or dies)
      String prefix = "luoshod listening on ";
      if (line == null || !line.startsWith(prefix)) {
        p.destroyForcibly();
        throw new IllegalStateException("daemon did not start: " + line + "\n"
            + Files.readString(dir.resolve("stderr.log")));
      }
      Thread drain = new Thread(() -> {
        try {
          while (out.readLine() != null) { /* keep the pipe empty */ }
        } catch (IOException ignored) {
          // the daemon exited
        }
      }, "luoshod-stdout");
      drain.setDaemon(true);
      drain.start();
      return new Daemon(p, line.substring(prefix.length()).trim(), dir);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Kill the daemon with SIGKILL (no drain, no clean shutdown) and wait for it to be gone. */
  void kill9() {
    process.destroyForcibly();
    try {
      process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  void stop() {
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) process.destroyForcibly().waitFor();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
