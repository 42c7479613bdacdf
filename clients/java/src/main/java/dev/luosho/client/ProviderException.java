package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;

/** PROVIDER_ERROR: the model provider failed. */
public class ProviderException extends LuoshoException {
  public ProviderException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(code, reason, message, metadata, cause);
  }
}
