// Sub-agents in the console (docs/reference/rules.md R55–R65): a session's tasks as a tree (from
// GET /sessions/{id}/tasks), and the sub-agent path an event or an approval carries.
import { enc, get } from "./api.js";
import { h, replace, usage } from "./dom.js";

const STATUS_CLASS = {
  "in-progress": "st-in-progress", waiting: "st-in-progress", "awaiting-approval": "st-awaiting-approval",
  finished: "st-finished", failed: "st-failed",
};

// The "researcher › helper" label of a path (outermost first), or null for the lead.
export function pathLabel(path) {
  return path && path.length ? path.join(" › ") : null;
}

// The tag of an event a sub-agent caused, or null.
export function subagentTag(ev) {
  const s = ev && ev.subagent;
  if (!s || !s.path || !s.path.length) return null;
  return h("span", { class: "badge subagent-tag", title: `sub-agent ${s.name}, depth ${s.depth || 1}, ${s.task_id}` },
    pathLabel(s.path));
}

// The footer of a task's result (R56): "[sub-agent 'NAME': N step(s), finish reason 'R', task_id 'task_K']".
const FOOTER = /\[sub-agent '[^']*': \d+ step\(s\), finish reason '([^']*)', task_id '([^']*)'\]\s*$/;

// The task a `task` call ran, from the checkpoint `cp` (proto JSON): a finished one by the
// task id its result names, an unfinished one by the call's qualified id; or null.
export function taskOf(cp, qualified, result) {
  if (result) {
    let body;
    try { body = JSON.parse(result.content); } catch { return null; }
    let id = "";
    if (typeof body === "string") { const m = FOOTER.exec(body); if (m) id = m[2]; }
    else if (body && typeof body.task_id === "string") id = body.task_id;
    return (cp.tasks || []).find((t) => t.task_id === id) || null;
  }
  return (cp.subagents || []).find((s) => s.call_id === qualified) || null;
}

// Reads and draws the tree into `panel`; returns the number of tasks.
export async function renderTasks(panel, sessionId) {
  let body;
  try {
    body = await get(`/sessions/${enc(sessionId)}/tasks`);
  } catch (err) {
    replace(panel);
    return 0;
  }
  const count = (nodes) => nodes.reduce((n, t) => n + 1 + count(t.children), 0);
  const n = count(body.tasks);
  if (!n) { replace(panel); return 0; }
  replace(panel, h("h2", {}, `Tasks (${n})`), h("ul", { class: "tasks", id: "task-tree" }, body.tasks.map(item)));
  return n;
}

function item(t) {
  const facts = [`${t.steps} step${t.steps === 1 ? "" : "s"}`];
  if (t.finish_reason) facts.push(t.finish_reason);
  if (t.usage) facts.push(usage(t.usage));
  if (t.call_ids.length > 1) facts.push(`continued ${t.call_ids.length - 1}×`);
  return h("li", { class: "task", dataset: { task: t.task_id, status: t.status, path: t.path.join("/") } },
    h("div", { class: "task-head" },
      h("strong", { class: "name" }, t.name), " ", h("code", { class: "task-id" }, t.task_id), " ",
      h("span", { class: `badge status ${STATUS_CLASS[t.status] || ""}` }, t.status), " ",
      h("span", { class: "muted facts" }, facts.join(" · ")),
      t.approval_id ? [" ", h("a", { href: "#/approvals", class: "approval-link" }, t.approval_id)] : null),
    t.call_ids[0] ? h("div", { class: "muted calls" }, "run by ", t.call_ids.map((c, i) => [i ? ", " : "", h("code", {}, c)])) : null,
    t.children.length ? h("ul", { class: "tasks" }, t.children.map(item)) : null);
}
