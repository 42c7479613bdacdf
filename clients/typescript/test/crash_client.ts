// A client process for the crash test. `run ADDR SESSION AGENT_JSON HANG_AT`: executes the
// session answering "add"; on the HANG_AT-th tool.call prints IN_TOOL <id> and hangs there
// until it is killed. `resume ADDR SESSION`: resumes the session from a fresh process
// (retrying while the daemon still sees the dead client's run) and prints the result.
import { LuoshoClient, SessionBusyError, type RunResult } from "@luosho/client";

const [mode, address, sessionId, agentJson, hangAt] = process.argv.slice(2);
const client = new LuoshoClient(address!);
let n = 0;
const tools = {
  add: async (args: { a: number }, ctx: { toolCallId: string }) => {
    n += 1;
    if (mode === "run" && n === Number(hangAt)) {
      console.log("IN_TOOL", ctx.toolCallId);
      return new Promise(() => {}); // holds the call until the process is killed
    }
    console.log("ANSWERED", ctx.toolCallId);
    return { sum: args.a + 100, by: mode };
  },
};

if (mode === "run") {
  await client.execute(sessionId!, "go", { agent: JSON.parse(agentJson!), tools }).result();
} else {
  let result: RunResult | undefined;
  for (let attempt = 0; !result; attempt++) {
    try {
      result = await client.resume(sessionId!, { tools }).result();
    } catch (error) {
      if (!(error instanceof SessionBusyError) || attempt > 100) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  console.log("RESULT", JSON.stringify({ finishReason: result.finishReason, finalText: result.finalText, ran: result.ran }));
  client.close();
}
