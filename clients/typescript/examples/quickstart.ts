// Quickstart: the README's example. `make run`, then: node dist-test/examples/quickstart.js
// The daemon is the first argument, else $LUOSHOD_ADDRESS, else 127.0.0.1:50051; each run is
// a new session unless the second argument names one (so a second run plays the whole
// script again instead of continuing a finished conversation).
import { randomBytes } from "node:crypto";
import { LuoshoClient } from "@luosho/client";

const client = new LuoshoClient(process.argv[2] ?? process.env.LUOSHOD_ADDRESS ?? "127.0.0.1:50051");
const run = client.execute(process.argv[3] ?? `trip-${randomBytes(3).toString("hex")}`, "Plan a day in Lisbon", {
  agent: { model: "scripted:demo", tools: [{ name: "get_weather" }, { name: "convert" }] },
  tools: {
    get_weather: async ({ city }) => ({ city, sky: "sunny", celsius: 24 }),
    convert: async ({ amount }) => Math.round(amount * 108) / 100,
  },
});
for await (const event of run) console.log(event.seq, event.type); // run.start, …, tool.call, …
const result = await run.result();
console.log(result.finishReason, "-", result.finalText);
client.close();
