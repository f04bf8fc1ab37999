// The official TypeScript SDK client saves each program of --saves (a JSON
// array of save_program arguments) and, for each one saved, calls its tool
// once with --args (JSON; default {}); it also lists the tools. The report
// has, per save, the result's text, isError and isogate/code, and the call's.
import { main, text } from "../lib/connect.mjs";

await main(async (client, opts) => {
  const out = { saves: [] };
  for (const a of JSON.parse(opts.flags.saves)) {
    const r = await client.callTool({ name: "save_program", arguments: a });
    const s = { name: a.name, text: text(r), isError: !!r.isError, code: r._meta?.["isogate/code"] };
    if (!r.isError) {
      const c = await client.callTool({ name: "program_" + a.name, arguments: JSON.parse(opts.flags.args ?? "{}") });
      s.call = { text: text(c), isError: !!c.isError, code: c._meta?.["isogate/code"] };
    }
    out.saves.push(s);
  }
  out.tools = (await client.listTools()).tools.map((t) => t.name).filter((n) => n.startsWith("program_"));
  return out;
});
