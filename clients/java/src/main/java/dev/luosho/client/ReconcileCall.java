package dev.luosho.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Optional;

/**
 * A call handed out before whose fate the daemon does not know (a {@code tool.reconcile} event,
 * R77), for the tool's {@link Reconciler}.
 *
 * @param sessionId the run's session
 * @param toolCallId the call's id: the same on every hand-out, the idempotency key to look it up by
 * @param toolName the tool's name
 * @param arguments the call's arguments
 * @param attempt the attempt of the last hand-out (1: the first)
 * @param step the step of the run that asked
 * @param subagent the sub-agent whose call it is; empty for the lead's
 */
public record ReconcileCall(String sessionId, String toolCallId, String toolName, JsonNode arguments, int attempt,
    int step, Optional<SubagentInfo> subagent) {}
