// A run a limit stopped, against an in-process gRPC server that sends what the daemon sends
// then: its finish reason typed ("budget_exceeded", "deadline_exceeded") and the
// budget.exceeded event's payload in the result.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Server as GrpcServer, ServerCredentials, type ServerWritableStream } from "@grpc/grpc-js";
import { LuoshoClient, finishReasonName, pb, type BudgetExceeded } from "@luosho/client";

let server: GrpcServer;
let address = "";

before(async () => {
  server = new GrpcServer();
  server.addService(pb.AgentServiceService, {
    execute: (call: ServerWritableStream<pb.ExecuteRequest, pb.ExecuteResponse>) => {
      const sessionId = call.request.sessionId;
      const deadline = sessionId === "late";
      const send = (seq: number, type: string, extra: pb.DeepPartial<pb.Event>) =>
        call.write(pb.ExecuteResponse.fromPartial({ event: { sessionId, runId: "run-1", seq, type, ...extra } }));
      send(1, "run.start", { runStart: {} });
      send(2, "budget.exceeded", {
        budgetExceeded: deadline
          ? { scope: "run", limit: "wall_clock_ms", value: 60000, used: 60250 }
          : {
              scope: "ancestor", limit: "cost_usd", value: 1, used: 0.75, worstCase: 0.5, path: ["researcher"],
              usage: { promptTokens: 900, completionTokens: 40, costUsd: 0.75, cachedInputTokens: 600, reasoningTokens: 9 },
            },
      });
      send(3, "run.done", {
        runDone: {
          finishReason: deadline ? pb.FinishReason.FINISH_REASON_DEADLINE_EXCEEDED : pb.FinishReason.FINISH_REASON_BUDGET_EXCEEDED,
          status: pb.CheckpointStatus.CHECKPOINT_STATUS_IN_PROGRESS,
          usage: { costUsd: 0.75, cachedInputTokens: 600 },
        },
      });
      call.end();
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))));
  address = `127.0.0.1:${port}`;
});

after(() => server?.forceShutdown());

test("the finish reasons of a limit have their names", () => {
  assert.equal(finishReasonName(pb.FinishReason.FINISH_REASON_BUDGET_EXCEEDED), "budget_exceeded");
  assert.equal(finishReasonName(pb.FinishReason.FINISH_REASON_DEADLINE_EXCEEDED), "deadline_exceeded");
});

test("a run over its budget: budget_exceeded and what tripped", async () => {
  const client = new LuoshoClient(address);
  try {
    const result = await client.execute("over", "go").result();
    assert.equal(result.finishReason, "budget_exceeded");
    assert.equal(result.status, "in_progress");
    assert.equal(result.usage.cachedInputTokens, 600);
    const tripped: BudgetExceeded | undefined = result.budgetExceeded;
    assert.deepEqual(tripped, {
      scope: "ancestor", limit: "cost_usd", value: 1, used: 0.75, worstCase: 0.5, path: ["researcher"],
      usage: {
        promptTokens: 900, completionTokens: 40, totalTokens: 0, modelCalls: 0, costUsd: 0.75,
        cachedInputTokens: 600, cacheWriteTokens: 0, reasoningTokens: 9,
      },
    });
    assert.deepEqual(result.events.map((e) => e.type), ["run.start", "budget.exceeded", "run.done"]);
  } finally {
    client.close();
  }
});

test("a run past its deadline: deadline_exceeded", async () => {
  const client = new LuoshoClient(address);
  try {
    const result = await client.execute("late", "go").result();
    assert.equal(result.finishReason, "deadline_exceeded");
    assert.equal(result.budgetExceeded?.limit, "wall_clock_ms");
    assert.equal(result.budgetExceeded?.used, 60250);
  } finally {
    client.close();
  }
});
