package dev.luosho.client;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One of the app's tools: the call's JSON arguments in, the result out. The result is sent as
 * JSON (a {@link JsonNode}, a String, a number, a Map, a record, … anything Jackson writes). A
 * thrown exception becomes an error result the model can read: {@code {"error": "Type: msg"}}.
 */
@FunctionalInterface
public interface ToolHandler {
  Object call(JsonNode args) throws Exception;
}
