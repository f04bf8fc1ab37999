// Calls one tool (and reads resources) through the official TypeScript SDK
// client, once every backend is healthy, and reports what the client got:
// the listed tool names, the result as the SDK validated it (against the
// tool's outputSchema too) and its size in bytes, and each resource's text.
// Flags: --call NAME --args JSON (optional), --read URI[,URI...] (optional).
import { main, attempt } from "../lib/connect.mjs";

await main(async (client, opts) => {
  const out = {};
  out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
  if (opts.flags.call) {
    const r = await attempt(() => client.callTool({ name: opts.flags.call, arguments: JSON.parse(opts.flags.args ?? "{}") }));
    out.call = r;
    if (r.ok) out.bytes = JSON.stringify(r.value).length;
  }
  out.read = {};
  for (const uri of (opts.flags.read ?? "").split(",").filter(Boolean)) {
    out.read[uri] = (await client.readResource({ uri })).contents[0].text;
  }
  return out;
});
