// R77 in the TypeScript client, against a real daemon (child process, scripted provider,
// SQLite): a client leaves while its `pay` call is handed out; a fresh client resumes with
// a reconcile function and answers the daemon's tool.reconcile (DONE: the tool is not run
// again; NOT_STARTED and UNKNOWN: it runs with ctx.attempt 2 and ctx.reconciled saying why).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Done, LuoshoClient, NOT_STARTED, UNKNOWN, type Agent, type ReconcileAnswer, type ReconcileCall, type ReconcileFunction, type ToolContext } from "@luosho/client";
import { startDaemon, type Daemon } from "./daemon.js";

const SCRIPT = [{ tool_calls: [{ name: "pay", arguments: { amount: 5 } }] }, { text: "paid" }];
const payAgent = (reconcile = false): Agent => ({ model: "scripted:pay", tools: [{ name: "pay", reconcile }], modelSettings: { script: SCRIPT } });

describe("R77: attempt and tool.reconcile (a real daemon)", () => {
  let daemon: Daemon;
  before(async () => {
    daemon = await startDaemon();
  });
  after(async () => daemon?.stop());

  /** Execute until `pay` is handed out (its tool never answers), then leave. */
  async function leaveAtTheToolCall(sessionId: string, agent: Agent, reconcile?: Record<string, ReconcileFunction>): Promise<void> {
    const client = new LuoshoClient(daemon.address);
    const firstCtx: ToolContext[] = [];
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    try {
      const run = client.execute(sessionId, "pay 5", {
        agent,
        reconcile,
        tools: { pay: async (_args, ctx) => { firstCtx.push(ctx); started(); return new Promise(() => {}); } },
      });
      for await (const event of run) {
        if (event.type === "tool.call") {
          await running;
          break; // the client goes away while the call is handed out
        }
      }
      assert.deepEqual(firstCtx.map((c) => [c.attempt, c.reconciled, c.mayHaveRun]), [[1, "", false]]);
      const cp = await client.getSession(sessionId);
      assert.deepEqual(cp.attempts, { call_0_0: 1 });
    } finally {
      client.close();
    }
  }

  test("R77: DONE from the reconcile function records the result; the tool does not run again", async () => {
    await leaveAtTheToolCall("ts-done", payAgent(), { pay: () => UNKNOWN });
    const asked: ReconcileCall[] = [];
    let ran = 0;
    const client = new LuoshoClient(daemon.address);
    try {
      const run = client.resume("ts-done", {
        tools: { pay: async () => { ran += 1; return "again"; } },
        reconcile: { pay: async (call) => { asked.push(call); return new Done({ payment: call.toolCallId }); } },
      });
      const result = await run.result();
      assert.equal(result.finishReason, "stop");
      assert.equal(asked.length, 1);
      const [call] = asked;
      assert.deepEqual([call!.sessionId, call!.toolCallId, call!.toolName, call!.arguments, call!.attempt], ["ts-done", "call_0_0", "pay", { amount: 5 }, 1]);
      assert.equal(ran, 0, "DONE: the tool did not run again");
      const types = result.events.map((e) => e.type);
      assert.ok(types.includes("tool.reconcile") && !types.includes("tool.call"), types.join(","));
      const cp = await client.getSession("ts-done");
      const paid = cp.messages.find((m) => m.toolCallId === "call_0_0");
      assert.deepEqual(JSON.parse(paid!.content), { payment: "call_0_0" });
      assert.ok(cp.agent!.tools[0]!.reconcile, "set by the client on the tool given a function");
      assert.deepEqual(cp.toolCalls.map((r) => r.attempts), [1]);
    } finally {
      client.close();
    }
  });

  test("R77: NOT_STARTED and UNKNOWN run the tool again with attempt 2", async () => {
    for (const answer of [NOT_STARTED, UNKNOWN] as const) {
      const sid = `ts-${answer.toLowerCase().replace("_", "-")}`;
      await leaveAtTheToolCall(sid, payAgent(), { pay: () => answer });
      const seen: [number, string, boolean][] = [];
      const client = new LuoshoClient(daemon.address);
      try {
        const result = await client.resume(sid, {
          tools: { pay: async (_args, ctx) => { seen.push([ctx.attempt, ctx.reconciled, ctx.mayHaveRun]); return "paid now"; } },
          reconcile: { pay: (): ReconcileAnswer => answer },
        }).result();
        assert.equal(result.finishReason, "stop");
        assert.deepEqual(seen, [[2, answer, answer === UNKNOWN]], answer);
        const cp = await client.getSession(sid);
        assert.deepEqual(cp.toolCalls.map((r) => r.attempts), [2]);
      } finally {
        client.close();
      }
    }
  });

  test("R77: a reconcile function that throws, and a flagged tool without one, answer UNKNOWN at once", async () => {
    await leaveAtTheToolCall("ts-throws", payAgent(true));
    await leaveAtTheToolCall("ts-none", payAgent(true));
    const client = new LuoshoClient(daemon.address);
    try {
      const began = Date.now();
      for (const [sid, reconcile] of [
        ["ts-throws", { pay: () => { throw new Error("the provider is down"); } }],
        ["ts-none", undefined],
      ] as const) {
        const seen: string[] = [];
        const result = await client.resume(sid, {
          tools: { pay: async (_args, ctx) => { seen.push(ctx.reconciled); return "checked by key"; } },
          reconcile,
        }).result();
        assert.equal(result.finishReason, "stop");
        assert.deepEqual(seen, ["UNKNOWN"], sid);
      }
      assert.ok(Date.now() - began < 10_000, "not the tool timeout");
    } finally {
      client.close();
    }
  });
});
