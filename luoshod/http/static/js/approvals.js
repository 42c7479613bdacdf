// The approvals inbox: what waits, oldest first; approve or reject with a note, answer or
// decline a question (R88), and the run that follows, shown as it goes.
import { enc, get, stream } from "./api.js";
import { ago, driftBox, errorBox, h, pretty, reasonName, replace, statusName, when } from "./dom.js";
import { describe } from "./events.js";
import { pathLabel, subagentTag } from "./tasks.js";

export async function approvalsView(root) {
  const list = h("div", { class: "inbox", id: "inbox" });
  replace(root, h("h1", {}, "Approvals"),
    h("p", { class: "muted" }, "Oldest first. Deciding holds the run in this page while the app answers its tool calls; “Leave it to the app” (or leaving the page) stops it at its next boundary, in progress, for the app's next Resume."),
    list);
  const running = new Set();
  const all = [];
  let token = "";
  do {
    const page = await get("/approvals", { page_size: 100, page_token: token });
    all.push(...page.approvals);
    token = page.next_page_token;
  } while (token && all.length < 1000);
  if (!all.length) list.append(h("p", { class: "muted", id: "inbox-empty" }, "Nothing waits for a decision."));
  for (const a of all) list.append(card(a, running));
  return () => { for (const c of running) c.abort(); };
}

function card(a, running) {
  const isQuestion = a.kind === "APPROVAL_KIND_QUESTION";
  const note = h("textarea", { rows: 2, class: "note", placeholder: "a note for the model and the record", "aria-label": "note" });
  // A question (R88) is answered with text, which becomes the call's result; Decline
  // gives the model an error result "declined" instead.
  const answer = isQuestion ? h("textarea", { rows: 3, class: "answer", placeholder: "your answer", "aria-label": "answer" }) : null;
  const approve = h("button", { type: "button", class: "approve" }, isQuestion ? "Answer" : "Approve");
  const reject = h("button", { type: "button", class: "reject danger" }, isQuestion ? "Decline" : "Reject");
  const outcome = h("div", { class: "outcome" });
  const el = h("article", { class: `card approval${isQuestion ? " question" : ""}`, dataset: { approval: a.approval_id, session: a.session_id, kind: isQuestion ? "question" : "approval" } },
    h("header", {},
      isQuestion ? [h("span", { class: "badge kind" }, "question"), " "] : null,
      h("strong", { class: "tool" }, a.tool_call.name), " ", h("code", {}, a.tool_call.id),
      " in ", h("a", { href: `#/session/${enc(a.session_id)}` }, a.session_id), ` · step ${a.step}`),
    pathLabel(a.subagent_path) ? h("p", { class: "subagent-path" }, "asked by sub-agent ",
      h("span", { class: "badge subagent-tag" }, pathLabel(a.subagent_path))) : null,
    isQuestion ? h("p", { class: "question-text" }, a.question) : h("pre", { class: "args" }, pretty(a.tool_call.arguments_json)),
    a.remaining && a.remaining.length ? h("p", { class: "muted" }, `then: ${a.remaining.map((c) => c.name).join(", ")}`) : null,
    h("p", { class: "muted" },
      h("span", { class: "age", title: when(a.created_at) }, `waiting ${ago(a.created_at).replace(" ago", "")}`), " · ",
      h("span", { class: "expiry" }, a.expires_at ? `expires ${ago(a.expires_at)} (${when(a.expires_at)})` : "no expiry"),
      " · ", h("code", {}, a.approval_id)),
    answer, note, h("div", { class: "actions" }, approve, reject), outcome);

  async function decide(approved) {
    const text = approved && answer ? answer.value : "";
    const verb = text ? "Answered" : isQuestion && !approved ? "Declined" : approved ? "Approved" : "Rejected";
    approve.disabled = reject.disabled = true;
    note.disabled = true;
    if (answer) answer.disabled = true;
    const events = h("ol", { class: "events" });
    const summary = h("p", { class: "result" }, `${verb}; the run goes on…`);
    replace(outcome, summary, events);
    const controller = new AbortController();
    running.add(controller);
    try {
      const body = { approved, note: note.value, ...(text ? { answer: text } : {}) };
      const failure = await stream(`/approvals/${enc(a.approval_id)}/resolve`, body, (ev) => {
        const tag = subagentTag(ev);
        events.append(h("li", { dataset: { type: ev.type, ...(tag ? { subagent: ev.subagent.path.join("/") } : {}) } },
          tag ? [tag, " "] : null, h("span", { class: "etype" }, ev.type), " ", h("span", { class: "muted" }, describe(ev))));
        if (ev.type === "tool.call") {
          const app = ev.tool_call.executor !== "TOOL_EXECUTOR_DAEMON";
          const call = `${ev.tool_call.call.name} [${ev.tool_call.call.id}]`;
          summary.textContent = `${verb}; waiting for ${app ? "the app" : "the daemon"} to run ${call}…`;
          if (app && !outcome.querySelector("button.leave")) {
            // The way out when no app answers: stop holding the run here; it stops at its
            // next boundary, in progress, and the app's next Resume runs the call.
            const leave = h("button", { type: "button", class: "leave" }, "Leave it to the app");
            leave.addEventListener("click", () => {
              leave.remove();
              summary.textContent = `${verb}; left to the app: session ${a.session_id} stays in progress, and the app's next Resume runs ${call}.`;
              el.classList.add("decided");
              controller.abort();
            });
            summary.after(leave);
          }
        }
        if (ev.type === "tool.result" || ev.type === "run.done") {
          const leave = outcome.querySelector("button.leave");
          if (leave) leave.remove();
        }
        if (ev.type === "run.done") {
          const d = ev.run_done;
          summary.textContent = `${verb}: session ${a.session_id} is ${statusName(d.status)}` +
            (statusName(d.status) === "finished" ? ` (${reasonName(d.finish_reason)})` : "") +
            (d.final_text ? ` — “${d.final_text}”` : "");
          el.classList.add("decided");
        }
      }, controller.signal);
      if (failure) outcome.append(errorBox(failure));
    } catch (err) {
      if (err.name === "AbortError") return;
      replace(outcome, err.reason === "AGENT_DRIFT" ? driftBox(err.metadata, true) : null, errorBox(err));
      approve.disabled = reject.disabled = note.disabled = err.reason === "APPROVAL_NOT_FOUND";
      if (answer) answer.disabled = note.disabled;
    } finally {
      running.delete(controller);
    }
  }
  approve.addEventListener("click", () => decide(true));
  reject.addEventListener("click", () => decide(false));
  return el;
}
