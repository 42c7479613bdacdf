// Building the page with text nodes only: nothing the daemon returns is parsed as HTML.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

const STATUS = {
  CHECKPOINT_STATUS_IN_PROGRESS: "in-progress",
  CHECKPOINT_STATUS_AWAITING_APPROVAL: "awaiting-approval",
  CHECKPOINT_STATUS_FINISHED: "finished",
  CHECKPOINT_STATUS_SLEEPING: "sleeping",
};

export const statusName = (s) => STATUS[s] || "unknown";
export const reasonName = (r) => (r || "").replace("FINISH_REASON_", "").toLowerCase().replace("_", "-");
export const roleName = (r) => (r || "").replace("ROLE_", "").toLowerCase();

export function statusBadge(status, finishReason) {
  const name = statusName(status);
  const reason = reasonName(finishReason);
  const text = reason && reason !== "unspecified" && name === "finished" ? `${name} (${reason})` : name;
  return h("span", { class: `badge st-${name}`, "data-status": name }, text);
}

export function when(iso) {
  if (!iso) return "–";
  const d = new Date(iso);
  return d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

export function ago(iso, now = Date.now()) {
  if (!iso) return "–";
  const s = Math.round((now - new Date(iso).getTime()) / 1000);
  const future = s < 0;
  const a = Math.abs(s);
  const text = a < 60 ? `${a}s` : a < 3600 ? `${Math.round(a / 60)} min` : a < 86400 ? `${Math.round(a / 3600)} h` : `${Math.round(a / 86400)} d`;
  return future ? `in ${text}` : `${text} ago`;
}

export function pretty(json) {
  if (json === undefined || json === null || json === "") return "";
  try { return JSON.stringify(JSON.parse(json), null, 2); } catch { return String(json); }
}

export function usage(u) {
  if (!u) return "–";
  const total = Number(u.total_tokens || 0);
  const calls = Number(u.model_calls || 0);
  const paid = Number(u.cost_usd || 0);
  return `${total.toLocaleString("en")} tok · ${calls} call${calls === 1 ? "" : "s"}${paid ? ` · ${cost(u)}` : ""}`;
}

// A usage's cost in USD, or "–" when none is known.
export function cost(u) {
  const paid = Number(u && u.cost_usd || 0);
  return paid ? `$${paid.toFixed(4)}` : "–";
}

// An assistant turn's model and what its call used (R78); "" for a turn saved without them.
export function turnUsage(m) {
  if (!m.model && !m.usage) return "";
  const u = m.usage || {};
  const n = (k) => Number(u[k] || 0).toLocaleString("en");
  const parts = [m.model || "?", `${n("prompt_tokens")} in + ${n("completion_tokens")} out`];
  for (const [k, label] of [["cached_input_tokens", "cached"], ["cache_write_tokens", "cache write"], ["reasoning_tokens", "reasoning"]]) {
    if (Number(u[k] || 0)) parts.push(`${n(k)} ${label}`);
  }
  if (Number(u.cost_usd || 0)) parts.push(cost(u));
  return parts.join(" · ");
}

export function errorBox(err) {
  const meta = err && err.metadata ? Object.entries(err.metadata) : [];
  return h("div", { class: "error", role: "alert" },
    h("strong", {}, err.reason || err.code || "error"), " ", err.message || String(err),
    meta.length ? h("dl", { class: "meta" }, meta.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])) : null);
}

// The agent's diff, from an agent.drift event or an AGENT_DRIFT refusal's metadata.
export function driftBox(d, refused = false) {
  const list = (v) => Array.isArray(v) ? v : (v ? String(v).split(",").filter(Boolean) : []);
  const rows = [];
  if (d.model_from || d.model_to) rows.push(["model", `${d.model_from || "?"} → ${d.model_to || "?"}`]);
  for (const [k, label] of [["tools_added", "tools added"], ["tools_removed", "tools removed"], ["tools_changed", "tools changed"]]) {
    const v = list(d[k]);
    if (v.length) rows.push([label, v.join(", ")]);
  }
  if (d.instructions_changed === true || d.instructions_changed === "true") rows.push(["instructions", "changed"]);
  return h("div", { class: `drift${refused ? " refused" : ""}` },
    h("strong", {}, refused ? "Resume refused: agent drifted" : "Agent drift — the last resume warned"),
    h("dl", { class: "meta" }, rows.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])));
}
