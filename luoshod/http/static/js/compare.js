// Two sessions side by side: their steps, the first that differs highlighted, the drift.
import { enc, get } from "./api.js";
import { errorBox, h, pretty, reasonName, replace, turnUsage } from "./dom.js";

export async function compareView(root, { params }) {
  const a = params.get("a") || "";
  const b = params.get("b") || "";
  const ia = h("input", { id: "compare-a", value: a, placeholder: "session A", spellcheck: "false" });
  const ib = h("input", { id: "compare-b", value: b, placeholder: "session B", spellcheck: "false" });
  const form = h("form", { class: "filters", id: "compare-form" },
    h("label", { for: "compare-a" }, "A"), ia, h("label", { for: "compare-b" }, "B"), ib,
    h("button", { type: "submit" }, "Compare"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    location.hash = `#/compare?a=${enc(ia.value.trim())}&b=${enc(ib.value.trim())}`;
  });
  const out = h("div", { id: "comparison" });
  replace(root, h("h1", {}, "Compare"), form, out);
  if (!a || !b) return;
  let c;
  try {
    c = await get("/compare", { session_id_a: a, session_id_b: b });
  } catch (err) {
    replace(out, errorBox(err));
    return;
  }
  const diverged = c.diverged_at === undefined || c.diverged_at === null ? null : Number(c.diverged_at);
  const d = c.drift || {};
  const finish = (r) => (reasonName(r) === "unspecified" ? "none yet" : reasonName(r));
  replace(out,
    h("p", { class: diverged === null ? "notice" : "notice warn", id: "diverged" },
      diverged === null ? "The two runs take the same steps." : `They diverge at step ${diverged}.`),
    h("dl", { class: "facts", id: "drift-summary" },
      h("dt", {}, "steps"), h("dd", {}, `${d.steps_a} vs ${d.steps_b}`),
      h("dt", {}, "finish"), h("dd", {}, `${finish(d.finish_reason_a)} vs ${finish(d.finish_reason_b)}`),
      h("dt", {}, "tool order"), h("dd", {}, d.tool_order_changed ? `${(d.tool_order_a || []).join(", ")} vs ${(d.tool_order_b || []).join(", ")}` : "the same"),
      (d.arguments || []).length ? [h("dt", {}, "arguments"), h("dd", {}, (d.arguments || []).map((x) =>
        h("div", {}, `step ${x.step} ${x.tool}: `, h("code", {}, x.arguments_json_a), " vs ", h("code", {}, x.arguments_json_b))))] : null),
    h("div", { class: "side-by-side" }, column(a, c.a, diverged), column(b, c.b, diverged)));
}

function column(id, steps, diverged) {
  return h("section", { class: "card" }, h("h2", {}, h("a", { href: `#/session/${enc(id)}` }, id)),
    h("ol", { class: "timeline" }, (steps || []).map((s) => {
      const n = Number(s.index || 0); // the step's number, from 1, as the API's diverged_at
      const cls = diverged === null ? "" : n === diverged ? " diverged" : n > diverged ? " after" : "";
      return h("li", { class: `step${cls}`, dataset: { index: n } },
        h("div", { class: "step-head" }, h("span", { class: "who" }, `step ${n}`), n === diverged ? " — diverges here" : "",
          turnUsage(s) ? h("span", { class: "turn-usage muted" }, ` · ${turnUsage(s)}`) : null),
        s.text ? h("div", { class: "text" }, s.text) : null,
        (s.calls || []).map((call) => h("div", { class: `call${call.is_error ? " failed" : ""}` },
          h("div", {}, h("strong", {}, call.name), " ", h("code", {}, call.tool_call_id)),
          h("pre", { class: "args" }, pretty(call.arguments_json)),
          call.result_json !== undefined ? h("pre", { class: "result" }, "→ " + pretty(call.result_json)) : h("p", { class: "muted" }, "no result"))));
    })));
}
