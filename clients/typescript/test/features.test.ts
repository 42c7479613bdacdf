// Reasoning, compaction, durable sleep and schedules through the TypeScript client's
// wrappers, against one real daemon (scripted provider, SQLite); each test names its rule.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { CheckpointNotFoundError, InvalidArgumentError, LuoshoClient, NotSleepingError, ScheduleExistsError, ScheduleNotFoundError, SessionSleepingError, pb } from "@luosho/client";
import { call, startDaemon, type Daemon } from "./daemon.js";

let daemon: Daemon;
let client: LuoshoClient;

before(async () => {
  daemon = await startDaemon();
  client = new LuoshoClient(daemon.address);
});

after(async () => {
  client?.close();
  await daemon?.stop();
});

test("R84: agent.reasoning is sent, the streamed reasoning is RunResult.reasoning, the turn keeps its block", async () => {
  const agent = {
    model: "scripted:thinker",
    tools: [{ name: "add" }],
    reasoning: { effort: "high", budgetTokens: 4096 },
    modelSettings: { script: [{ reasoning: ["I need add."], ...call("add", { a: 1, b: 1 }) }, { text: "2" }] },
  };
  const result = await client.execute("ts-r84", "one plus one", { agent, tools: { add: async ({ a, b }: { a: number; b: number }) => a + b } }).result();
  assert.deepEqual([result.finishReason, result.finalText, result.reasoning], ["stop", "2", "I need add."]);
  const checkpoint = await client.getSession("ts-r84");
  assert.deepEqual([checkpoint.agent?.reasoning?.effort, checkpoint.agent?.reasoning?.budgetTokens], ["high", 4096]);
  const blocks = checkpoint.messages.flatMap((m) => m.reasoning.map((b) => JSON.parse(b.rawJson) as unknown));
  assert.deepEqual(blocks, [{ type: "thinking", thinking: "I need add." }]);
});

test("R85: the model of agent.compaction writes the summary of compact(), after a prune by hand", async () => {
  const summary = "Two pages were fetched and read.";
  const fetchTurn = (page: number, text: string) => ({ text, ...call("fetch", { page }) });
  const agent = {
    model: "scripted:pages",
    instructions: "You read pages.",
    tools: [{ name: "fetch" }],
    // A window so large that nothing compacts by itself.
    modelSettings: { context_window: 1_000_000, script: [fetchTurn(1, "a".repeat(300)), fetchTurn(2, "b".repeat(300)), { text: "Both pages read." }] },
    compaction: { threshold: 0.5, protectTokens: 100, model: "scripted:sum", modelSettings: { script: [{ text: summary }] } },
  };
  const tools = { fetch: async (args: unknown) => ({ args, body: "r".repeat(1500) }) };
  assert.equal((await client.execute("ts-r85", "Read pages 1 and 2.", { agent, tools }).result()).finishReason, "stop");
  const pruned = await client.compact("ts-r85", { strategy: "prune" });
  assert.ok(pruned.compacted);
  assert.ok(pruned.checkpoint!.compaction!.prunedBefore > 0);
  assert.equal(pruned.checkpoint!.compaction!.summary, "");
  const both = await client.compact("ts-r85");
  assert.deepEqual([both.compacted, both.checkpoint!.compaction!.summary, both.checkpoint!.compaction!.count], [true, summary, 2]);
  await assert.rejects(client.compact("ts-r85-nobody", { strategy: "prune" }), CheckpointNotFoundError);
  await assert.rejects(client.compact("ts-r85", { strategy: "squash" as "prune" }), TypeError);
});

test("R86: a sleeping session is listed with its wake time, refused by resume, woken with wake", async () => {
  const agent = { model: "scripted:sleeper", sleepTool: true, modelSettings: { script: [call("sleep", { seconds: 3600 }), { text: "woke" }] } };
  const before = Date.now();
  const slept = await client.execute("ts-r86", "nap", { agent }).result();
  assert.deepEqual([slept.finishReason, slept.status], ["sleeping", "sleeping"]);
  const sleeping: pb.SessionSummary[] = [];
  for await (const s of client.listSessions("sleeping")) sleeping.push(s);
  assert.deepEqual(sleeping.map((s) => s.sessionId), ["ts-r86"]);
  const wakeAt = sleeping[0]!.wakeAt!.getTime();
  assert.ok(wakeAt >= before + 3_599_000 && wakeAt <= Date.now() + 3_601_000, `wake at ${sleeping[0]!.wakeAt!.toISOString()}`);

  const refused = await client.resume("ts-r86").result().catch((e: unknown) => e);
  assert.ok(refused instanceof SessionSleepingError, String(refused));
  assert.ok(Math.abs(refused.wakeAt!.getTime() - wakeAt) < 1, `${refused.wakeAt?.toISOString()}`);

  const woken = await client.resume("ts-r86", { wake: true }).result();
  assert.deepEqual([woken.finishReason, woken.finalText], ["stop", "woke"]);
  const checkpoint = await client.getSession("ts-r86");
  const result = checkpoint.messages.find((m) => m.role === pb.Role.ROLE_TOOL && m.toolName === "sleep");
  assert.equal((JSON.parse(result!.content) as { woken: string }).woken, "resume");
  assert.equal(checkpoint.wakeAt, undefined);
  await assert.rejects(client.resume("ts-r86", { wake: true }).result(), NotSleepingError);
});

test("R87: a schedule created, paused, resumed, triggered (its run finishes) and deleted", async () => {
  const agent = { model: "scripted:tick", modelSettings: { script: [{ text: "tock" }] } };
  const options = { cron: "0 0 1 1 *", timeZone: "Europe/Berlin", session: "one" as const };
  const created = await client.createSchedule("ts-yearly", agent, "tick?", options);
  assert.deepEqual([created.spec?.cron?.expression, created.spec?.cron?.timeZone, created.spec?.session, created.paused], ["0 0 1 1 *", "Europe/Berlin", pb.ScheduleSession.SCHEDULE_SESSION_ONE, false]);
  assert.ok(created.nextFire);
  await assert.rejects(client.createSchedule("ts-yearly", agent, "tick?", options), ScheduleExistsError);
  await assert.rejects(client.createSchedule("ts-bad", agent, "tick?", { intervalMs: 1 }), InvalidArgumentError);
  await assert.rejects(client.createSchedule("ts-bad", agent, "tick?", { intervalMs: 60_000, cron: "0 * * * *" }), TypeError);

  const paused = await client.pauseSchedule("ts-yearly");
  assert.deepEqual([paused.paused, paused.nextFire], [true, undefined]);
  const resumed = await client.resumeSchedule("ts-yearly");
  assert.equal(resumed.paused, false);
  assert.ok(resumed.nextFire);

  const fire = await client.triggerSchedule("ts-yearly");
  assert.equal(fire.sessionId, "schedule:ts-yearly");
  assert.ok(fire.requestId);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const checkpoint = await client.getSession(fire.sessionId).catch((e: unknown) => {
      if (e instanceof CheckpointNotFoundError) return undefined;
      throw e;
    });
    if (checkpoint?.status === pb.CheckpointStatus.CHECKPOINT_STATUS_FINISHED) {
      assert.equal(checkpoint.messages.at(-1)?.content, "tock");
      break;
    }
    assert.ok(Date.now() < deadline, "the triggered fire did not finish");
    await new Promise((r) => setTimeout(r, 50));
  }
  const got = await client.getSchedule("ts-yearly");
  assert.deepEqual([got.fired, got.lastSessionId], [1, fire.sessionId]);

  await client.deleteSchedule("ts-yearly");
  assert.deepEqual(await client.listSchedules(), []);
  await assert.rejects(client.deleteSchedule("ts-yearly"), ScheduleNotFoundError);
  await assert.rejects(client.getSchedule("ts-yearly"), ScheduleNotFoundError);
});
