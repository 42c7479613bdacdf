// One session: its transcript as a timeline of steps, the history as a scrubber (with
// fork from the step shown), and its events live while runs go on.
import { ApiError, del, enc, get, post, stream, watch } from "./api.js";
import { driftBox, errorBox, h, pretty, reasonName, replace, roleName, statusBadge, turnUsage, usage, when } from "./dom.js";
import { describe } from "./events.js";
import { pathLabel, renderTasks, subagentTag, taskOf } from "./tasks.js";

export async function sessionView(root, { arg: sessionId, params }) {
  const head = h("section", { class: "session-head", id: "session-head" });
  const drift = h("div", { id: "drift" });
  const banner = h("div", { id: "scrub-banner" });
  const timeline = h("ol", { class: "timeline", id: "timeline" });
  const scrubber = h("section", { class: "card", id: "history" });
  const queuePanel = h("section", { class: "card", id: "queue" });
  const queueNote = h("div", { id: "queue-note" }); // kept across redraws of the queue
  const forkPanel = h("section", { class: "card", id: "fork" });
  const tasksPanel = h("section", { class: "card", id: "tasks" }); // empty without sub-agents
  const liveState = h("span", { class: "badge", id: "live-state" }, "connecting");
  const eventsList = h("ol", { class: "events", id: "events" });
  const runPanel = h("div", { id: "run-panel" });

  const forkedFrom = params.get("forked_from");
  replace(root,
    forkedFrom ? h("p", { class: "notice", id: "fork-notice" }, `Forked from ${forkedFrom}. `,
      h("a", { href: `#/compare?a=${enc(forkedFrom)}&b=${enc(sessionId)}`, id: "compare-with-source" }, `Compare with ${forkedFrom}`)) : null,
    head, drift, runPanel,
    h("div", { class: "columns" },
      h("section", { class: "main" }, h("h2", {}, "Timeline"), banner, timeline),
      h("aside", {}, tasksPanel, queuePanel, scrubber,
        h("section", { class: "card" }, h("h2", {}, "Events ", liveState), eventsList), forkPanel)));

  let checkpoint = null;
  let queue = []; // inputs queued on the busy session (if_busy, R69), in the order they run
  let failure = null; // why the session's last model call failed (GetSession's last_model_failure)
  let byModel = {}; // the session's turns' usage by model (GetSession's usage_by_model)
  let entries = []; // oldest first
  let selected = -1; // index into entries; -1: the latest checkpoint
  const seenEvents = [];

  async function load() {
    try {
      const got = await get(`/sessions/${enc(sessionId)}`);
      checkpoint = got.checkpoint || null;
      queue = got.queue || [];
      failure = got.last_model_failure || null;
      byModel = got.usage_by_model || {};
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) { checkpoint = null; queue = []; failure = null; } else throw err;
    }
    if (!checkpoint && !queue.length) { renderHead(); return; } // nothing more to read
    const newest = () => (entries.length ? entries[entries.length - 1].version : null);
    const before = newest();
    const history = await get(`/sessions/${enc(sessionId)}/history`, { page_size: 50, include_checkpoint: true });
    entries = history.entries.slice().reverse();
    renderHead();
    renderQueue();
    await renderTasks(tasksPanel, sessionId);
    renderDrift();
    // Only a new save redraws the scrubber and the fork form (which may be half filled).
    if (!loaded || newest() !== before) {
      renderScrubber();
      renderTimeline();
    }
    loaded = true;
  }
  let loaded = false;

  function renderHead() {
    if (!checkpoint) {
      replace(head, h("h1", {}, sessionId),
        h("p", { class: "notice", id: "not-found" }, queue.length
          ? "No checkpoint yet: its first input is queued (below)."
          : "No such session here yet (deleted, not started, or a mistyped id): this page shows it if it starts. ",
          queue.length ? null : h("a", { href: "#/sessions" }, "All sessions")));
      return;
    }
    const cp = checkpoint;
    const resume = h("button", { type: "button", id: "resume" }, "Resume");
    const cancel = h("button", { type: "button", id: "cancel" }, "Cancel run");
    const remove = h("button", { type: "button", id: "delete", class: "danger" }, "Delete");
    // R85: compact the transcript the model is sent (the transcript itself stays whole).
    const compact = h("button", { type: "button", id: "compact", title: "Prune old tool results and summarize the oldest turns for the model" }, "Compact");
    compact.addEventListener("click", async () => {
      try {
        const r = await post(`/sessions/${enc(sessionId)}/compact`, {});
        const c = r.checkpoint && r.checkpoint.compaction || {};
        replace(runPanel, h("p", { class: "notice", id: "compacted" }, r.compacted
          ? `Compacted: tool results before message ${c.pruned_before || 0} pruned, messages before ${c.summarized_before || 0} summarized.`
          : "Nothing to compact: what is left is in the protected tail."));
        await load();
      } catch (err) { replace(runPanel, errorBox(err)); }
    });
    // A finished session has nothing to resume, and no run to cancel.
    const finished = cp.status === "CHECKPOINT_STATUS_FINISHED";
    resume.disabled = finished;
    cancel.disabled = finished;
    if (finished) resume.title = cancel.title = "The session is finished: send it new input to run again.";
    // A sleeping session (R86): Resume wakes it now.
    const sleeping = cp.status === "CHECKPOINT_STATUS_SLEEPING";
    if (sleeping) { resume.textContent = "Wake now"; resume.title = `It wakes by itself at ${when(cp.wake_at)}.`; }
    resume.addEventListener("click", () => runStream(`/sessions/${enc(sessionId)}/resume`, sleeping ? { wake: true } : {}, sleeping ? "Wake" : "Resume"));
    cancel.addEventListener("click", async () => {
      try {
        const r = await post(`/sessions/${enc(sessionId)}/cancel`, {});
        replace(runPanel, h("p", { class: "notice" }, r.cancelled ? "Cancel sent: the run aborts at its next boundary." : "No run of this session is active here."));
      } catch (err) { replace(runPanel, errorBox(err)); }
    });
    remove.addEventListener("click", async () => {
      if (!confirm(`Delete session ${sessionId} and its history?`)) return;
      try { await del(`/sessions/${enc(sessionId)}`); location.hash = "#/sessions"; } catch (err) { replace(runPanel, errorBox(err)); }
    });
    replace(head,
      h("h1", {}, sessionId, " ", statusBadge(cp.status, cp.finish_reason)),
      h("dl", { class: "facts" },
        h("dt", {}, "model"), h("dd", {}, cp.agent && cp.agent.model || cp.fingerprint && cp.fingerprint.model || "–"),
        h("dt", {}, "step"), h("dd", {}, `${cp.step_index} (version ${cp.version})`),
        h("dt", {}, "usage"), h("dd", { id: "usage-totals" }, `this run: ${usage(cp.usage)}; session: ${usage(cp.total_usage)}`,
          cp.delegated_usage ? `; sub-agents in this run: ${usage(cp.delegated_usage)}` : ""),
        Object.keys(byModel).length ? [h("dt", {}, "by model"), h("dd", { id: "usage-by-model" },
          h("ul", { class: "plain" }, Object.entries(byModel)
            .sort(([a, u], [b, v]) => Number(v.cost_usd || 0) - Number(u.cost_usd || 0) || (a < b ? -1 : 1))
            .map(([model, u]) => h("li", { dataset: { model } }, h("code", {}, model || "?"), ` ${usage(u)}`))))] : null,
        h("dt", {}, "updated"), h("dd", {}, when(cp.updated_at)),
        cp.wake_at ? [h("dt", {}, "wakes"), h("dd", { id: "wakes" }, when(cp.wake_at))] : null,
        cp.approval_id ? [h("dt", {}, "approval"), h("dd", {}, h("a", { href: "#/approvals" }, cp.approval_id))] : null),
      failureBox(),
      answerBox(cp),
      h("div", { class: "actions" }, resume, cancel, compact, remove));
  }

  // Why the last model call failed: the provider's status and message, and what happens next.
  function failureBox() {
    if (!failure) return null;
    const m = failure.metadata || {};
    const rejected = failure.reason === "PROVIDER_REJECTED";
    const what = [m.status ? `HTTP ${m.status}` : "", m.error_type || ""].filter(Boolean).join(" ");
    return h("div", { class: "error", id: "model-failure", role: "status" },
      h("strong", {}, `Last model call failed: ${failure.reason}`), ` (${what}) at ${when(failure.failed_at)}, ${failure.failures} in a row.`,
      m.provider_message ? h("pre", { class: "json" }, `${m.provider || "?"}:${m.model || "?"}: ${m.provider_message}`) : null,
      h("p", { class: "muted" }, rejected
        ? "No retry can fix this: change the request or the agent, then Resume."
        : `The daemon calls that model again for this session from ${when(failure.retry_not_before)}.`));
  }

  // The inputs waiting for the session (Execute with if_busy), each removable (DequeueInput).
  function renderQueue() {
    if (!queue.length) {
      replace(queuePanel, h("h2", {}, "Queue"), h("p", { class: "muted", id: "queue-empty" }, "Nothing queued."), queueNote);
      return;
    }
    const note = queueNote;
    replace(queuePanel, h("h2", {}, `Queue (${queue.length} waiting)`),
      h("ol", { class: "queue", id: "queue-list" }, queue.map((q) => {
        const remove = h("button", { type: "button", class: "link dequeue" }, "Remove");
        remove.addEventListener("click", async () => {
          try {
            const r = await del(`/sessions/${enc(sessionId)}/queue/${enc(q.request_id)}`);
            replace(note, h("p", { class: "notice" }, r.removed
              ? `Removed ${q.request_id}: it will not run.`
              : `${q.request_id} is no longer queued (its run has begun, or it was removed).`));
            load().catch(() => {});
          } catch (err) { replace(note, errorBox(err)); }
        });
        const text = (q.input || []).map((m) => m.content).filter(Boolean).join(" / ");
        return h("li", { dataset: { request: q.request_id } },
          h("span", { class: "badge mode" }, (q.if_busy || "IF_BUSY_ENQUEUE").replace("IF_BUSY_", "").toLowerCase()), " ",
          h("span", { class: "text" }, text || "(no text)"), " ",
          h("span", { class: "muted" }, `${q.request_id} · ${when(q.enqueued_at)}`), " ", remove);
      })), note);
  }

  function shown() {
    return selected >= 0 && entries[selected] ? entries[selected].checkpoint : checkpoint;
  }

  function renderTimeline() {
    const cp = shown();
    if (selected >= 0 && entries[selected]) {
      const e = entries[selected];
      replace(banner, h("p", { class: "notice", id: "scrub-note" },
        `Showing save v${e.version} (step ${e.step}, ${reasonName(e.status.replace("CHECKPOINT_STATUS_", "FINISH_REASON_"))}) of ${when(e.saved_at)}. `,
        h("button", { type: "button", class: "link", onclick: () => select(-1) }, "Back to latest")));
    } else replace(banner);
    replace(timeline, cp ? steps(cp) : []);
  }

  function select(index) {
    selected = index;
    const range = scrubber.querySelector("input[type=range]");
    if (range) range.value = String(index < 0 ? entries.length - 1 : index);
    renderScrubberLabel();
    renderTimeline();
    renderFork();
  }

  function renderScrubber() {
    if (!entries.length) {
      replace(scrubber, h("h2", {}, "History"), h("p", { class: "muted" }, "No saves kept."));
      replace(forkPanel);
      return;
    }
    const range = h("input", {
      type: "range", id: "scrubber", min: 0, max: entries.length - 1,
      value: selected < 0 ? entries.length - 1 : selected, "aria-label": "history",
    });
    range.addEventListener("input", () => {
      const i = Number(range.value);
      select(i === entries.length - 1 ? -1 : i);
    });
    replace(scrubber, h("h2", {}, `History (${entries.length} save${entries.length === 1 ? "" : "s"} kept)`), range,
      h("p", { class: "muted", id: "scrub-label" }));
    renderScrubberLabel();
    renderFork();
  }

  function renderScrubberLabel() {
    const label = scrubber.querySelector("#scrub-label");
    if (!label) return;
    const e = entries[selected < 0 ? entries.length - 1 : selected];
    label.textContent = `v${e.version} · step ${e.step} · ${e.status.replace("CHECKPOINT_STATUS_", "").toLowerCase().replace("_", "-")} · ${e.message_count} messages${e.compaction ? " · compaction" : ""} · ${when(e.saved_at)}${selected < 0 ? " (latest)" : ""}`;
  }

  function renderFork() {
    const e = entries[selected < 0 ? entries.length - 1 : selected];
    if (!e) return;
    const calls = [];
    for (const m of e.checkpoint.messages) for (const c of m.tool_calls || []) calls.push(c);
    const callSelect = h("select", { id: "fork-call", name: "call" },
      h("option", { value: "" }, "(keep the results)"),
      calls.map((c) => h("option", { value: c.id }, `${c.name} [${c.id}]`)));
    const result = h("textarea", { id: "fork-result", rows: 3, placeholder: '{"sky": "rain"}', spellcheck: "false" });
    const isError = h("input", { type: "checkbox", id: "fork-is-error" });
    const append = h("textarea", { id: "fork-input", rows: 2, placeholder: "a user message sent after any pending calls" });
    const newId = h("input", { id: "fork-new-id", placeholder: `${sessionId}.fork-N`, spellcheck: "false" });
    const out = h("div", { id: "fork-result-box" });
    const form = h("form", { id: "fork-form" },
      h("label", { for: "fork-call" }, "Replace the result of"), callSelect,
      h("label", { for: "fork-result" }, "with (JSON)"), result,
      h("label", { class: "inline" }, isError, " as an error"),
      h("label", { for: "fork-input" }, "Add user input"), append,
      h("label", { for: "fork-new-id" }, "New session id (optional)"), newId,
      h("button", { type: "submit" }, `Fork from step ${e.step}`), out);
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const patch = {};
      if (callSelect.value) patch.tool_result = { tool_call_id: callSelect.value, result_json: result.value.trim() || "null", is_error: isError.checked };
      if (append.value.trim()) patch.append_input = append.value.trim();
      try {
        const r = await post(`/sessions/${enc(sessionId)}/fork`, { from_step: e.step, new_session_id: newId.value.trim(), patch });
        location.hash = `#/session/${enc(r.session_id)}?forked_from=${enc(sessionId)}`;
      } catch (err) { replace(out, errorBox(err)); }
    });
    replace(forkPanel, h("h2", {}, `Fork from step ${e.step}`), form);
  }

  async function runStream(path, body, label) {
    const list = h("ol", { class: "events" });
    replace(runPanel, h("section", { class: "card", id: "run" }, h("h2", {}, label), list));
    try {
      const failure = await stream(path, body, (ev) => list.append(eventItem(ev)));
      if (failure) runPanel.append(errorBox(failure));
      if (!list.children.length && !failure) list.append(h("li", { class: "muted" }, "Nothing to run: the session is finished."));
    } catch (err) {
      replace(runPanel, err.reason === "AGENT_DRIFT" ? driftBox(err.metadata, true) : null, errorBox(err));
    }
  }

  let refreshTimer = null;
  function refreshSoon() {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(() => load().catch(() => {}), 150);
  }

  function onEvent(ev) {
    const placeholder = eventsList.querySelector("#no-events");
    if (placeholder) placeholder.remove();
    seenEvents.push(ev);
    eventsList.append(eventItem(ev));
    while (eventsList.children.length > 200) eventsList.firstChild.remove();
    eventsList.scrollTop = eventsList.scrollHeight; // the list scrolls, not the page
    if (ev.type === "agent.drift" || ev.type === "run.start") renderDrift();
    if (["run.start", "model.turn", "tool.result", "run.done", "approval.requested", "step.done"].includes(ev.type)) refreshSoon();
  }

  // Since the last run.start: a refused resume (an agent.drift event marked refused, the
  // run not resumed) and the drift the current run's resume warned of; the checkpoint's
  // last_drift says the latter when the log no longer keeps that event.
  function renderDrift() {
    const lastStart = seenEvents.map((e) => e.type).lastIndexOf("run.start");
    const drifts = seenEvents.slice(Math.max(lastStart, 0)).filter((e) => e.type === "agent.drift");
    const refused = drifts.filter((e) => e.agent_drift.refused).pop();
    const warned = drifts.find((e) => !e.agent_drift.refused);
    const kept = checkpoint && checkpoint.last_drift;
    replace(drift,
      refused ? driftBox(refused.agent_drift, true) : null,
      warned ? driftBox(warned.agent_drift) : kept ? driftBox(kept) : null);
  }

  // A queued input is not an event of the session's log: the queue is read again every
  // few seconds (redrawn only when it changed).
  async function pollQueue() {
    try {
      const got = await get(`/sessions/${enc(sessionId)}`);
      const next = got.queue || [];
      if (JSON.stringify(next) !== JSON.stringify(queue)) { queue = next; renderQueue(); }
      const failed = got.last_model_failure || null;
      if (JSON.stringify(failed) !== JSON.stringify(failure)) { failure = failed; renderHead(); }
    } catch (err) { /* a deleted session: the next load says so */ }
  }

  await load();
  eventsList.append(h("li", { class: "muted", id: "no-events" }, "No events yet: they appear here as runs go on."));
  const queueTimer = setInterval(pollQueue, QUEUE_POLL_MS);
  const stop = watch(sessionId, {
    onEvent,
    onState: (state, err) => {
      liveState.textContent = state;
      liveState.className = `badge live-${state}`;
      if (state === "error" && err) eventsList.append(h("li", { class: "error" }, err.reason || "", " ", err.message || ""));
    },
  });
  return () => { stop(); clearTimeout(refreshTimer); clearInterval(queueTimer); };
}

const QUEUE_POLL_MS = 2000;

// The structured answer of an agent with an output schema (R83) whose run ended with it valid
// (finish reason stop): the final assistant message, the value of run.done's output_json,
// pretty-printed with its keys sorted as output_json has them.
function answerBox(cp) {
  if (!cp.agent || !cp.agent.output_schema_json || cp.finish_reason !== "FINISH_REASON_STOP") return null;
  const last = cp.messages[cp.messages.length - 1];
  if (!last || last.role !== "ROLE_ASSISTANT" || (last.tool_calls || []).length) return null;
  let value;
  try { value = JSON.parse(last.content); } catch { return null; }
  const sorted = (v) => Array.isArray(v) ? v.map(sorted)
    : v && typeof v === "object" ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])])) : v;
  return h("section", { class: "card", id: "structured-answer" },
    h("h2", {}, "Structured answer"),
    h("p", { class: "muted" }, "Valid against the agent's output schema."),
    h("pre", { class: "json" }, JSON.stringify(sorted(value), null, 2)));
}

function eventItem(ev) {
  const tag = subagentTag(ev); // an event a sub-agent caused carries its path
  return h("li", { dataset: { type: ev.type, seq: ev.seq, ...(tag ? { subagent: ev.subagent.path.join("/") } : {}) } },
    h("span", { class: "seq" }, ev.seq && ev.seq !== "0" ? `#${ev.seq}` : "·"), " ",
    tag ? [tag, " "] : null,
    h("span", { class: "etype" }, ev.type), " ", h("span", { class: "muted" }, describe(ev)));
}

// The transcript as steps: each assistant turn with its calls and their results; under a
// `task` call, the transcript of the sub-agent it ran (its steps, its calls by their
// qualified ids), tagged with the sub-agent's path — once, for a task continued later.
function steps(cp, messages = cp.messages, prefix = "", shown = new Set()) {
  const results = new Map();
  for (const m of messages) if (m.role === "ROLE_TOOL") results.set(m.tool_call_id, m);
  const items = [];
  let n = 0;
  for (const m of messages) {
    const role = roleName(m.role);
    if (role === "tool") continue;
    if (role !== "assistant") {
      items.push(h("li", { class: `msg ${role}` }, h("span", { class: "who" }, role), h("div", { class: "text" }, m.content)));
      continue;
    }
    n += 1;
    items.push(h("li", { class: "step", dataset: { step: n } },
      h("div", { class: "step-head" }, h("span", { class: "who" }, `step ${n}`), " model turn",
        turnUsage(m) ? h("span", { class: "turn-usage muted" }, ` · ${turnUsage(m)}`) : null),
      reasoning(m),
      m.content ? h("div", { class: "text" }, m.content) : null,
      (m.tool_calls || []).map((c) => {
        const r = results.get(c.id);
        const id = prefix ? `${prefix}/${c.id}` : c.id;
        return h("div", { class: `call${r && r.is_error ? " failed" : ""}${r ? "" : " pending"}`, dataset: { call: id } },
          h("div", {}, h("strong", {}, c.name), " ", h("code", {}, id)),
          h("pre", { class: "args" }, pretty(c.arguments_json)),
          c.name === "task" ? subtask(cp, id, r, shown) : null,
          r ? h("pre", { class: "result" }, (r.is_error ? "error: " : "→ ") + pretty(r.content))
            : h("p", { class: "muted" }, "no result yet"));
      })));
  }
  return items;
}

// The reasoning kept with a turn (R84), collapsed: its readable text, a redacted or
// encrypted block as such.
function reasoning(m) {
  const blocks = m.reasoning || [];
  if (!blocks.length) return null;
  return h("details", { class: "reasoning", dataset: { blocks: blocks.length } },
    h("summary", { class: "muted" }, `reasoning · ${blocks.length} block${blocks.length === 1 ? "" : "s"}`),
    blocks.map((b) => b.text
      ? h("pre", { class: "reasoning-text" }, b.text)
      : h("p", { class: "muted" }, `${b.provider}: redacted or encrypted, kept as received`)));
}

function subtask(cp, id, result, shown) {
  const task = taskOf(cp, id, result);
  if (!task) return null;
  if (shown.has(task.task_id)) return h("p", { class: "muted" }, `continues ${task.task_id} (above)`);
  shown.add(task.task_id);
  const turns = (task.messages || []).filter((m) => m.role === "ROLE_ASSISTANT").length;
  return h("details", { class: "subtask", open: true, dataset: { task: task.task_id, path: task.path.join("/") } },
    h("summary", {}, h("span", { class: "badge subagent-tag" }, pathLabel(task.path)), " ",
      h("code", {}, task.task_id), h("span", { class: "muted" }, ` · ${turns} step${turns === 1 ? "" : "s"}`)),
    h("ol", { class: "timeline nested" }, steps(cp, task.messages || [], id, shown)));
}
