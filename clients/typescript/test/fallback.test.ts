// Fallback models (R82) against a real daemon calling the repository's fake model server
// (scenario "fallback": the model "down" answers HTTP 503, "test-model" answers): the run's
// provider.retry and provider.fallback events typed in RunResult.retries / .fallbacks, the
// lead's and a sub-agent's (with its path).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { LuoshoClient } from "@luosho/client";
import { call, startDaemonWith, startFakeModel, type Daemon, type FakeModel } from "./daemon.js";

let model: FakeModel;
let daemon: Daemon;
let dir: string;
let client: LuoshoClient;

before(async () => {
  model = await startFakeModel("--wire", "anthropic", "--scenario", "fallback", "--fast");
  dir = mkdtempSync(join(tmpdir(), "luoshod-ts-fallback-"));
  daemon = await startDaemonWith({ [model.key_env]: model.key }, "127.0.0.1:0", dir, "--config", model.config);
  client = new LuoshoClient(daemon.address);
});

after(async () => {
  client?.close();
  await daemon?.kill();
  await model?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("R82: the lead retry and fallback are in the result, typed", async () => {
  const agent = { model: "llm:down", instructions: "Answer.", fallbackModels: [model.model] };
  const result = await client.execute("ts-fallback", "hi", { agent }).result();
  assert.equal(result.finishReason, "stop");
  assert.equal(result.finalText, "done");
  assert.equal(result.retries.length, 1, JSON.stringify(result.retries));
  const [retry] = result.retries;
  assert.deepEqual([retry!.step, retry!.model, retry!.attempt, retry!.subagent], [1, "llm:down", 1, []]);
  assert.match(retry!.error, /503/);
  assert.ok(retry!.delayMs >= 0);
  assert.deepEqual(
    result.fallbacks.map((f) => [f.step, f.fromModel, f.toModel, f.reason, f.errorType, f.subagent]),
    [[1, "llm:down", model.model, "PROVIDER_ERROR", "overloaded_error", []]],
  );
  assert.match(result.fallbacks[0]!.error, /2 attempt\(s\)/);
  const stats = await model.stats();
  assert.deepEqual(stats.statuses, [503, 503, 200]);
});

test("R82: a sub-agent fallback carries the path of the sub-agent", async () => {
  const researcher = { model: "llm:down", instructions: "Research.", fallbackModels: [model.model] };
  const agent = {
    model: "scripted:lead",
    instructions: "Lead.",
    modelSettings: { script: [call("task", { agent: "researcher", prompt: "find it", description: "d" }), { text: "all done" }] },
    subagents: [{ name: "researcher", description: "finds facts", agent: researcher }],
  };
  const result = await client.execute("ts-sub-fallback", "go", { agent }).result();
  assert.equal(result.finishReason, "stop");
  assert.equal(result.finalText, "all done");
  assert.deepEqual(result.retries.map((r) => [r.model, r.attempt, r.subagent]), [["llm:down", 1, ["researcher"]]]);
  assert.deepEqual(result.fallbacks.map((f) => [f.fromModel, f.toModel, f.subagent]), [["llm:down", model.model, ["researcher"]]]);
});
