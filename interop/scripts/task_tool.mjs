// A task-required backend tool through isogate, for the official TypeScript
// SDK client that declares no tasks: server-everything's
// simulate-research-query has execution.taskSupport "required" (called
// plainly, directly, it answers -32601, and this client refuses to call a
// tool listed as required without its tasks API). Through isogate it is
// listed with taskSupport optional (a plain call works), a plain call returns the completed report with
// the task's status messages as progress, and a program awaits it.
// Needs a surface with both passthrough and call_tool_chain (expose both).
import { main, text, tapMessages } from "../lib/connect.mjs";

await main(async (client) => {
  const out = {};
  const tool = (await client.listTools()).tools.find((t) => t.name === "simulate-research-query");
  out.listed = !!tool;
  out.execution = tool?.execution ?? null;

  const seen = tapMessages(client);
  const progress = [];
  const call = await client.callTool(
    { name: "simulate-research-query", arguments: { topic: "interop" } },
    undefined,
    { onprogress: (p) => progress.push(p.message) },
  );
  out.call = { isError: !!call.isError, text: text(call) };
  out.progress = progress;
  // What the server sent (see tapMessages: onprogress may miss the last).
  out.wire = seen.filter((m) => m.method === "notifications/progress")
    .map((m) => ({ progress: m.params.progress, message: m.params.message }));

  const chain = await client.callTool({ name: "call_tool_chain", arguments: {
    code: `const r = await everything.simulate_research_query({topic: "chain"}); return r` } });
  out.chain = { isError: !!chain.isError, text: text(chain) };
  return out;
});
