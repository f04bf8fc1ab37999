// Progress notifications on a multi-call chain, and cancellation through an
// AbortSignal: the aborted run ends and the next call works.
import { main, attempt, text, tapMessages } from "../lib/connect.mjs";

await main(async (client) => {
  const out = {};
  const seen = tapMessages(client);
  const progress = [];
  const chain = await client.callTool(
    { name: "call_tool_chain", arguments: { code: `
      const a = await everything.get_sum({a: 1, b: 2});
      const b = await everything.echo({message: "one"});
      const c = await everything.echo({message: "two"});
      return [a, b, c].length;` } },
    undefined,
    { onprogress: (p) => progress.push(p) },
  );
  out.chain = { isError: !!chain.isError, text: text(chain) };
  out.progress = progress; // what reached onprogress (see tapMessages)
  // What the server sent, in order: progress notifications, then the result.
  out.wire = seen.map((m) => m.method === "notifications/progress"
    ? { progress: m.params.progress, message: m.params.message }
    : { method: m.method ?? null, response: m.id !== undefined && m.method === undefined });

  // Abort once the run has made its first tool call (the first progress
  // notification), while it spins: an event, not a timer.
  const ac = new AbortController();
  let notified = 0;
  const started = Date.now();
  const aborted = await attempt(() => client.callTool(
    { name: "call_tool_chain", arguments: { timeout: 60000, code: `await everything.echo({message: "go"}); for (;;) {}` } },
    undefined,
    { signal: ac.signal, onprogress: () => { notified++; ac.abort("test aborts"); } },
  ));
  out.aborted = { ...aborted, notified, ms: Date.now() - started };

  const after = await attempt(() => client.callTool({ name: "call_tool_chain", arguments: { code: "return 40 + 2" } }));
  out.after = after.ok ? { isError: !!after.value.isError, text: text(after.value) } : after;
  return out;
});
