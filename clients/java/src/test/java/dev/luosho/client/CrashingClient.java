package dev.luosho.client;

import java.util.Map;

/**
 * A client process that dies mid-run: it starts a run and halts the JVM (no clean shutdown,
 * like kill -9) when the first tool call arrives. Run by ClientTest in a second JVM.
 */
public final class CrashingClient {
  public static void main(String[] args) {
    Client client = new Client(args[0]);
    Map<String, ToolHandler> tools = Map.of("add", a -> {
      System.out.println("crashing on " + a);
      System.out.flush();
      Runtime.getRuntime().halt(3);
      return null;
    });
    client.execute(args[1], "Add twice", Scripts.twoAdds(), tools).result();
    System.exit(1); // not reached
  }
}
