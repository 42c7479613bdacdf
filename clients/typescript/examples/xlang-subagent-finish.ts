// The TypeScript leg of the sub-agent cross-language test (tests/clients/test_subagents_across_languages.py):
// `node dist-test/examples/xlang-subagent-finish.js ADDR SESSION_ID` resumes the session
// whose sub-agent's approval was decided from the people CLI, runs the sub-agent's call,
// and prints the sub-agent that asked, the call id and the run's final text.
import { LuoshoClient, type ToolContext } from "@luosho/client";

const [address, sessionId] = process.argv.slice(2);
const client = new LuoshoClient(address!);
let asked = "";
const result = await client
  .resume(sessionId!, {
    tools: {
      pay: async (_args: unknown, ctx: ToolContext) => {
        asked = `${ctx.subagent?.path.join("/")}:${ctx.toolCallId}`;
        return "ts:pay";
      },
    },
  })
  .result();
console.log(asked, JSON.stringify(result.finalText));
await client.close();
