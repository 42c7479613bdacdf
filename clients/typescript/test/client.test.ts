// The TypeScript client against a real daemon (child process, scripted provider, SQLite).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, test } from "node:test";
import {
  ApprovalNotFoundError,
  CheckpointNotFoundError,
  InvalidArgumentError,
  LuoshoClient,
  SessionAwaitingApprovalError,
  SessionBusyError,
  pb,
  type Event,
} from "@luosho/client";
import { PACKAGE_DIR, REPO_ROOT, call, scripted, startDaemon, type Daemon } from "./daemon.js";

let daemon: Daemon;
let client: LuoshoClient;

before(async () => {
  daemon = await startDaemon("--scripts-dir", join(REPO_ROOT, "examples", "scripts"));
  client = new LuoshoClient(daemon.address);
});

after(async () => {
  client?.close();
  await daemon?.stop();
});

function node(args: string[]) {
  return spawn(process.execPath, args, { cwd: PACKAGE_DIR, stdio: ["ignore", "pipe", "pipe"] });
}

async function output(proc: ReturnType<typeof node>): Promise<string> {
  let out = "";
  let err = "";
  proc.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  proc.stderr!.on("data", (c: Buffer) => (err += c.toString()));
  const code = await new Promise<number | null>((resolve) => proc.once("exit", resolve));
  assert.equal(code, 0, `exit ${code}: ${out}\n${err}`);
  return out;
}

describe("runs", () => {
  test("a multi-step run with a client tool", async () => {
    const agent = scripted("multi", [call("add", { a: 1, b: 2 }), call("add", { a: 3, b: 4 }), { text: "done" }]);
    const seen: string[] = [];
    const contexts: string[] = [];
    const run = client.execute("ts-multi", "add things", {
      agent,
      tools: {
        add: async ({ a, b }: { a: number; b: number }, ctx) => {
          contexts.push(`${ctx.sessionId}/${ctx.toolName}/${ctx.step}`);
          await new Promise((r) => setTimeout(r, 5));
          return a + b;
        },
      },
    });
    for await (const event of run) seen.push(event.type);
    const result = await run.result();
    assert.equal(result.finishReason, "stop");
    assert.equal(result.status, "finished");
    assert.equal(result.finalText, "done");
    assert.equal(result.stepIndex, 3);
    assert.deepEqual(contexts, ["ts-multi/add/1", "ts-multi/add/2"]);
    assert.equal(seen[0], "run.start");
    assert.equal(seen.at(-1), "run.done");
    assert.equal(seen.filter((t) => t === "tool.call").length, 2);
    const results = result.events.filter((e) => e.toolResult).map((e) => e.toolResult!.resultJson);
    assert.deepEqual(results, ["3", "7"]);

    const checkpoint = await client.getSession("ts-multi");
    assert.equal(checkpoint.status, pb.CheckpointStatus.CHECKPOINT_STATUS_FINISHED);
    const tool = checkpoint.messages.filter((m) => m.role === pb.Role.ROLE_TOOL).map((m) => m.content);
    assert.deepEqual(tool, ["3", "7"]);

    // history, fork, compare and watch on the finished session
    const entries = [];
    for await (const entry of client.history("ts-multi")) entries.push(entry);
    assert.ok(entries.length >= 3);
    assert.ok(entries[0]!.step >= entries.at(-1)!.step, "newest first");
    const fork = await client.fork("ts-multi", 1, { newSessionId: "ts-multi-fork" });
    assert.equal(fork.sessionId, "ts-multi-fork");
    const forked = await client.resume("ts-multi-fork", { tools: { add: async ({ a, b }) => a + b + 1000 } }).result();
    assert.equal(forked.finishReason, "stop");
    const comparison = await client.compare("ts-multi", "ts-multi-fork");
    assert.ok(comparison.a.length > 0 && comparison.b.length > 0);
    const replay: Event[] = [];
    const watch = client.watch("ts-multi");
    for await (const event of watch) replay.push(event);
    assert.deepEqual(replay.map((e) => e.type), seen);
    assert.equal(watch.lastSeq, replay.at(-1)!.seq);
    const sessions = [];
    for await (const s of client.listSessions("finished")) sessions.push(s.sessionId);
    assert.ok(sessions.includes("ts-multi") && sessions.includes("ts-multi-fork"));
  });

  test("a tool that throws becomes an error result the model reads", async () => {
    const agent = scripted("throws", [call("add", { a: 1 }), call("nope", {}), { text: "ok" }], [{ name: "add" }, { name: "nope" }]);
    const result = await client
      .execute("ts-throws", "go", { agent, tools: { add: async () => { throw new RangeError("too big"); } } })
      .result();
    const errors = result.events.filter((e) => e.toolResult).map((e) => [e.toolResult!.isError, JSON.parse(e.toolResult!.resultJson).error]);
    assert.deepEqual(errors, [[true, "RangeError: too big"], [true, 'UnknownToolError: no tool named "nope" was given to the client']]);
    assert.equal(result.finishReason, "stop");
  });
});

describe("crash", () => {
  test("a client killed while holding a tool call; a fresh client process resumes", async () => {
    const agent = scripted("crash", [call("add", { a: 1 }), call("add", { a: 2 }), { text: "resumed and done" }]);
    const child = node(["dist-test/test/crash_client.js", "run", daemon.address, "ts-crash", JSON.stringify(agent), "2"]);
    let stderr = "";
    child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
    const lines: string[] = [];
    const held = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on("line", (line) => {
        lines.push(line);
        if (line.startsWith("IN_TOOL ")) resolve(line.split(" ")[1]!);
      });
      child.once("exit", (code) => reject(new Error(`crash client exited early (${code}): ${lines.join("\n")} ${stderr}`)));
    });
    assert.equal(lines.filter((l) => l.startsWith("ANSWERED")).length, 1);
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;

    const before = await client.getSession("ts-crash");
    assert.equal(before.status, pb.CheckpointStatus.CHECKPOINT_STATUS_IN_PROGRESS);
    const pending = before.toolCalls.find((r) => r.call?.id === held);
    assert.ok(pending && pending.resultJson === undefined, "the held call has no result");

    const out = await output(node(["dist-test/test/crash_client.js", "resume", daemon.address, "ts-crash"]));
    assert.match(out, new RegExp(`ANSWERED ${held}`), "the fresh process ran the same call id");
    const result = JSON.parse(out.split("\n").find((l) => l.startsWith("RESULT "))!.slice("RESULT ".length));
    assert.deepEqual(result, { finishReason: "stop", finalText: "resumed and done", ran: true });

    const checkpoint = await client.getSession("ts-crash");
    assert.equal(checkpoint.status, pb.CheckpointStatus.CHECKPOINT_STATUS_FINISHED);
    const toolMessages = checkpoint.messages.filter((m) => m.role === pb.Role.ROLE_TOOL);
    assert.equal(toolMessages.length, 2, "exactly one result per call");
    assert.deepEqual(toolMessages.map((m) => JSON.parse(m.content).by), ["run", "resume"]);
  });
});

describe("approvals", () => {
  test("a run paused on an approval, refused while paused, then resolved", async () => {
    const agent = scripted("approve", [call("transfer", { amount: 5 }), { text: "sent" }], [{ name: "transfer", needsApproval: true }]);
    let transfers = 0;
    const tools = { transfer: async ({ amount }: { amount: number }) => ({ sent: amount, n: ++transfers }) };
    const paused = await client.execute("ts-approve", "send 5", { agent, tools }).result();
    assert.equal(paused.finishReason, "awaiting_approval");
    assert.equal(paused.status, "awaiting_approval");
    assert.ok(paused.approvalId);
    assert.equal(paused.approval?.toolCall?.name, "transfer");
    assert.ok(paused.events.some((e) => e.type === "approval.requested"));
    assert.equal(transfers, 0);

    const pending = [];
    for await (const a of client.listApprovals("ts-approve")) pending.push(a.approvalId);
    assert.deepEqual(pending, [paused.approvalId]);

    await assert.rejects(client.execute("ts-approve", "again", { agent, tools }).result(), (error: unknown) => {
      assert.ok(error instanceof SessionAwaitingApprovalError);
      assert.equal(error.reason, "SESSION_AWAITING_APPROVAL");
      assert.equal(error.approvalId, paused.approvalId);
      return true;
    });

    const resolved = await client.resolve(paused.approvalId, true, { tools }).result();
    assert.equal(resolved.sessionId, "ts-approve");
    assert.equal(resolved.finishReason, "stop");
    assert.equal(resolved.finalText, "sent");
    assert.equal(transfers, 1);

    await assert.rejects(client.resolve(paused.approvalId, true, { tools }).result(), ApprovalNotFoundError);
  });
});

describe("errors", () => {
  test("SESSION_BUSY while another run holds the session", async () => {
    const agent = scripted("busy", [call("add", { a: 1 }), { text: "done" }]);
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inTool = new Promise<void>((r) => (entered = r));
    const first = client.execute("ts-busy", "go", {
      agent,
      tools: { add: async () => { entered(); await released; return 1; } },
    });
    const firstResult = first.result();
    await inTool;
    await assert.rejects(client.execute("ts-busy", "go", { agent }).result(), (error: unknown) => {
      assert.ok(error instanceof SessionBusyError, String(error));
      assert.equal(error.reason, "SESSION_BUSY");
      assert.equal(error.code, 10); // ABORTED
      return true;
    });
    release();
    assert.equal((await firstResult).finishReason, "stop");
  });

  test("other typed errors", async () => {
    await assert.rejects(client.getSession("ts-missing"), CheckpointNotFoundError);
    await assert.rejects(client.execute("bad id!", "x", { agent: scripted("x", [{ text: "x" }]) }).result(), (error: unknown) => {
      assert.ok(error instanceof InvalidArgumentError);
      assert.equal(error.reason, "INVALID_SESSION_ID");
      return true;
    });
  });
});

// R53: a tool result sent as input that answers no open call is an InvalidArgumentError
// (INVALID_MESSAGE, its index and call id in the metadata), not retried, nothing saved. The
// client sends tool messages only when the caller's input holds them: its run loop answers
// tool.call events with SubmitToolResult, and a retry sends the caller's request again.
describe("R53", () => {
  function refused(index: string, callId: string) {
    return (error: unknown) => {
      assert.ok(error instanceof InvalidArgumentError, String(error));
      assert.equal(error.reason, "INVALID_MESSAGE");
      assert.equal(error.metadata.index, index);
      assert.equal(error.metadata.tool_call_id, callId);
      return true;
    };
  }

  test("an orphan tool result in a new session", async () => {
    const agent = scripted("r53", [{ text: "done" }]);
    const run = client.execute("ts-r53-new", [
      { role: "user", content: "Read gauge G-1" },
      { role: "tool", toolCallId: "call_x_9", toolName: "add", content: '{"bar": 1}' },
    ], { agent });
    const seen: string[] = [];
    await assert.rejects((async () => { for await (const e of run) seen.push(e.type); })(), refused("1", "call_x_9"));
    assert.deepEqual(seen, []);
    await assert.rejects(client.getSession("ts-r53-new"), CheckpointNotFoundError);
  });

  test("a second result after a finished run", async () => {
    const agent = scripted("r53", [call("add", { a: 1, b: 2 }), { text: "done" }]);
    const tools = { add: async ({ a, b }: { a: number; b: number }) => a + b };
    assert.equal((await client.execute("ts-r53-done", "add", { agent, tools }).result()).finishReason, "stop");
    const before = await client.getSession("ts-r53-done");
    await assert.rejects(
      client.execute("ts-r53-done", { role: "tool", toolCallId: "call_0_0", toolName: "add", content: '{"bar": 9}' },
        { agent, tools }).result(),
      refused("0", "call_0_0"),
    );
    const after = await client.getSession("ts-r53-done");
    assert.equal(after.version, before.version);
    assert.equal(after.messages.length, before.messages.length);
  });
});

describe("README", () => {
  test("the README's example is examples/quickstart.ts, and it runs", async () => {
    const readme = readFileSync(join(PACKAGE_DIR, "README.md"), "utf8");
    const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    const example = readFileSync(join(PACKAGE_DIR, "examples", "quickstart.ts"), "utf8");
    assert.ok(block && example.endsWith(block), "README's ts block is the end of examples/quickstart.ts");
    const out = await output(node(["dist-test/examples/quickstart.js", daemon.address, "ts-readme"]));
    assert.match(out, /tool\.call/);
    assert.match(out.trim(), /stop - Lisbon is sunny today, and 100 EUR is about 108 USD\. Enjoy the trip!$/);
  });
});

describe("busy sessions (R68, R69)", () => {
  test("ifBusy enqueue queues an input, queue() lists it, dequeueInput() removes one", async () => {
    const agent = scripted("busy", [call("wait", {}), { text: "first" }, { text: "second" }], [{ name: "wait" }]);
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const waiting = new Promise<void>((r) => (started = r));
    const first = client.execute("ts-q", "one", {
      agent,
      tools: { wait: async () => { started(); await released; return "done"; } },
    }).result();
    await waiting;
    assert.throws(() => client.execute("ts-q", "x", { agent, ifBusy: "sometimes" as never }), TypeError);
    const second = client.execute("ts-q", "two", { agent, ifBusy: "enqueue", requestId: "two" }).result();
    await until(async () => (await client.queue("ts-q")).length === 1);
    const third = client.execute("ts-q", "three", { agent, ifBusy: "enqueue", requestId: "three" }).result();
    await until(async () => (await client.queue("ts-q")).length === 2);
    assert.deepEqual((await client.queue("ts-q")).map((q) => q.requestId), ["two", "three"]);
    assert.equal(await client.dequeueInput("ts-q", "three"), true);
    assert.equal(await client.dequeueInput("ts-q", "three"), false);
    await assert.rejects(third, (e: { reason?: string }) => e.reason === "INPUT_DEQUEUED");
    release();
    assert.equal((await first).finalText, "first");
    const queued = await second;
    assert.equal(queued.finalText, "second");
    assert.equal(queued.events[0].type, "input.queued");
    const cp = await client.getSession("ts-q");
    assert.deepEqual(cp.messages.filter((m) => m.role === pb.Role.ROLE_USER).map((m) => m.content), ["one", "two"]);
  });
});

async function until(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, "timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("structured output (R83)", () => {
  const schema = {
    type: "object",
    properties: { city: { type: "string" }, population: { type: "integer" } },
    required: ["city", "population"],
  };

  test("the answer comes back parsed after one repair turn", async () => {
    const agent = { ...scripted("structured", [{ text: '{"city": "Paris"}' }, { text: '{"population": 2, "city": "Paris"}' }], []), outputSchema: schema };
    const result = await client.execute("ts-r83-ok", "where?", { agent }).result();
    assert.equal(result.finishReason, "stop");
    assert.equal(result.stepIndex, 2);
    assert.deepEqual(result.output, { city: "Paris", population: 2 });
    assert.equal(result.outputJson, '{"city":"Paris","population":2}');
  });

  test("an answer invalid twice ends output_invalid with its errors", async () => {
    const agent = { ...scripted("structured", [{ text: "Paris" }, { text: '{"city": "Paris"}' }], []), outputSchema: schema };
    const result = await client.execute("ts-r83-bad", "where?", { agent }).result();
    assert.equal(result.finishReason, "output_invalid");
    assert.equal(result.output, undefined);
    assert.deepEqual(result.outputErrors, ["(root): 'population' is a required property"]);
  });
});
