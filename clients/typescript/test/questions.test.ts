// Questions to a person (R88) against a real daemon: a run pauses on a question tool, the
// inbox lists it with kind QUESTION and its text, resolve() answers it, and the run
// finishes with {"answer": TEXT} as the call's result.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { LuoshoClient, pb } from "@luosho/client";
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

test("R88: a question pauses the run, is listed as a QUESTION, and its answer is the result of the call", async () => {
  const agent = {
    model: "scripted:ask",
    instructions: "Ask when unsure.",
    tools: [{ name: "ask", description: "ask the person in charge", inputSchema: { type: "object", properties: { question: { type: "string" } } }, question: true }],
    modelSettings: { script: [call("ask", { question: "Daily or weekly?" }), { text: "weekly it is" }] },
  };
  const paused = await client.execute("ts-question", "make the report", { agent }).result();
  assert.equal(paused.finishReason, "awaiting_approval");
  assert.equal(paused.approval?.kind, pb.ApprovalKind.APPROVAL_KIND_QUESTION);
  assert.equal(paused.approval?.question, "Daily or weekly?");

  const listed: pb.Approval[] = [];
  for await (const a of client.listApprovals("ts-question")) listed.push(a);
  assert.deepEqual(listed.map((a) => [a.approvalId, a.kind, a.question, a.toolCall?.name]), [
    [paused.approvalId, pb.ApprovalKind.APPROVAL_KIND_QUESTION, "Daily or weekly?", "ask"],
  ]);

  const done = await client.resolve(listed[0]!.approvalId, true, { answer: "weekly" }).result();
  assert.equal(done.sessionId, "ts-question");
  assert.equal(done.finishReason, "stop");
  assert.equal(done.finalText, "weekly it is");
  const checkpoint = await client.getSession("ts-question");
  const results = checkpoint.messages.filter((m) => m.role === pb.Role.ROLE_TOOL);
  assert.deepEqual(results.map((m) => [m.toolName, JSON.parse(m.content), m.isError]), [["ask", { answer: "weekly" }, false]]);
});
