package dev.luosho.client;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One of the app's tools: the call's JSON arguments in, the result out. The result is sent as
 * JSON (a {@link JsonNode}, a String, a number, a Map, a record, … anything Jackson writes). A
 * thrown exception becomes an error result the model can read: {@code {"error": "Type: msg"}}.
 *
 * <p>A handler that wants to know about the call it runs (its id, its step, which sub-agent
 * asks) is made with {@link #withContext}.
 */
@FunctionalInterface
public interface ToolHandler {
  Object call(JsonNode args) throws Exception;

  /**
   * The call with what the client knows of it; the client calls this one. By default it
   * ignores the context and calls {@link #call(JsonNode)}.
   */
  default Object call(JsonNode args, ToolContext context) throws Exception {
    return call(args);
  }

  /** The tool's reconcile function (R77); null (the default) when it has none. */
  default Reconciler reconciler() {
    return null;
  }

  /**
   * {@code handler} with a reconcile function (R77): {@code Map.of("pay",
   * ToolHandler.reconciled(pay, call -> found(call.toolCallId()) ? ReconcileAnswer.done(...) :
   * ReconcileAnswer.NOT_STARTED))}. The client sets {@code reconcile} on the tools whose handler
   * has one, in the agent it sends, and answers their {@code tool.reconcile} events with it.
   */
  static ToolHandler reconciled(ToolHandler handler, Reconciler reconciler) {
    return new ToolHandler() {
      @Override
      public Object call(JsonNode args) throws Exception {
        return handler.call(args);
      }

      @Override
      public Object call(JsonNode args, ToolContext context) throws Exception {
        return handler.call(args, context);
      }

      @Override
      public Reconciler reconciler() {
        return reconciler;
      }
    };
  }

  /** A tool that sees its call's {@link ToolContext} (e.g. {@code context.subagent()}). */
  @FunctionalInterface
  interface WithContext {
    Object call(JsonNode args, ToolContext context) throws Exception;
  }

  /**
   * A handler that receives the call's context: {@code ToolHandler.withContext((args, ctx) ->
   * ctx.subagent().map(SubagentInfo::name).orElse("lead"))}. Called without one (through
   * {@link #call(JsonNode)}), it gets an empty context.
   */
  static ToolHandler withContext(WithContext handler) {
    return new ToolHandler() {
      @Override
      public Object call(JsonNode args) throws Exception {
        return handler.call(args, new ToolContext("", "", "", 0, 0, java.util.Optional.empty()));
      }

      @Override
      public Object call(JsonNode args, ToolContext context) throws Exception {
        return handler.call(args, context);
      }
    };
  }
}
