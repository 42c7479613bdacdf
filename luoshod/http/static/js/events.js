// One line about an event, from its typed payload.
import { reasonName } from "./dom.js";

export function describe(ev) {
  switch (ev.type) {
    case "run.start": return `${(ev.run_start.mode || "").replace("RUN_MODE_", "").toLowerCase()} at step ${ev.run_start.step_index}`;
    case "step.start": return `step ${ev.step_start.step}`;
    case "model.turn": {
      const m = ev.model_turn.message || {};
      const calls = (m.tool_calls || []).map((c) => c.name);
      return [m.content && short(m.content), calls.length && `calls ${calls.join(", ")}`].filter(Boolean).join(" · ");
    }
    case "tool.call": return `${ev.tool_call.call.name} [${ev.tool_call.call.id}] ${short(ev.tool_call.call.arguments_json)}${attempt(ev.tool_call)}`;
    case "tool.reconcile": return `${ev.tool_reconcile.call.name} [${ev.tool_reconcile.call.id}] handed out before (attempt ${ev.tool_reconcile.attempt}): asks the client whether it ran`;
    case "tool.result": return `${ev.tool_result.tool_name} [${ev.tool_result.tool_call_id}]${ev.tool_result.is_error ? " (error)" : ""} ${short(ev.tool_result.result_json)}`;
    case "approval.requested": {
      const a = ev.approval_requested.approval;
      return a.kind === "APPROVAL_KIND_QUESTION" ? `${a.tool_call.name} asks: “${short(a.question)}”` : `${a.tool_call.name} waits for approval`;
    }
    case "approval.resolved": {
      const r = ev.approval_resolved;
      if (r.expired) return `${r.tool_name} rejected: the approval expired`;
      if (r.answer) return `${r.tool_name} answered by ${r.decided_by || "anonymous"}: “${short(r.answer)}”`;
      return `${r.tool_name} ${r.approved ? "approved" : "rejected"} by ${r.decided_by || "anonymous"}${r.note ? ` · “${short(r.note)}”` : ""}`;
    }
    case "provider.retry": {
      const r = ev.provider_retry;
      return `${r.model} attempt ${r.attempt} failed, retried in ${r.delay_ms || 0} ms · ${short(r.error)}`;
    }
    case "provider.fallback": {
      const f = ev.provider_fallback;
      return `${f.from_model} → ${f.to_model} takes the turn (${f.error_type || f.reason}) · ${short(f.error)}`;
    }
    case "compaction.start": {
      const c = ev.compaction_start;
      return `${c.trigger} compaction before step ${c.step}: ${c.tokens} tokens${c.threshold_tokens ? ` (threshold ${c.threshold_tokens})` : ""}`;
    }
    case "compaction.done": {
      const c = ev.compaction_done;
      return `${c.tokens_before} → ${c.tokens_after} tokens · ${c.pruned || 0} results pruned, ${c.summarized || 0} messages summarized${c.error ? ` · ${short(c.error)}` : ""}`;
    }
    case "agent.drift": return `model ${ev.agent_drift.model_from || "?"} → ${ev.agent_drift.model_to || "?"}`;
    case "step.done": return `step ${ev.step_done.step}`;
    case "run.done": return `${reasonName(ev.run_done.finish_reason)}${ev.run_done.final_text ? " · " + short(ev.run_done.final_text) : ""}`;
    case "text.delta": return short(ev.text_delta.text);
    case "reasoning.delta": return short(ev.reasoning_delta.text);
    default: return "";
  }
}

// A hand-out after the first (R77): its attempt, and whether the call may have run.
function attempt(call) {
  if (!(call.attempt > 1)) return "";
  const unknown = call.reconciled === "RECONCILE_OUTCOME_UNKNOWN" ? ", may have run" : "";
  return ` · attempt ${call.attempt}${unknown}`;
}

function short(text, n = 80) {
  const s = String(text || "");
  return s.length > n ? s.slice(0, n - 1) + "…" : s;
}
