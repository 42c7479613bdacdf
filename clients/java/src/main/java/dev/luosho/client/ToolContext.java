package dev.luosho.client;

import java.util.Optional;

/**
 * What a tool may want to know about the call it runs; a handler made with
 * {@link ToolHandler#withContext} receives it.
 *
 * @param sessionId the run's session
 * @param toolCallId stable across re-runs of the same call: usable as an idempotency key. A
 *     sub-agent's calls have ids qualified by their path ({@code "<lead call id>/<its call id>"})
 * @param toolName the tool's name
 * @param step the step of the run that asked
 * @param timeoutMs how long the run waits for the result before recording a timeout
 * @param subagent the sub-agent that asks; empty when the lead asks
 */
public record ToolContext(String sessionId, String toolCallId, String toolName, int step, long timeoutMs,
    Optional<SubagentInfo> subagent) {
  public ToolContext {
    subagent = subagent == null ? Optional.empty() : subagent;
  }
}
