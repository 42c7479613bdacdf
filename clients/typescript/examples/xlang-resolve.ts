// The TypeScript leg of the cross-language test (tests/clients/test_cross_language.py):
// `node dist-test/examples/xlang-resolve.js ADDR APPROVAL_ID` approves the pending call and
// runs it; at the next turn's tool call it prints IN_TOOL and holds it until it is killed.
import { LuoshoClient } from "@luosho/client";

const [address, approvalId] = process.argv.slice(2);
const client = new LuoshoClient(address!);
await client
  .resolve(approvalId!, true, {
    note: "approved from TypeScript",
    tools: {
      pay: async () => "ts:pay",
      notify: async (_args: unknown, ctx: { toolCallId: string }) => {
        console.log("IN_TOOL", ctx.toolCallId);
        return new Promise(() => {}); // a crash while the tool runs: the test kills us
      },
    },
  })
  .result();
