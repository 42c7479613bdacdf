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

  /** The names of the tools whose handler has a reconcile function (R77). */
  java.util.Set<String> reconciled() {
    java.util.Set<String> names = new java.util.HashSet<>();
    handlers.forEach((name, handler) -> {
      if (handler.reconciler() != null) names.add(name);
    });
    return names;
  }

  /** The names of the tools in {@code handlers} whose handler has a reconcile function. */
  static java.util.Set<String> reconciledIn(Map<String, ToolHandler> handlers) {
    return handlers == null ? java.util.Set.of() : new Tools(handlers).reconciled();
  }

  /** {@code request} with {@code reconcile} set on the tools of its agent that have a reconcile function. */
  static ExecuteRequest markReconciled(ExecuteRequest request, Map<String, ToolHandler> handlers) {
    java.util.Set<String> names = reconciledIn(handlers);
    return !request.hasAgent() || names.isEmpty() ? request
        : request.toBuilder().setAgent(markReconciled(request.getAgent(), names)).build();
  }

  static ResumeRequest markReconciled(ResumeRequest request, Map<String, ToolHandler> handlers) {
    java.util.Set<String> names = reconciledIn(handlers);
    return !request.hasAgent() || names.isEmpty() ? request
        : request.toBuilder().setAgent(markReconciled(request.getAgent(), names)).build();
  }

  static ResolveRequest markReconciled(ResolveRequest request, Map<String, ToolHandler> handlers) {
    java.util.Set<String> names = reconciledIn(handlers);
    return !request.hasAgent() || names.isEmpty() ? request
        : request.toBuilder().setAgent(markReconciled(request.getAgent(), names)).build();
  }

  /** {@code spec} with {@code reconcile} set on the tools (its sub-agents' too) named in {@code names}. */
  static AgentSpec markReconciled(AgentSpec spec, java.util.Set<String> names) {
    if (names.isEmpty()) return spec;
    AgentSpec.Builder b = spec.toBuilder();
    for (ToolSpec.Builder tool : b.getToolsBuilderList()) {
      if (names.contains(tool.getName())) tool.setReconcile(true);
    }
    for (SubAgent.Builder sub : b.getSubagentsBuilderList()) {
      if (sub.hasAgent()) sub.setAgent(markReconciled(sub.getAgent(), names));
    }
    return b.build();
  }

  private static final String[] RECONCILED = {"", "", "NOT_STARTED", "UNKNOWN"};

  /**
   * The SubmitToolResult request that answers a tool.reconcile event (R77): with
   * {@code ran}, the result the tool already computed in this run object, as DONE; else the
   * tool's reconcile function's answer, UNKNOWN when it has none or it throws. Never throws.
   */
  SubmitToolResultRequest reconcile(String sessionId, Event event, SubmitToolResultRequest ran) {
    ToolReconcile asked = event.getToolReconcile();
    ToolCall call = asked.getCall();
    String session = event.getSessionId().isEmpty() ? sessionId : event.getSessionId();
    SubmitToolResultRequest.Builder out = SubmitToolResultRequest.newBuilder()
        .setSessionId(session).setToolCallId(call.getId());
    if (ran != null) {
      return out.setResultJson(ran.getResultJson()).setIsError(ran.getIsError())
          .setReconcile(ReconcileOutcome.RECONCILE_OUTCOME_DONE).build();
    }
    ToolHandler handler = handlers.get(call.getName());
    Reconciler reconciler = handler == null ? null : handler.reconciler();
    ReconcileAnswer answer = ReconcileAnswer.UNKNOWN;
    if (reconciler != null) {
      try {
        JsonNode args;
        try {
          args = call.getArgumentsJson().isEmpty() ? JSON.createObjectNode() : JSON.readTree(call.getArgumentsJson());
        } catch (JsonProcessingException e) {
          args = JSON.getNodeFactory().textNode(call.getArgumentsJson());
        }
        ReconcileAnswer given = reconciler.reconcile(new ReconcileCall(session, call.getId(), call.getName(), args,
            asked.getAttempt(), asked.getStep(), SubagentInfo.of(event)));
        if (given != null) answer = given;
      } catch (Exception e) {
        answer = ReconcileAnswer.UNKNOWN; // the client cannot tell
      }
    }
    out.setReconcile(answer.outcome());
    if (answer.outcome() == ReconcileOutcome.RECONCILE_OUTCOME_DONE) {
      try {
        out.setResultJson(dumps(answer.result())).setIsError(answer.isError());
      } catch (JsonProcessingException e) {
        SubmitToolResultRequest.Builder failed = error(e);
        out.setResultJson(failed.getResultJson()).setIsError(true);
      }
    }
    return out.build();
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
        ToolCallRequested requested = event.getToolCall();
        int reconciled = requested.getReconciledValue();
        ToolContext context = new ToolContext(event.getSessionId().isEmpty() ? sessionId : event.getSessionId(),
            call.getId(), call.getName(), requested.getStep(), requested.getTimeoutMs(),
            SubagentInfo.of(event), requested.getAttempt(),
            reconciled >= 0 && reconciled < RECONCILED.length ? RECONCILED[reconciled] : "");
        out = SubmitToolResultRequest.newBuilder().setResultJson(dumps(handler.call(args, context)));
      } catch (Exception e) {
        out = error(e);
      }
    }
    String session = event.getSessionId().isEmpty() ? sessionId : event.getSessionId();
    return out.setSessionId(session).setToolCallId(call.getId()).build();
  }
}
