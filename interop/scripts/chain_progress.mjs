// Progress of a call_tool_chain run through the official TypeScript SDK
// client: a completed call, then server-everything's own progress for
// trigger-long-running-operation (3 steps, no message), then its
// completion. What the server sent, in order (see tapMessages).
import { main, text, tapMessages } from "../lib/connect.mjs";

await main(async (client) => {
  const seen = tapMessages(client);
  const progress = [];
  const chain = await client.callTool(
    { name: "call_tool_chain", arguments: { code: `
      await everything.get_sum({a: 1, b: 2});
      return await everything.trigger_long_running_operation({duration: 0.3, steps: 3});` } },
    undefined,
    { onprogress: (p) => progress.push(p) },
  );
  return {
    chain: { isError: !!chain.isError, text: text(chain) },
    progress,
    wire: seen.filter((m) => m.method === "notifications/progress")
      .map((m) => ({ progress: m.params.progress, total: m.params.total ?? 0, message: m.params.message })),
  };
});
