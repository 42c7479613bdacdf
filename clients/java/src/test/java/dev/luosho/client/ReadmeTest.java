package dev.luosho.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import dev.luosho.v1.*;
import org.junit.jupiter.api.Test;

/** The README's example is ReadmeExample's code, and it runs. */
class ReadmeTest {
  private static String between(List<String> lines, String begin, String end) {
    int from = -1;
    int to = -1;
    for (int i = 0; i < lines.size(); i++) {
      if (from < 0 && lines.get(i).contains(begin)) from = i + 1;
      else if (from >= 0 && lines.get(i).contains(end)) {
        to = i;
        break;
      }
    }
    assertTrue(from >= 0 && to >= from, "no " + begin + " … " + end);
    List<String> block = lines.subList(from, to);
    int indent = block.stream().filter(l -> !l.isBlank())
        .mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
    return block.stream().map(l -> l.isBlank() ? "" : l.substring(indent)).collect(Collectors.joining("\n"));
  }

  @Test
  void readmeExampleIsTheTestedCode() throws Exception {
    String readme = between(Files.readAllLines(Path.of("README.md")), "```java", "```");
    String code = between(Files.readAllLines(Path.of("src/test/java/dev/luosho/client/ReadmeExample.java")),
        "README-BEGIN", "README-END");
    String shown = code.lines().filter(l -> !l.contains("return result;")).collect(Collectors.joining("\n"));
    assertEquals(shown, readme);
  }

  @Test
  void readmeExampleRuns() {
    RunResult result = ReadmeExample.run(Daemon.shared().address);
    assertEquals(FinishReason.FINISH_REASON_STOP, result.finishReason());
    assertEquals("1 + 2 = 3", result.finalText());
    assertTrue(result.events().stream().anyMatch(e -> e.hasToolResult() && e.getToolResult().getResultJson().equals("3")));
  }
}
