package dev.luosho.client;

import io.grpc.Status;
import java.util.Map;

/** STORE_FULL: the daemon's store is full. */
public class StoreFullException extends LuoshoException {
  public StoreFullException(Status.Code code, String reason, String message, Map<String, String> metadata, Throwable cause) {
    super(code, reason, message, metadata, cause);
  }
}
