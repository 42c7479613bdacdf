// R75 in the TypeScript client: request ids, retries, and what a retry must not repeat,
// against real daemons (child processes, scripted provider, SQLite), one of them killed -9.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { InterceptingCall, Metadata, Server as GrpcServer, ServerCredentials, status as GrpcStatus, type Interceptor, type ServerWritableStream } from "@grpc/grpc-js";
import {
  InvalidArgumentError,
  LuoshoClient,
  LuoshoError,
  NO_RETRY,
  ProviderError,
  ProviderRejectedError,
  RetryPolicy,
  UnavailableError,
  channelOptions,
  isProgress,
  newRequestId,
  pb,
  type Checkpoint,
  type ClientOptions,
} from "@luosho/client";
import { call, errorTrailers, scripted, startDaemon, startDaemonOn, startDaemonWith, startFakeModel, type Daemon, type FakeModel } from "./daemon.js";

const UUID7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Client options whose interceptor records the request id of every stream opened. */
function recording(ids: string[], options: ClientOptions = {}): ClientOptions {
  const interceptor: Interceptor = (opts, nextCall) =>
    new InterceptingCall(nextCall(opts), {
      sendMessage(message: { requestId?: string }, next) {
        if (message.requestId !== undefined) ids.push(message.requestId);
        next(message);
      },
    });
  return { ...options, grpcOptions: { interceptors: [interceptor] } };
}

function transcript(checkpoint: Checkpoint) {
  const users = checkpoint.messages.filter((m) => m.role === pb.Role.ROLE_USER).map((m) => m.content);
  const calls = checkpoint.messages.flatMap((m) => m.toolCalls.map((c) => c.id));
  const results = checkpoint.messages.filter((m) => m.role === pb.Role.ROLE_TOOL).map((m) => m.toolCallId);
  return { users, calls, results };
}

describe("request ids and the policy", () => {
  test("request ids are UUIDv7s, unique and in time order", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) {
      ids.push(newRequestId());
      if (i === 25) await sleep(2);
    }
    assert.equal(new Set(ids).size, 50);
    for (const id of ids) assert.match(id, UUID7);
    const stamps = ids.map((id) => id.slice(0, 13)); // the millisecond prefix
    assert.deepEqual(stamps, [...stamps].sort());
    assert.ok(stamps[0]! < stamps[49]!, "the time prefix moves");
    const ms = parseInt(ids[0]!.replace(/-/g, "").slice(0, 12), 16);
    assert.ok(Math.abs(ms - Date.now()) < 5_000, "the prefix is the time in ms");
  });

  test("RetryPolicy: checked settings, a growing capped jittered backoff, what retries", () => {
    assert.throws(() => new RetryPolicy({ maxAttempts: 0 }), RangeError);
    assert.throws(() => new RetryPolicy({ multiplier: 0.5 }), RangeError);
    assert.throws(() => new RetryPolicy({ jitter: 2 }), RangeError);
    const exact = new RetryPolicy({ initialBackoffMs: 100, maxBackoffMs: 1000, multiplier: 2, jitter: 0 });
    assert.deepEqual([1, 2, 3, 4, 5, 9].map((n) => exact.backoffMs(n)), [100, 200, 400, 800, 1000, 1000]);
    const jittered = new RetryPolicy();
    const waits = Array.from({ length: 200 }, () => jittered.backoffMs(1));
    assert.ok(waits.every((w) => w >= 80 && w <= 120), "±20% of 100 ms");
    assert.ok(new Set(waits).size > 100, "spread, not one value");

    const unavailable = new UnavailableError(14, "", "gone");
    assert.ok(jittered.shouldRetry(unavailable, 1, 5), "UNAVAILABLE at any point");
    assert.ok(!jittered.shouldRetry(unavailable, 20, 0), "not past maxAttempts");
    const rst = new LuoshoError(13, "", "Received RST_STREAM"); // INTERNAL, no ErrorInfo
    assert.ok(jittered.shouldRetry(rst, 1, 0), "a transport failure before any event");
    assert.ok(!jittered.shouldRetry(rst, 1, 1), "not after an event");
    assert.ok(!jittered.shouldRetry(new Error("not an RPC"), 1, 0));
    assert.ok(!jittered.shouldRetry(new InvalidArgumentError(3, "REQUEST_ID_REUSED", "x"), 1, 0), "an answer of the daemon");
    assert.ok(!NO_RETRY.shouldRetry(unavailable, 1, 0));

    assert.deepEqual(channelOptions(NO_RETRY), {});
    assert.deepEqual(channelOptions(new RetryPolicy({ maxBackoffMs: 5000 })), {
      "grpc.initial_reconnect_backoff_ms": 100,
      "grpc.max_reconnect_backoff_ms": 5000,
    });
  });

  test("UNAVAILABLE is retried with the same request id, maxAttempts times; retry: false tries once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "luoshod-ts-down-"));
    const nowhere = `unix:${dir}/none.sock`;
    const agent = scripted("down", [{ text: "x" }]);
    try {
      const ids: string[] = [];
      const client = new LuoshoClient(nowhere, recording(ids, { retry: { maxAttempts: 3, initialBackoffMs: 0, maxBackoffMs: 0 } }));
      const run = client.execute("ts-down", "hi", { agent });
      await assert.rejects(run.result(), UnavailableError);
      assert.equal(run.attempts, 3);
      assert.match(run.requestId, UUID7);
      assert.deepEqual(ids, [run.requestId, run.requestId, run.requestId]);
      const mine = client.resume("ts-down", { requestId: "mine-1" });
      await assert.rejects(mine.result(), UnavailableError);
      assert.deepEqual(ids.slice(3), ["mine-1", "mine-1", "mine-1"]);
      client.close();

      // close() does not wait out a backoff.
      const slow = new LuoshoClient(nowhere, { retry: { initialBackoffMs: 20_000, maxBackoffMs: 20_000 } });
      const waiting = slow.execute("ts-down", "hi", { agent });
      const outcome = waiting.result().then(() => "finished", (e: unknown) => e);
      await sleep(100);
      const t0 = Date.now();
      await waiting.close();
      assert.ok((await outcome) instanceof UnavailableError);
      assert.ok(Date.now() - t0 < 2_000, "closed at once");
      assert.equal(waiting.attempts, 1);
      slow.close();

      const once: string[] = [];
      const single = new LuoshoClient(nowhere, recording(once, { retry: false }));
      const run1 = single.execute("ts-down", "hi", { agent });
      await assert.rejects(run1.result(), UnavailableError);
      assert.equal(run1.attempts, 1);
      assert.equal(once.length, 1);
      single.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a repeated request id (R74) seen from the client", () => {
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

  test("the ended run is replayed: nothing applied twice, replayed tool.calls not answered", async () => {
    const agent = scripted("again", [call("add", { a: 1 }), { text: "one" }]);
    let ran = 0;
    const tools = { add: async ({ a }: { a: number }) => (ran += 1, a + 1) };
    const requestId = newRequestId();
    const first = await client.execute("ts-again", "add one", { agent, tools, requestId }).result();
    assert.equal(first.finalText, "one");
    assert.equal(first.attempts, 1);
    assert.equal(ran, 1);
    assert.ok(first.events.every((e) => !e.replayed));

    const again = await client.execute("ts-again", "add one", { agent, tools, requestId }).result();
    assert.equal(ran, 1, "the replayed tool.call was not answered");
    assert.equal(again.finalText, "one");
    assert.equal(again.runId, first.runId);
    assert.ok(again.events.length > 0 && again.events.every((e) => e.replayed), "every event replayed");
    assert.deepEqual(again.events.map((e) => e.seq), first.events.filter((e) => e.seq > 0).map((e) => e.seq));
    const t = transcript(await client.getSession("ts-again"));
    assert.deepEqual(t.users, ["add one"]);
    assert.equal(t.results.length, 1);

    const other = client.execute("ts-again", "something else", { agent, tools, requestId });
    await assert.rejects(other.result(), (error: unknown) => {
      assert.ok(error instanceof InvalidArgumentError);
      assert.equal(error.reason, "REQUEST_ID_REUSED");
      return true;
    });
    assert.equal(other.attempts, 1, "an answer of the daemon is not retried");
  });
});

describe("resolve retried with its request id", () => {
  let daemon: Daemon;
  before(async () => (daemon = await startDaemon()));
  after(async () => daemon?.stop());

  test("with the approval's sessionId, a resolve sent again replays its run: the approved tool runs once", async () => {
    const ids: string[] = [];
    const client = new LuoshoClient(daemon.address, recording(ids));
    try {
      const agent = scripted("resolve", [call("pay", { amount: 5 }), { text: "paid" }], [{ name: "pay", needsApproval: true }]);
      let paid = 0;
      const tools = { pay: async ({ amount }: { amount: number }) => ({ paid: amount, n: ++paid }) };
      const paused = await client.execute("ts-resolve", "pay 5", { agent, tools }).result();
      assert.equal(paused.finishReason, "awaiting_approval");
      const requestId = newRequestId();
      const first = await client.resolve(paused.approvalId, true, { tools, requestId, sessionId: "ts-resolve" }).result();
      assert.equal(first.finalText, "paid");
      assert.equal(paid, 1);
      const again = await client.resolve(paused.approvalId, true, { tools, requestId, sessionId: "ts-resolve" }).result();
      assert.equal(again.finalText, "paid");
      assert.equal(again.runId, first.runId);
      assert.ok(again.events.every((e) => e.replayed));
      assert.equal(paid, 1, "the replayed tool.call was not answered");
      assert.deepEqual(ids.slice(-2), [requestId, requestId]);
      assert.deepEqual(transcript(await client.getSession("ts-resolve")).users, ["pay 5"]);
    } finally {
      client.close();
    }
  });
});

/** A TCP proxy in front of the daemon whose replies can be held back and connections cut. */
class Proxy {
  hold = false;
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;

  constructor(private readonly port: number) {
    this.server = createServer((down) => {
      const up = createConnection({ host: "127.0.0.1", port: this.port });
      for (const s of [down, up]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => {});
      }
      down.pipe(up);
      up.on("data", (chunk: Buffer) => {
        if (!this.hold) down.write(chunk);
      });
      up.on("close", () => down.destroy());
      down.on("close", () => up.destroy());
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    assert.ok(address && typeof address === "object");
    return `127.0.0.1:${address.port}`;
  }

  /** Drops every connection (as a network gone away would). */
  cut(): void {
    for (const s of this.sockets) s.destroy();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

describe("retries against a daemon that goes away", () => {
  test("a stream cut after its run ended is retried: the missed events are replayed, the input applied once", async () => {
    const daemon = await startDaemon();
    const proxy = new Proxy(Number(daemon.address.split(":").at(-1)));
    const direct = new LuoshoClient(daemon.address);
    const ids: string[] = [];
    const client = new LuoshoClient(await proxy.listen(), recording(ids, { retry: { initialBackoffMs: 50 } }));
    try {
      const agent = scripted("cut", [{ text: "finished unseen", delay_ms: 300 }]);
      const run = client.execute("ts-cut", "hello", { agent });
      const seen: pb.Event[] = [];
      for await (const event of run) {
        seen.push(event);
        if (seen.length === 1) {
          proxy.hold = true; // the rest of this stream never reaches the client
          for (let i = 0; i < 100; i++) {
            const cp = await direct.getSession("ts-cut").catch(() => undefined);
            if (cp?.status === pb.CheckpointStatus.CHECKPOINT_STATUS_FINISHED) break;
            await sleep(50);
          }
          proxy.hold = false;
          proxy.cut(); // the run ended before the client saw its run.done
        }
      }
      const result = await run.result();
      assert.equal(result.finalText, "finished unseen");
      assert.equal(result.attempts, 2);
      assert.deepEqual(ids, [run.requestId, run.requestId]);
      assert.equal(seen[0]!.type, "run.start");
      assert.ok(!seen[0]!.replayed);
      // What the first stream brought (run.start, maybe step.start) is live; what it missed
      // (the model's turn, 300 ms later, and all after it) comes replayed by the retry.
      const k = seen.findIndex((e) => e.replayed);
      assert.ok(k >= 1, `events: ${JSON.stringify(seen.map((e) => [e.seq, e.type, e.replayed]))}`);
      assert.ok(seen.slice(0, k).every((e) => !e.replayed) && seen.slice(k).every((e) => e.replayed));
      assert.deepEqual(seen.slice(k).filter((e) => e.seq > 0).map((e) => e.type).slice(-3), ["model.turn", "step.done", "run.done"]);
      const seqs = seen.map((e) => e.seq).filter((s) => s > 0);
      assert.deepEqual(seqs, [...new Set(seqs)].sort((a, b) => a - b), "no event delivered twice");
      assert.equal(seen.at(-1)!.type, "run.done");
      assert.deepEqual(transcript(await direct.getSession("ts-cut")).users, ["hello"]);
    } finally {
      client.close();
      direct.close();
      await proxy.close();
      await daemon.stop();
    }
  });

  test("killed -9 and restarted mid-run: the retried execute resumes it, its input applied once, each tool run once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "luoshod-ts-kill-"));
    const listen = `unix:${dir}/luoshod.sock`;
    const args = ["--lease-owner", "ts-kill"];
    let daemon = await startDaemonOn(listen, dir, ...args);
    let restarted: Promise<Daemon> | undefined;
    const restart = async (afterMs: number) => {
      await daemon.kill();
      await sleep(afterMs);
      daemon = await startDaemonOn(listen, dir, ...args);
      return daemon;
    };
    const ids: string[] = [];
    const client = new LuoshoClient(listen, recording(ids));
    try {
      // The scripted model plays the turn numbered by the assistant turns so far: the first
      // input plays the first three, the second the fourth.
      const agent = scripted("kill", [call("add", { a: 1 }), call("add", { a: 2 }), { text: "sum" }, { text: "back" }]);
      const runs = new Map<string, number>();
      const tools = {
        add: async ({ a }: { a: number }, ctx: { toolCallId: string }) => {
          runs.set(ctx.toolCallId, (runs.get(ctx.toolCallId) ?? 0) + 1);
          if (runs.size === 1) {
            restarted = restart(300); // the daemon dies while this call is being answered
            await sleep(50);
          }
          return a + 100;
        },
      };
      const run = client.execute("ts-kill", "go", { agent, tools });
      const result = await run.result();
      await restarted;
      assert.equal(result.finishReason, "stop");
      assert.equal(result.finalText, "sum");
      assert.ok(result.attempts >= 2, `attempts ${result.attempts}`);
      assert.ok(ids.length >= 2 && ids.every((id) => id === run.requestId), "one request id on every attempt");
      assert.equal(runs.size, 2);
      assert.deepEqual([...runs.values()], [1, 1], "each call's tool ran once");
      const seqs = result.events.map((e) => e.seq).filter((s) => s > 0);
      assert.equal(new Set(seqs).size, seqs.length, "no event delivered twice");

      let t = transcript(await client.getSession("ts-kill"));
      assert.deepEqual(t.users, ["go"], "the input applied once");
      assert.deepEqual([...t.results].sort(), [...t.calls].sort(), "every call one result");

      // Down before the request is sent: the retries reach the restarted daemon.
      restarted = restart(500);
      await sleep(20);
      const late = await client.execute("ts-kill", "again", { agent, tools }).result();
      await restarted;
      assert.equal(late.finalText, "back");
      assert.ok(late.attempts >= 2, `attempts ${late.attempts}`);
      t = transcript(await client.getSession("ts-kill"));
      assert.deepEqual(t.users, ["go", "again"]);
    } finally {
      client.close();
      await restarted?.catch(() => undefined);
      await daemon.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });
  test("killed again and again with short windows up: each retry waits for the channel, every input applied once", async () => {
    // Few attempts in a row (5, 50 ms doubling): attempts failing at once while the channel
    // sits in TRANSIENT_FAILURE would use them up in under a second, long before the daemon
    // (away 0.5 s plus its start-up) is back. Each retry waits for READY (at most 2 s).
    const dir = mkdtempSync(join(tmpdir(), "luoshod-ts-ready-"));
    const listen = `unix:${dir}/luoshod.sock`;
    const args = ["--lease-owner", "ts-ready"];
    const kills = 4;
    let daemon = await startDaemonOn(listen, dir, ...args);
    let killed = 0;
    let stopped = false;
    const killer = (async () => {
      let seed = 75;
      while (killed < kills && !stopped) {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        await sleep(300 + (seed % 400)); // up for a short while
        await daemon.kill();
        await sleep(500); // away, then its start-up
        daemon = await startDaemonOn(listen, dir, ...args);
        killed += 1; // counted once back: the inputs go on through every outage
      }
    })();
    const script: unknown[] = [];
    for (let k = 0; k < 40; k++) {
      script.push({ ...call("add", { a: 1 }), delay_ms: 30 }, { ...call("add", { a: 2 }), delay_ms: 30 }, { text: "sum", delay_ms: 30 });
    }
    const agent = scripted("ready", script);
    const client = new LuoshoClient(listen, { retry: { maxAttempts: 5, initialBackoffMs: 50, maxBackoffMs: 2000 } });
    const sent: string[] = [];
    let attempts = 0;
    try {
      for (let k = 0; k < 2 || (killed < kills && k < 40); k++) {
        const input = `input ${k}`;
        const result = await client.execute("ts-ready", input, { agent, tools: { add: async ({ a }: { a: number }) => a } }).result()
          .catch((error: unknown) => assert.fail(`${input} after ${killed} kills: ${String(error)}`));
        assert.equal(result.finalText, "sum");
        sent.push(input);
        attempts += result.attempts;
      }
      await killer;
      assert.ok(attempts > sent.length, `${attempts} attempts for ${sent.length} inputs: the kills broke no stream`);
      const t = transcript(await client.getSession("ts-ready"));
      assert.deepEqual(t.users, sent, "each input once, in order");
      assert.equal(t.calls.length, 2 * sent.length);
      assert.deepEqual([...t.results].sort(), [...t.calls].sort(), "every call one result");
    } finally {
      stopped = true;
      client.close();
      await killer.catch(() => undefined);
      await daemon.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// ---- issue 35: progress-counted retries, retry_after_s, PROVIDER_REJECTED ---------------

type ExecuteCall = ServerWritableStream<pb.ExecuteRequest, pb.ExecuteResponse>;

/** One attempt as the fake daemon saw it: when it arrived, and when it was failed. */
interface Attempt { at: number; failedAt?: number }

/** What a script does with one attempt's stream. */
interface Stream {
  /** Writes an event with the seq given. */
  send(type: string, seq: number, extra?: DeepEvent): void;
  /** Ends the stream with an error the way the daemon does (ErrorInfo in the trailers). */
  fail(code: GrpcStatus, reason: string, metadata: Record<string, string>): void;
  /** Ends the stream with OK. */
  end(): void;
}
type Script = (attempt: number, stream: Stream) => void;

/**
 * An in-process AgentService whose Execute plays a script per session: `script(n, stream)`
 * for the session's n-th attempt (from 1).
 */
class FakeDaemon {
  readonly attempts = new Map<string, Attempt[]>();
  private readonly server = new GrpcServer();
  private readonly scripts = new Map<string, Script>();

  constructor() {
    this.server.addService(pb.AgentServiceService, {
      execute: (call: ExecuteCall) => {
        const sessionId = call.request.sessionId;
        const seen = this.attempts.get(sessionId) ?? [];
        this.attempts.set(sessionId, seen);
        const attempt: Attempt = { at: performance.now() };
        seen.push(attempt);
        const stream: Stream = {
          send(type, seq, extra = {}) {
            call.write(pb.ExecuteResponse.fromPartial({ event: { sessionId, runId: "run-1", seq, type, ...extra } }));
          },
          fail(code, reason, metadata) {
            attempt.failedAt = performance.now();
            const message = `${reason}: the fake says so`;
            call.emit("error", { code, details: message, metadata: errorTrailers(code, message, reason, { session_id: sessionId, ...metadata }) });
          },
          end() {
            call.end();
          },
        };
        const script = this.scripts.get(sessionId);
        if (script) script(seen.length, stream);
        else stream.fail(GrpcStatus.NOT_FOUND, "CHECKPOINT_NOT_FOUND", {});
      },
    });
  }

  play(sessionId: string, script: Script): void {
    this.scripts.set(sessionId, script);
  }

  async listen(): Promise<string> {
    const port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))));
    return `127.0.0.1:${port}`;
  }

  /** The waits between one attempt's failure and the next attempt, in ms. */
  waits(sessionId: string): number[] {
    const seen = this.attempts.get(sessionId) ?? [];
    return seen.slice(1).map((a, i) => a.at - seen[i]!.failedAt!);
  }

  close(): void {
    this.server.forceShutdown();
  }
}

type DeepEvent = pb.DeepPartial<pb.Event>;

/** Ends an attempt as a finished run. */
function finish(send: Stream["send"], end: Stream["end"], seq: number): void {
  send("run.done", seq, { runDone: { finishReason: pb.FinishReason.FINISH_REASON_STOP, status: pb.CheckpointStatus.CHECKPOINT_STATUS_FINISHED, finalText: "done" } });
  end();
}

/** What a daemon's ErrorInfo says about a provider failure (PROVIDER_ERROR / PROVIDER_REJECTED). */
function providerMeta(status: string, transient: boolean, extra: Record<string, string> = {}): Record<string, string> {
  return {
    provider: "llm",
    model: "test-model",
    status,
    error_type: transient ? "overloaded_error" : "invalid_request_error",
    provider_message: transient ? "Overloaded" : "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`.",
    attempts: "1",
    transient: String(transient),
    ...extra,
  };
}

describe("the progress rule and retry_after_s (an in-process fake daemon)", () => {
  let fake: FakeDaemon;
  let address: string;
  before(async () => {
    fake = new FakeDaemon();
    address = await fake.listen();
  });
  after(() => fake?.close());

  test("RetryPolicy.waitMs is the backoff or retry_after_s, whichever is longer; isProgress", () => {
    const policy = new RetryPolicy({ initialBackoffMs: 100, maxBackoffMs: 1000, jitter: 0 });
    const gone = (meta: Record<string, string>) => new ProviderError(GrpcStatus.UNAVAILABLE, "PROVIDER_ERROR", "x", meta);
    assert.equal(policy.waitMs(gone({}), 1), 100);
    assert.equal(policy.waitMs(gone({ retry_after_s: "0.75" }), 1), 750);
    assert.equal(policy.waitMs(gone({ retry_after_s: "2" }), 4), 2000, "past maxBackoffMs: the daemon said so");
    assert.equal(policy.waitMs(gone({ retry_after_s: "0.05" }), 3), 400, "the backoff when longer");
    assert.equal(policy.waitMs(gone({ retry_after_s: "soon" }), 1), 100, "not a number: ignored");
    assert.equal(policy.waitMs(gone({ retry_after_s: "1e9" }), 1), 2 ** 31 - 1, "at most what setTimeout can wait");
    assert.equal(policy.waitMs(new Error("not an RPC"), 1), 100);
    assert.equal(gone({ retry_after_s: "0.75" }).retryAfterMs, 750);
    assert.equal(gone({}).retryAfterMs, undefined);

    const event = (type: string, replayed = false) => pb.Event.fromPartial({ type, seq: 1, replayed });
    assert.ok(isProgress(event("model.turn")) && isProgress(event("tool.result")));
    assert.ok(isProgress(pb.Event.fromPartial({ type: "tool.result", seq: 9, subagent: { name: "researcher" } })), "a sub-agent's too");
    for (const type of ["run.start", "step.start", "tool.call", "text.delta", "agent.drift", "step.done", "run.done"]) assert.ok(!isProgress(event(type)), type);
    assert.ok(!isProgress(event("model.turn", true)) && !isProgress(event("tool.result", true)), "replayed: history");

    const rejected = new ProviderRejectedError(GrpcStatus.FAILED_PRECONDITION, "PROVIDER_REJECTED", "x", providerMeta("400", false));
    assert.ok(rejected instanceof ProviderError);
    assert.ok(!new RetryPolicy().shouldRetry(rejected, 1, 0), "never retried");
    // Even if it came as UNAVAILABLE: the reason says no retry can fix it.
    assert.ok(!new RetryPolicy().shouldRetry(new ProviderRejectedError(GrpcStatus.UNAVAILABLE, "PROVIDER_REJECTED", "x"), 1, 0));
  });

  test("attempts that bring only run.start/step.start stop after maxAttempts, each retry waiting at least retry_after_s", async () => {
    let seq = 0;
    fake.play("ts-noprogress", (n, { send, fail, end }) => {
      send("run.start", ++seq, { runStart: { mode: pb.RunMode.RUN_MODE_RESUME } });
      send("step.start", ++seq, { stepStart: { step: 1 } });
      if (n > 5) return finish(send, end, ++seq); // a client counting any new event gets this far
      fail(GrpcStatus.UNAVAILABLE, "PROVIDER_ERROR", providerMeta("503", true, { retry_after_s: "0.25" }));
    });
    // The backoff alone would be 10 ms: the waits below are retry_after_s's.
    const client = new LuoshoClient(address, { retry: { maxAttempts: 3, initialBackoffMs: 10, maxBackoffMs: 20, jitter: 0 } });
    try {
      const run = client.execute("ts-noprogress", "go");
      const seen: string[] = [];
      const iterate = (async () => {
        for await (const event of run) seen.push(`${event.seq} ${event.type}`);
      })();
      await assert.rejects(iterate, (error: unknown) => {
        assert.ok(error instanceof ProviderError && !(error instanceof ProviderRejectedError), String(error));
        assert.equal(error.code, GrpcStatus.UNAVAILABLE);
        assert.equal(error.reason, "PROVIDER_ERROR");
        assert.equal(error.httpStatus, "503");
        assert.equal(error.transient, true);
        assert.equal(error.retryAfterMs, 250);
        return true;
      });
      assert.equal(run.attempts, 3);
      assert.equal(fake.attempts.get("ts-noprogress")!.length, 3, "the daemon saw maxAttempts attempts, not one more");
      // Every attempt brought new events (delivered), which did not reset the count.
      assert.deepEqual(seen, ["1 run.start", "2 step.start", "3 run.start", "4 step.start", "5 run.start", "6 step.start"]);
      const waits = fake.waits("ts-noprogress");
      assert.equal(waits.length, 2);
      for (const wait of waits) assert.ok(wait >= 249, `waited ${wait.toFixed(1)} ms, retry_after_s is 250 ms`);
    } finally {
      client.close();
    }
  });

  test("with the default policy the same failure without retry_after_s gives up after 20 attempts", async () => {
    let seq = 0;
    fake.play("ts-default", (n, { send, fail, end }) => {
      send("run.start", ++seq);
      send("step.start", ++seq);
      if (n > 25) return finish(send, end, ++seq);
      fail(GrpcStatus.UNAVAILABLE, "PROVIDER_ERROR", providerMeta("503", true));
    });
    // The default policy with its backoff shortened (the count is what is tested).
    const client = new LuoshoClient(address, { retry: { initialBackoffMs: 1, maxBackoffMs: 5 } });
    try {
      const run = client.execute("ts-default", "go");
      await assert.rejects(run.result(), ProviderError);
      assert.equal(new RetryPolicy().maxAttempts, 20);
      assert.equal(run.attempts, 20);
      assert.equal(fake.attempts.get("ts-default")!.length, 20);
      assert.equal(run.events.length, 40);
    } finally {
      client.close();
    }
  });

  test("a new model.turn or tool.result starts the count again", async () => {
    let seq = 0;
    fake.play("ts-progress", (n, { send, fail, end }) => {
      send("run.start", ++seq);
      send("step.start", ++seq);
      if (n <= 3) send("model.turn", ++seq, { modelTurn: { step: n } });
      else if (n <= 5) send("tool.result", ++seq, { toolResult: { step: n, toolCallId: `c${n}`, toolName: "lookup", resultJson: "{}" } });
      if (n < 6) return fail(GrpcStatus.UNAVAILABLE, "PROVIDER_ERROR", providerMeta("503", true));
      send("step.done", ++seq);
      finish(send, end, ++seq);
    });
    const client = new LuoshoClient(address, { retry: { maxAttempts: 2, initialBackoffMs: 1, maxBackoffMs: 5 } });
    try {
      const result = await client.execute("ts-progress", "go").result();
      assert.equal(result.finalText, "done");
      assert.equal(result.attempts, 6, "5 failed attempts, each with progress, with maxAttempts 2");
    } finally {
      client.close();
    }
  });

  test("a model.turn already delivered, or replayed, is no progress", async () => {
    let seq = 0;
    fake.play("ts-stale", (n, { send, fail, end }) => {
      send("run.start", ++seq);
      if (n === 1) send("model.turn", ++seq, { modelTurn: { step: 1 } }); // seq 2: progress
      if (n === 2) send("model.turn", 2, { modelTurn: { step: 1 } }); // delivered already: skipped
      if (n === 3) send("model.turn", ++seq, { modelTurn: { step: 1 }, replayed: true }); // new, but replayed
      if (n === 4) send("step.start", ++seq);
      if (n < 5) return fail(GrpcStatus.UNAVAILABLE, "PROVIDER_ERROR", providerMeta("503", true));
      finish(send, end, ++seq); // a client counting any new event gets this far
    });
    const client = new LuoshoClient(address, { retry: { maxAttempts: 3, initialBackoffMs: 1, maxBackoffMs: 5 } });
    try {
      const run = client.execute("ts-stale", "go");
      await assert.rejects(run.result(), ProviderError);
      assert.equal(run.attempts, 4, "the first attempt's progress, then 3 attempts without");
      assert.deepEqual(run.events.map((e) => `${e.seq} ${e.type}${e.replayed ? " replayed" : ""}`),
        ["1 run.start", "2 model.turn", "3 run.start", "4 run.start", "5 model.turn replayed", "6 run.start", "7 step.start"]);
    } finally {
      client.close();
    }
  });

  test("PROVIDER_REJECTED is a ProviderRejectedError (a ProviderError) with its metadata, never retried", async () => {
    let seq = 0;
    fake.play("ts-rejected", (_n, { send, fail }) => {
      send("run.start", ++seq);
      send("step.start", ++seq);
      fail(GrpcStatus.FAILED_PRECONDITION, "PROVIDER_REJECTED", providerMeta("400", false));
    });
    const client = new LuoshoClient(address); // the default policy
    try {
      const run = client.execute("ts-rejected", "go");
      await assert.rejects(run.result(), (error: unknown) => {
        assert.ok(error instanceof ProviderRejectedError && error instanceof ProviderError && error instanceof LuoshoError, String(error));
        assert.equal(error.name, "ProviderRejectedError");
        assert.equal(error.code, GrpcStatus.FAILED_PRECONDITION);
        assert.equal(error.reason, "PROVIDER_REJECTED");
        assert.deepEqual([error.provider, error.model, error.httpStatus, error.errorType], ["llm", "test-model", "400", "invalid_request_error"]);
        assert.match(error.providerMessage, /Expected/);
        assert.equal(error.metadata.provider_message, error.providerMessage);
        assert.equal(error.metadata.session_id, "ts-rejected");
        assert.equal(error.transient, false);
        assert.equal(error.retryAfterMs, undefined);
        return true;
      });
      assert.equal(run.attempts, 1);
      assert.equal(fake.attempts.get("ts-rejected")!.length, 1);
    } finally {
      client.close();
    }
  });
});

describe("a continuation the provider refuses for good (issue 35, a real daemon and model server)", () => {
  let model: FakeModel;
  let daemon: Daemon;
  let dir: string;
  before(async () => {
    model = await startFakeModel("--wire", "anthropic", "--scenario", "refuse-continuation");
    dir = mkdtempSync(join(tmpdir(), "luoshod-ts-refused-"));
    daemon = await startDaemonWith({ [model.key_env]: model.key }, "127.0.0.1:0", dir, "--config", model.config);
  });
  after(async () => {
    await daemon?.kill();
    await model?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("with the default retry policy: the typed PROVIDER_REJECTED error after one model call for the continuation", async () => {
    const client = new LuoshoClient(daemon.address); // the default RetryPolicy
    try {
      const agent = { model: model.model, instructions: "Look things up.", tools: [{ name: model.tool, inputSchema: { type: "object" } }] };
      let looked = 0;
      const run = client.execute("ts-refused", "look it up", { agent, tools: { [model.tool]: async () => ({ found: ++looked }) } });
      await assert.rejects(run.result(), (error: unknown) => {
        assert.ok(error instanceof ProviderRejectedError, String(error));
        assert.ok(error instanceof ProviderError, "caught as a provider error too");
        assert.equal(error.code, GrpcStatus.FAILED_PRECONDITION);
        assert.equal(error.reason, "PROVIDER_REJECTED");
        assert.equal(error.metadata.status, "400");
        assert.match(error.metadata.provider_message ?? "", /Expected/);
        assert.equal(error.httpStatus, "400");
        assert.match(error.providerMessage, /Expected/);
        assert.equal(error.provider, "llm");
        assert.equal(error.model, "test-model");
        assert.equal(error.transient, false);
        return true;
      });
      assert.equal(run.attempts, 1, "never retried");
      assert.equal(looked, 1);
      const types = run.events.map((e) => e.type);
      assert.ok(types.includes("model.turn") && types.includes("tool.result"), types.join(", "));
      await sleep(300); // nothing goes on calling the model behind the error
      const stats = await model.stats();
      assert.equal(stats.requests, 2, JSON.stringify(stats));
      assert.deepEqual(stats.turns, [0, 1]);
    } finally {
      client.close();
    }
  });
});
