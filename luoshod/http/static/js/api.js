// The JSON API of this daemon: the token (kept in this tab's sessionStorage, sent as a
// header, never in a URL), the CSRF token (the luoshod_csrf cookie, echoed in a header),
// JSON calls, streamed runs (NDJSON) and the session's events (Server-Sent Events read
// with fetch, so that the token travels as a header; resumed with Last-Event-ID).

const TOKEN_KEY = "luoshod.token";
const API = "/api/v1";

export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.message ? body.message : `HTTP ${status}`);
    this.status = status;
    this.code = body && body.code || "UNKNOWN";
    this.reason = body && body.reason || "";
    this.metadata = body && body.metadata || {};
  }
}

export const token = {
  get: () => sessionStorage.getItem(TOKEN_KEY) || "",
  set: (value) => sessionStorage.setItem(TOKEN_KEY, value),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

function csrf() {
  const found = document.cookie.split("; ").find((c) => c.startsWith("luoshod_csrf="));
  return found ? decodeURIComponent(found.slice("luoshod_csrf=".length)) : "";
}

function headers(extra = {}) {
  const h = { ...extra };
  const t = token.get();
  if (t) h["Authorization"] = `Bearer ${t}`;
  return h;
}

let onUnauthenticated = () => {};
export function whenUnauthenticated(fn) { onUnauthenticated = fn; }

function url(path, query) {
  const u = new URL(API + path, location.origin);
  for (const [k, v] of Object.entries(query || {})) {
    if (v !== undefined && v !== null && v !== "") u.searchParams.set(k, String(v));
  }
  return u.pathname + u.search;
}

async function fail(response) {
  let body = null;
  try { body = await response.json(); } catch { body = null; }
  const err = new ApiError(response.status, body);
  if (response.status === 401) onUnauthenticated(err);
  throw err;
}

export async function call(method, path, { query, body, signal } = {}) {
  const init = { method, headers: headers(), signal, credentials: "same-origin" };
  if (method !== "GET") {
    init.headers["X-CSRF-Token"] = csrf();
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body || {});
  }
  const response = await fetch(url(path, query), init);
  if (!response.ok) await fail(response);
  return response.json();
}

export const get = (path, query, signal) => call("GET", path, { query, signal });
export const post = (path, body, signal) => call("POST", path, { body, signal });
export const del = (path, query) => call("DELETE", path, { query });
export const enc = encodeURIComponent;

// A streamed RPC (Resume, Resolve): onEvent for each event as it arrives. Resolves with
// the error line's content when the run failed after it started, else null.
export async function stream(path, body, onEvent, signal) {
  const response = await fetch(url(path), {
    method: "POST",
    headers: headers({ "Content-Type": "application/json", "X-CSRF-Token": csrf() }),
    body: JSON.stringify(body || {}),
    signal,
    credentials: "same-origin",
  });
  if (!response.ok) await fail(response);
  let failure = null;
  await lines(response, (line) => {
    if (!line.trim()) return;
    const item = JSON.parse(line);
    if (item.event) onEvent(item.event);
    if (item.error) failure = new ApiError(400, item.error);
  });
  return failure;
}

async function lines(response, onLine, separator = "\n") {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let at;
    while ((at = buffer.indexOf(separator)) >= 0) {
      onLine(buffer.slice(0, at));
      buffer = buffer.slice(at + separator.length);
    }
  }
  if (buffer) onLine(buffer);
}

// Follows a session's events: replay from the start, then live. Reconnects after a
// dropped connection with Last-Event-ID = the last seq seen, as EventSource does.
export function watch(sessionId, { onEvent, onState, follow = true }) {
  const controller = new AbortController();
  let last = 0;
  let stopped = false;
  (async () => {
    while (!stopped) {
      try {
        onState && onState("live");
        const h = headers({ Accept: "text/event-stream" });
        if (last) h["Last-Event-ID"] = String(last);
        const response = await fetch(url(`/sessions/${enc(sessionId)}/events`, { follow }), {
          headers: h, signal: controller.signal, credentials: "same-origin",
        });
        if (!response.ok) await fail(response);
        let ended = false;
        await lines(response, (frame) => {
          const f = {};
          for (const line of frame.split("\n")) {
            if (!line || line.startsWith(":")) continue;
            const i = line.indexOf(":");
            const key = i < 0 ? line : line.slice(0, i);
            const value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
            f[key] = f[key] === undefined ? value : f[key] + "\n" + value;
          }
          if (f.id) last = Number(f.id);
          if (f.event === "end") { ended = true; return; }
          if (f.event === "error") { ended = true; onState && onState("error", JSON.parse(f.data)); return; }
          if (f.data) onEvent(JSON.parse(f.data));
        }, "\n\n");
        if (ended || !follow) { onState && onState("ended"); return; }
      } catch (err) {
        if (stopped || err.name === "AbortError") return;
        onState && onState("error", err);
        if (err instanceof ApiError && err.status < 500) return;
      }
      await new Promise((r) => setTimeout(r, 2000));
    }
  })();
  return () => { stopped = true; controller.abort(); };
}
