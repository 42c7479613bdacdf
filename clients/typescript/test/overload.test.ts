// A run the daemon's admission refused before it started (RESOURCE_EXHAUSTED /
// DAEMON_OVERLOADED with retry_after_s, or gRPC's grpc-retry-pushback-ms trailer) comes back
// after the wait it was told with the same request id (R75), bounded by overloadAttempts and
// overloadMaxWaitMs. A real daemon with a tiny start budget refuses most of a burst; the
// trailer, which the daemon does not send, comes from an in-process fake AgentService.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Server as GrpcServer, ServerCredentials, status as GrpcStatus, type ServerWritableStream } from "@grpc/grpc-js";
import { LuoshoClient, LuoshoError, NO_RETRY, RetryPolicy, pb, refusedByAdmission, type RetryOptions } from "@luosho/client";
import { errorTrailers, scripted, startDaemon, type Daemon } from "./daemon.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a burst the daemon refuses (a real daemon, a tiny start budget)", () => {
  let daemon: Daemon;
  before(async () => {
    daemon = await startDaemon("--max-loop-lag-ms", "16"); // room for four starts at once
  });
  after(async () => daemon?.stop());

  const burst = async (retry: RetryOptions, prefix: string, n: number) => {
    const client = new LuoshoClient(daemon.address, { retry });
    const agent = scripted("burst", [{ text: "done" }]);
    try {
      return await Promise.allSettled(Array.from({ length: n }, (_, k) => {
        const run = client.execute(`${prefix}-${k}`, "go", { agent });
        return run.result().then((result) => ({ result, attempts: run.attempts }));
      }));
    } finally {
      client.close();
    }
  };

  test("R75: refused runs come back as told and every one finishes", async () => {
    const n = 24;
    const once = await burst({ overloadAttempts: 1 }, "once", n);
    const refused = once.flatMap((r) => (r.status === "rejected" ? [r.reason as LuoshoError] : []));
    assert.ok(refused.length >= n / 2, `${refused.length} of ${n} refused without overload retries`);
    for (const e of refused) {
      assert.equal(e.code, GrpcStatus.RESOURCE_EXHAUSTED);
      assert.equal(e.reason, "DAEMON_OVERLOADED");
      assert.ok(Number(e.metadata.retry_after_s) >= 1);
    }
    await sleep(1000); // the start budget fills again

    const started = Date.now();
    const paced = await burst({}, "paced", n); // the default policy
    const failed = paced.filter((r) => r.status === "rejected");
    assert.deepEqual(failed, []);
    const done = paced.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    assert.ok(done.every((d) => d.result.finalText === "done"));
    assert.ok(done.filter((d) => d.attempts > 1).length >= n / 2, "the burst was refused, then admitted on a retry");
    assert.ok(Date.now() - started >= 1000, "a refused run waited its retry_after_s (at least 1 s)");
  });
});

type ExecuteCall = ServerWritableStream<pb.ExecuteRequest, pb.ExecuteResponse>;

/**
 * An in-process AgentService refusing each session's first Execute with DAEMON_OVERLOADED
 * (retry_after_s 1, and a grpc-retry-pushback-ms trailer when `pushback` is set), and
 * finishing the next one; it records each attempt's request and when it came.
 */
class Refuser {
  readonly requests = new Map<string, { request: pb.ExecuteRequest; at: number }[]>();
  private readonly server = new GrpcServer();

  constructor(private readonly pushback: Map<string, string>) {
    this.server.addService(pb.AgentServiceService, {
      execute: (call: ExecuteCall) => {
        const sessionId = call.request.sessionId;
        const seen = this.requests.get(sessionId) ?? [];
        this.requests.set(sessionId, seen);
        seen.push({ request: call.request, at: performance.now() });
        if (seen.length === 1) {
          const trailers = errorTrailers(GrpcStatus.RESOURCE_EXHAUSTED, "busy", "DAEMON_OVERLOADED", { retry_after_s: "1" });
          const value = this.pushback.get(sessionId);
          if (value !== undefined) trailers.set("grpc-retry-pushback-ms", value);
          call.emit("error", { code: GrpcStatus.RESOURCE_EXHAUSTED, details: "busy", metadata: trailers });
          return;
        }
        call.write(pb.ExecuteResponse.fromPartial({ event: { sessionId, runId: "r-1", seq: 1, type: "run.done",
          runDone: { finishReason: pb.FinishReason.FINISH_REASON_STOP, status: pb.CheckpointStatus.CHECKPOINT_STATUS_FINISHED, finalText: "admitted" } } }));
        call.end();
      },
    });
  }

  async listen(): Promise<string> {
    const port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))));
    return `127.0.0.1:${port}`;
  }

  close(): void {
    this.server.forceShutdown();
  }
}

describe("admission refusals against an in-process fake", () => {
  const pushback = new Map([["pushed", "300"], ["never", "-1"]]);
  let fake: Refuser;
  let address: string;
  before(async () => {
    fake = new Refuser(pushback);
    address = await fake.listen();
  });
  after(() => fake?.close());

  test("R75: a refusal is sent again with the same request after the pushback trailer's wait", async () => {
    const client = new LuoshoClient(address);
    try {
      const run = client.execute("pushed", "hi", { agent: scripted("x", [{ text: "x" }]) });
      const result = await run.result();
      assert.equal(result.finalText, "admitted");
      assert.equal(run.attempts, 2);
      const [first, again] = fake.requests.get("pushed")!;
      assert.ok(first!.request.requestId, "a request id");
      assert.deepEqual(again!.request, first!.request, "the very same request");
      const waited = again!.at - first!.at;
      assert.ok(waited >= 290 && waited < 900, `came back after ${waited} ms, not the 300 ms pushback`);
    } finally {
      client.close();
    }
  });

  for (const [name, session, retry] of [
    ["overload retries off", "off", { overloadAttempts: 1 }],
    ["NO_RETRY", "no-retry", NO_RETRY],
    ["past overloadMaxWaitMs", "max-wait", { overloadMaxWaitMs: 500 }],
    ["a negative pushback", "never", {}],
  ] as const) {
    test(`a refusal is the run's failure: ${name}`, async () => {
      const client = new LuoshoClient(address, { retry });
      try {
        const started = Date.now();
        const run = client.execute(session, "hi", { agent: scripted("x", [{ text: "x" }]) });
        await assert.rejects(run.result(), (e: LuoshoError) => e.reason === "DAEMON_OVERLOADED");
        assert.equal(run.attempts, 1);
        assert.ok(Date.now() - started < 500, "at once");
      } finally {
        client.close();
      }
    });
  }

  test("overloadWaitMs: the hint with upward jitter, overloadAttempts in all; refusedByAdmission", () => {
    const policy = new RetryPolicy({ overloadAttempts: 3, jitter: 0.2 });
    const full = new LuoshoError(GrpcStatus.RESOURCE_EXHAUSTED, "TOO_MANY_RUNS", "full", { retry_after_s: "2" });
    assert.ok(refusedByAdmission(full, 0) && !refusedByAdmission(full, 1), "only before the attempt's first event");
    assert.ok(!refusedByAdmission(new LuoshoError(GrpcStatus.RESOURCE_EXHAUSTED, "PAYLOAD_TOO_LARGE", "big"), 0));
    const refusals = { count: 0, since: 0 };
    const waits = [1, 2, 3].map(() => policy.overloadWaitMs(full, refusals));
    assert.ok(waits.slice(0, 2).every((w) => w !== undefined && w >= 2000 && w <= 2400), String(waits));
    assert.equal(waits[2], undefined);
    assert.throws(() => new RetryPolicy({ overloadAttempts: 0 }), RangeError);
  });
});
