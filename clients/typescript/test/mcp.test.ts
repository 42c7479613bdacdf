// Daemon tools (MCP): tool.call says who runs it, and the client never hands a daemon
// tool's call to the app's tools. A real daemon with the repository's stdio MCP test
// server (tests/support/mcp_server.py) as [mcp_servers.files].
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { LuoshoClient, isDaemonCall, pb } from "@luosho/client";
import { REPO_ROOT, startDaemon, type Daemon } from "./daemon.js";

let daemon: Daemon;
let client: LuoshoClient;

before(async () => {
  const python = process.env.LUOSHOD_PYTHON ?? join(REPO_ROOT, ".venv", "bin", "python");
  const server = join(REPO_ROOT, "tests", "support", "mcp_server.py");
  const toml = join(mkdtempSync(join(tmpdir(), "luoshod-ts-mcp-")), "luoshod.toml");
  writeFileSync(toml, `[mcp_servers.files]\ncommand = ${JSON.stringify(python)}\nargs = [${JSON.stringify(server)}, "stdio"]\n`);
  daemon = await startDaemon("--config", toml);
  client = new LuoshoClient(daemon.address);
});

after(async () => {
  client?.close();
  await daemon?.stop();
});

test("a daemon tool's call is marked DAEMON and never reaches the app's tools", async () => {
  const script = [
    { tool_calls: [{ name: "note", arguments: {}, id: "c-note" }, { name: "files__add", arguments: { a: 40, b: 2 }, id: "c-add" }] },
    { text: "42" },
  ];
  const asked: string[] = [];
  const run = client.execute("ts-mcp", "go", {
    agent: { model: "scripted:mcp", tools: [{ name: "note" }], mcpServers: ["files"], modelSettings: { script }, toolConcurrency: 2 },
    tools: {
      note: async () => { asked.push("note"); return "noted"; },
      files__add: async () => { asked.push("files__add"); return "from the app"; },
    },
  });
  const daemonCalls: Record<string, boolean> = {};
  for await (const event of run) {
    if (event.type === "tool.call") daemonCalls[event.toolCall!.call!.id] = isDaemonCall(event);
  }
  const result = await run.result();
  assert.equal(result.finalText, "42");
  assert.deepEqual(daemonCalls, { "c-note": false, "c-add": true });
  assert.deepEqual(asked, ["note"]);
  const cp = await client.getSession("ts-mcp");
  const added = cp.messages.find((m) => m.role === pb.Role.ROLE_TOOL && m.toolCallId === "c-add");
  assert.deepEqual(JSON.parse(added!.content), { result: "42" });
});
