// Sessions: filter by status and id prefix, the newest or the costliest first (the daemon
// orders every page: ListSessions' newest_first or costliest_first), paged (AIP-158 page
// tokens); usage and cost from the listing, the model filled in per row from GetSession once
// the page is shown.
import { enc, get } from "./api.js";
import { cost, errorBox, h, replace, statusBadge, usage, when } from "./dom.js";

const PAGE_SIZE = 25; // #/sessions?size=N for another
// [heading, hidden on narrow screens]
const COLUMNS = [["Session"], ["Status"], ["Model", true], ["Step"], ["Msgs", true], ["Usage", true], ["Cost"], ["Updated (UTC)"]];
const ORDERS = [["", "newest first"], ["cost", "costliest first"]];
const STATUSES = [["", "all"], ["in-progress", "in progress"], ["awaiting-approval", "awaiting approval"], ["finished", "finished"], ["sleeping", "sleeping"]];

export async function sessionsView(root, { params }) {
  const status = params.get("status") || "";
  const id = params.get("id") || "";
  const size = Number(params.get("size")) || PAGE_SIZE;
  const sort = params.get("sort") === "cost" ? "cost" : "";
  const order = ORDERS.find(([v]) => v === sort)[1];
  const start = params.get("page") || ""; // the page token of the page shown (in the URL, so a page can be shared)
  const tokens = [start]; // page tokens of the pages seen, for Previous
  const table = h("tbody");
  const pager = h("div", { class: "pager" });
  const note = h("p", { class: "muted", id: "sessions-note" });

  const statusSelect = h("select", { id: "filter-status", name: "status" },
    STATUSES.map(([v, label]) => h("option", { value: v, selected: v === status }, label)));
  const idInput = h("input", { id: "filter-id", name: "id", value: id, placeholder: "session id prefix", spellcheck: "false" });
  const sortSelect = h("select", { id: "filter-sort", name: "sort" },
    ORDERS.map(([v, label]) => h("option", { value: v, selected: v === sort }, label)));
  const form = h("form", { class: "filters", id: "filters" },
    h("label", { for: "filter-status" }, "Status"), statusSelect,
    h("label", { for: "filter-id" }, "Id starts with"), idInput,
    h("label", { for: "filter-sort" }, "Order"), sortSelect,
    h("button", { type: "submit" }, "Filter"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const q = new URLSearchParams();
    if (statusSelect.value) q.set("status", statusSelect.value);
    if (idInput.value.trim()) q.set("id", idInput.value.trim());
    if (sortSelect.value) q.set("sort", sortSelect.value);
    if (size !== PAGE_SIZE) q.set("size", String(size));
    location.hash = `#/sessions${q.toString() ? "?" + q : ""}`;
  });
  statusSelect.addEventListener("change", () => form.requestSubmit());
  sortSelect.addEventListener("change", () => form.requestSubmit());

  replace(root,
    h("h1", {}, "Sessions"), form,
    h("div", { class: "table-wrap" }, h("table", { class: "grid", id: "sessions" },
      h("thead", {}, h("tr", {}, COLUMNS.map(([c, hide]) => h("th", { class: hide ? "narrow-hide" : null },
        c === "Cost" && !sort ? h("a", { href: costliestHref(params), title: "the costliest first" }, c) : c)))),
      table)),
    note, pager);

  let alive = true;
  async function show(pageIndex) {
    // The id filter is a prefix of the id, paged like the whole list. A refused filter (an
    // id prefix that is no id) is said under the form, which stays to be corrected.
    let page;
    try {
      // The most recently updated (or the costliest) first, with the count of the whole listing.
      page = await get("/sessions", {
        status, session_id_prefix: id, page_size: size, page_token: tokens[pageIndex],
        ...(sort === "cost" ? { costliest_first: "true" } : { newest_first: "true" }),
        include_total_size: "true",
      });
    } catch (err) {
      if (!alive) return;
      replace(table);
      replace(note, errorBox(err));
      replace(pager);
      return;
    }
    const rows = page.sessions;
    const next = page.next_page_token;
    if (!alive) return;
    replace(table, rows.map(row));
    note.textContent = rows.length ? "" : id ? `No session whose id starts with ${id}${status ? " with that status" : ""}.` : "No sessions.";
    const prev = h("button", { type: "button", id: "page-prev", disabled: pageIndex === 0 }, "← Previous");
    const nextButton = h("button", { type: "button", id: "page-next", disabled: !next }, "Next →");
    prev.addEventListener("click", () => go(pageIndex - 1));
    nextButton.addEventListener("click", () => { tokens[pageIndex + 1] = next; go(pageIndex + 1); });
    const total = Number(page.total_size || 0);
    const pages = Math.max(1, Math.ceil(total / size));
    replace(pager, prev, h("span", { class: "muted" }, `page ${pageIndex + 1} of ${pages}`), nextButton,
      h("span", { class: "muted", id: "page-count" },
        `${rows.length} shown of ${total.toLocaleString("en")} session${total === 1 ? "" : "s"}, ${order}`));
    fillDetails(rows);
  }

  // Another page: shown at once, and its token put in the URL (without a new view).
  function go(pageIndex) {
    const q = new URLSearchParams(params);
    if (tokens[pageIndex]) q.set("page", tokens[pageIndex]); else q.delete("page");
    history.replaceState(null, "", `#/sessions${q.toString() ? "?" + q : ""}`);
    show(pageIndex);
  }

  function row(s) {
    return h("tr", { dataset: { session: s.session_id } },
      h("td", {}, h("a", { href: `#/session/${enc(s.session_id)}` }, s.session_id),
        s.approval_id ? h("span", { class: "badge st-awaiting-approval small" }, "approval") : null,
        s.last_drift ? h("span", { class: "badge drift-badge small", title: driftTitle(s.last_drift) }, "drifted") : null),
      h("td", {}, statusBadge(s.status, s.finish_reason),
        s.wake_at ? h("span", { class: "muted small wakes", title: "when it wakes (R86)" }, ` wakes ${when(s.wake_at)}`) : null),
      h("td", { class: "model narrow-hide" }, "…"),
      h("td", { class: "num" }, s.step_index),
      h("td", { class: "num narrow-hide" }, s.message_count),
      h("td", { class: "usage narrow-hide" }, usage(s.total_usage)),
      h("td", { class: "num cost" }, cost(s.total_usage)),
      h("td", { class: "time" }, when(s.updated_at)));
  }

  async function fillDetails(rows) {
    await Promise.all(rows.map(async (s) => {
      const tr = table.querySelector(`tr[data-session="${CSS.escape(s.session_id)}"]`);
      try {
        const { checkpoint } = await get(`/sessions/${enc(s.session_id)}`);
        if (!alive || !tr) return;
        tr.querySelector(".model").textContent = checkpoint.agent && checkpoint.agent.model || checkpoint.fingerprint && checkpoint.fingerprint.model || "–";
      } catch {
        if (tr) tr.querySelector(".model").textContent = "–";
      }
    }));
  }

  await show(0);
  return () => { alive = false; };
}

// The list with the same filters, the costliest first.
function costliestHref(params) {
  const q = new URLSearchParams(params);
  q.delete("page");
  q.set("sort", "cost");
  return `#/sessions?${q}`;
}

// The badge's tooltip: what differed when the session's last resume drifted.
function driftTitle(d) {
  const parts = [];
  if (d.model_from !== d.model_to) parts.push(`model ${d.model_from} → ${d.model_to}`);
  for (const [k, label] of [["tools_added", "added"], ["tools_removed", "removed"], ["tools_changed", "changed"]]) {
    if ((d[k] || []).length) parts.push(`tools ${label}: ${d[k].join(", ")}`);
  }
  if (d.instructions_changed) parts.push("instructions changed");
  return `The last resume was made by a different agent (${parts.join("; ") || "fingerprint changed"})`;
}
