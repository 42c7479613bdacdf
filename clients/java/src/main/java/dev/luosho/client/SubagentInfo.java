package dev.luosho.client;

import java.util.List;
import java.util.Optional;
import dev.luosho.v1.*;

/**
 * Which sub-agent caused an event (docs/reference/rules.md R58): its name, its depth (1 for a sub-agent of
 * the lead, 2 for one of its own, …), the names from the lead's sub-agent down to it, and its
 * task id ({@code "task_K"}, as in the {@code task} result's footer). The lead's own events
 * have none.
 */
public record SubagentInfo(String name, int depth, List<String> path, String taskId) {
  public SubagentInfo {
    path = List.copyOf(path);
  }

  /** The sub-agent an event comes from; empty for the lead's own events. */
  public static Optional<SubagentInfo> of(Event event) {
    return event.hasSubagent() ? Optional.of(of(event.getSubagent())) : Optional.empty();
  }

  /** The typed form of an event's {@code subagent} tag. */
  public static SubagentInfo of(SubAgentTag tag) {
    return new SubagentInfo(tag.getName(), tag.getDepth(), tag.getPathList(), tag.getTaskId());
  }

  /**
   * The sub-agents an approval's call is nested in, outermost first ({@code ["researcher"]},
   * {@code ["researcher", "helper"]}); empty for the lead's own call.
   */
  public static List<String> pathOf(Approval approval) {
    return List.copyOf(approval.getSubagentPathList());
  }
}
