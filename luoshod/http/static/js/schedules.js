// The schedules (R87): each with when it fires, its next and last fire and its counts;
// pause, resume and trigger (fire once now), the fire's session linked.
import { del, enc, get, post } from "./api.js";
import { ago, errorBox, h, replace, when } from "./dom.js";

function timing(s) {
  const spec = s.spec;
  if (spec.cron) return `${spec.cron.expression} (${spec.cron.time_zone || "UTC"})`;
  return `every ${Number(spec.interval_ms) / 1000} s`;
}

function short(value, prefix) {
  return (value || "").replace(prefix, "").toLowerCase().replace("_", "-");
}

export async function schedulesView(root) {
  const body = h("tbody", {});
  const notice = h("div", { class: "outcome", id: "schedules-outcome" });
  replace(root, h("h1", {}, "Schedules"),
    h("p", { class: "muted" }, "Runs the daemon starts at set times. Pausing stops the fires until resumed; Trigger fires once now."),
    notice,
    h("div", { class: "table-wrap" }, h("table", { class: "grid schedules", id: "schedules" },
      h("thead", {}, h("tr", {}, ...["Schedule", "When", "State", "Next fire", "Last fire", "Fired", "Skipped", ""].map((t) => h("th", {}, t)))),
      body)));

  async function load() {
    const { schedules = [] } = await get("/schedules");
    replace(body);
    if (!schedules.length) body.append(h("tr", {}, h("td", { colspan: 8, class: "muted", id: "schedules-empty" }, "No schedules.")));
    for (const s of schedules) body.append(row(s));
  }

  function act(label, cls, run) {
    const b = h("button", { type: "button", class: cls }, label);
    b.addEventListener("click", async () => {
      b.disabled = true;
      try {
        replace(notice, await run());
        await load();
      } catch (err) {
        replace(notice, errorBox(err));
        b.disabled = false;
      }
    });
    return b;
  }

  function row(s) {
    const name = s.spec.name;
    const path = `/schedules/${enc(name)}`;
    return h("tr", { dataset: { schedule: name, paused: s.paused ? "true" : "false" } },
      h("td", {}, h("strong", {}, name), h("div", { class: "muted" },
        `${short(s.spec.session, "SCHEDULE_SESSION_")} · overlap ${short(s.spec.overlap, "SCHEDULE_OVERLAP_")} · catch-up ${short(s.spec.catch_up, "SCHEDULE_CATCH_UP_")}`)),
      h("td", {}, h("code", {}, timing(s))),
      h("td", {}, h("span", { class: `badge ${s.paused ? "paused" : "active"}` }, s.paused ? "paused" : "active")),
      h("td", { title: s.next_fire ? when(s.next_fire) : "" }, s.next_fire ? ago(s.next_fire) : "–"),
      h("td", {}, s.last_fire
        ? [ago(s.last_fire), " ", h("a", { href: `#/session/${enc(s.last_session_id)}` }, s.last_session_id)]
        : "–"),
      h("td", { class: "fired" }, String(s.fired || 0)),
      h("td", { class: "skipped" }, String(s.skipped || 0)),
      h("td", { class: "actions" },
        s.paused
          ? act("Resume", "resume", async () => { await post(`${path}/resume`); return h("p", {}, `Resumed ${name}.`); })
          : act("Pause", "pause", async () => { await post(`${path}/pause`); return h("p", {}, `Paused ${name}.`); }),
        act("Trigger", "trigger", async () => {
          const fired = await post(`${path}/trigger`);
          return h("p", { class: "result" }, `Fired ${name}: `, h("a", { href: `#/session/${enc(fired.session_id)}` }, fired.session_id));
        }),
        act("Delete", "danger delete", async () => {
          if (!confirm(`Delete schedule ${name}? Runs it started go on.`)) throw new Error("not deleted");
          await del(path);
          return h("p", {}, `Deleted ${name}.`);
        })));
  }

  await load();
  const timer = setInterval(() => { load().catch(() => {}); }, 5000);
  return () => clearInterval(timer);
}
