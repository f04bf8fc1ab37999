// search_tools with search.embeddings through the official TypeScript SDK
// client: the tool vectors are computed in the background, so the first
// answers may be ranked by words only (their last line says so); ask again
// until the answer is fused, for at most --wait-ms, then ask each query of
// --queries (comma-separated) once.
import { main, text } from "../lib/connect.mjs";

await main(async (client, opts) => {
  const waitMs = Number(opts.flags["wait-ms"] ?? 60000);
  const queries = (opts.flags.queries ?? "").split(",").filter(Boolean);
  const search = async (query) => {
    const r = await client.callTool({ name: "search_tools", arguments: { query, limit: 3 } });
    return { isError: !!r.isError, text: text(r) };
  };
  let r = await search(queries[0]);
  const first = r;
  let tries = 1;
  const deadline = Date.now() + waitMs;
  // Polling: the gateway offers no event for "tool vectors ready".
  for (let pause = 10; r.text.includes("Ranked by words only") && Date.now() < deadline; pause = Math.min(2 * pause, 200)) {
    await new Promise((resolve) => setTimeout(resolve, pause));
    r = await search(queries[0]);
    tries++;
  }
  const answers = {};
  for (const q of queries) answers[q] = await search(q);
  return { first, tries, answers };
});
