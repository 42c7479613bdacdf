// The console: a hash router over five views and the sign-in form.
import { ApiError, token, whenUnauthenticated } from "./api.js";
import { h, replace } from "./dom.js";
import { sessionsView } from "./sessions.js";
import { sessionView } from "./session.js";
import { approvalsView } from "./approvals.js";
import { compareView } from "./compare.js";
import { schedulesView } from "./schedules.js";

const view = document.getElementById("view");
const signout = document.getElementById("signout");
let cleanup = null;

function route() {
  const [path, search] = (location.hash.slice(1) || "/sessions").split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const params = new URLSearchParams(search || "");
  return { name: parts[0] || "sessions", arg: parts[1], params };
}

async function render() {
  if (cleanup) { cleanup(); cleanup = null; }
  signout.hidden = !token.get();
  const r = route();
  for (const a of document.querySelectorAll("[data-nav]")) {
    a.classList.toggle("active", a.dataset.nav === r.name || (r.name === "session" && a.dataset.nav === "sessions"));
  }
  const views = { sessions: sessionsView, session: sessionView, approvals: approvalsView, compare: compareView, schedules: schedulesView };
  const make = views[r.name] || sessionsView;
  replace(view, h("p", { class: "muted" }, "Loading…"));
  try {
    cleanup = (await make(view, r)) || null;
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return; // the sign-in form is up
    replace(view, h("div", { class: "error", role: "alert" }, h("strong", {}, err.reason || "error"), " ", err.message));
  }
}

function signIn(err) {
  if (cleanup) { cleanup(); cleanup = null; }
  const input = h("input", { type: "password", id: "token", autocomplete: "current-password", required: true, placeholder: "bearer token" });
  const form = h("form", { class: "card login", id: "login" },
    h("h1", {}, "Sign in"),
    h("p", {}, "This daemon wants a bearer token, one of its auth_tokens. It stays in this tab only (sessionStorage)."),
    err && token.get() ? h("p", { class: "error" }, `${err.reason}: ${err.message}`) : null,
    h("label", { for: "token" }, "Token"), input,
    h("button", { type: "submit" }, "Sign in"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    token.set(input.value.trim());
    render();
  });
  replace(view, form);
  input.focus();
}

whenUnauthenticated(signIn);
signout.addEventListener("click", () => { token.clear(); signIn(null); signout.hidden = true; });
window.addEventListener("hashchange", render);
render();
