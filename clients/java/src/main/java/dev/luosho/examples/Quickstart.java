package dev.luosho.examples;

import dev.luosho.client.Client;
import dev.luosho.client.Run;
import dev.luosho.client.RunResult;
import dev.luosho.client.ToolHandler;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import dev.luosho.v1.*;
import dev.luosho.v1.AgentSpec;
import dev.luosho.v1.ToolSpec;

/**
 * The Java client's quickstart: a scripted travel agent whose two tools run here, in the
 * caller. With a daemon running ({@code make run} serves examples/scripts, where
 * "scripted:demo" is), from clients/java:
 *
 * <pre>
 * mvn -B -q -Dstyle.color=never compile exec:java            # the daemon at $LUOSHOD_ADDRESS, else 127.0.0.1:50051
 * mvn -B -q -Dstyle.color=never compile exec:java -Dexec.args="ADDR SESSION"
 * </pre>
 *
 * Each run is a new session ({@code trip-} and a random suffix) unless one is named, so
 * running it again plays the whole script again rather than continuing a finished
 * conversation. It prints what the Python, Go and TypeScript quickstarts print.
 */
public final class Quickstart {
  private Quickstart() {}

  public static void main(String[] args) {
    String address = args.length > 0 ? args[0] : System.getenv().getOrDefault("LUOSHOD_ADDRESS", "");
    if (address.isEmpty()) address = "127.0.0.1:50051";
    String session = args.length > 1 ? args[1] : "trip-" + UUID.randomUUID().toString().substring(0, 6);
    System.out.println("session " + session + " on " + address);

    AgentSpec agent = AgentSpec.newBuilder()
        .setModel("scripted:demo") // plays examples/scripts/demo.json; "openai:gpt-4o-mini" for real
        .setInstructions("You are a travel agent.")
        .addTools(ToolSpec.newBuilder().setName("get_weather")
            .setInputSchemaJson("{\"type\": \"object\", \"required\": [\"city\"]}"))
        .addTools(ToolSpec.newBuilder().setName("convert").setInputSchemaJson("{\"type\": \"object\"}"))
        .build();
    ToolHandler weather = a -> Map.of("city", a.get("city").asText(), "sky", "sunny", "celsius", 24);
    ToolHandler convert = a -> Math.round(a.get("amount").asDouble() * 1.08 * 100) / 100.0;

    try (Client client = new Client(address)) {
      Run run = client.execute(session, "Plan a day in Lisbon", agent, Map.of("get_weather", weather, "convert", convert));
      for (Event event : run) System.out.printf("%3d %s%n", event.getSeq(), event.getType());
      RunResult result = run.result();
      // "stop", as the other quickstarts print it.
      String reason = result.finishReason().name().replaceFirst("^FINISH_REASON_", "").toLowerCase(Locale.ROOT);
      System.out.println(reason + " - " + result.finalText());
    }
  }
}
