package dev.luosho.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Map;
import dev.luosho.v1.*;

/** Runs the handler of a {@code tool.call} event and encodes its answer. */
final class Tools {
  static final ObjectMapper JSON = new ObjectMapper();

  private final Map<String, ToolHandler> handlers;

  Tools(Map<String, ToolHandler> handlers) {
    this.handlers = handlers == null ? Map.of() : Map.copyOf(handlers);
  }

  static String dumps(Object value) throws JsonProcessingException {
    return JSON.writeValueAsString(value);
  }

  private static SubmitToolResultRequest.Builder error(Throwable e) {
    String text = e.getClass().getSimpleName() + ": " + e.getMessage();
    return SubmitToolResultRequest.newBuilder()
        .setResultJson(JSON.createObjectNode().put("error", text).toString())
        .setIsError(true);
  }

  /** The SubmitToolResult request that answers the call of a tool.call event. Never throws. */
  SubmitToolResultRequest answer(String sessionId, Event event) {
    ToolCall call = event.getToolCall().getCall();
    SubmitToolResultRequest.Builder out;
    ToolHandler handler = handlers.get(call.getName());
    if (handler == null) {
      out = error(new IllegalArgumentException("no tool named '" + call.getName() + "' was given to the client"));
    } else {
      try {
        String raw = call.getArgumentsJson();
        JsonNode args = raw.isEmpty() ? JSON.createObjectNode() : JSON.readTree(raw);
        ToolContext context = new ToolContext(event.getSessionId().isEmpty() ? sessionId : event.getSessionId(),
            call.getId(), call.getName(), event.getToolCall().getStep(), event.getToolCall().getTimeoutMs(),
            SubagentInfo.of(event));
        out = SubmitToolResultRequest.newBuilder().setResultJson(dumps(handler.call(args, context)));
      } catch (Exception e) {
        out = error(e);
      }
    }
    String session = event.getSessionId().isEmpty() ? sessionId : event.getSessionId();
    return out.setSessionId(session).setToolCallId(call.getId()).build();
  }
}
