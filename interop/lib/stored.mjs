// What a principal's program leaves behind, a run record and a cut (stored)
// result, and every way a client reads it: shared by the scripts that
// check who may read what (principals_reads, principals_reconnect).
import { attempt, text } from "./connect.mjs";

// runStoring runs, on client, a program whose result holds secret and is
// cut (so stored), and returns its run id and result URI.
export async function runStoring(client, who, secret) {
  const res = await client.callTool({
    name: "call_tool_chain",
    arguments: {
      code: `const r = await everything.echo({message: ${JSON.stringify(secret)} + "x".repeat(2000)}); return {who: ${JSON.stringify(who)}, r};`,
      max_output_size: 300,
    },
  });
  const run = res._meta?.["isogate/run"] ?? null;
  const result = /isogate:\/\/result\/[0-9a-f]+/.exec(text(res) ?? "")?.[0] ?? null;
  return { run, result, isError: !!res.isError };
}

// otherId changes the last hex digit of id: an id of the same shape that
// names nothing.
export const otherId = (id) => id.slice(0, -1) + (id.endsWith("0") ? "1" : "0");

// reads reads what s ({run, result}) names every way a client can:
// resources/read of the run, of the result and of a part of it, and
// read_result whole and by range; ids are replaced by RUN and RESULT in
// every answer, so that the Go tests compare them.
export async function reads(client, s) {
  const resId = s.result.slice("isogate://result/".length);
  const scrub = (t) => String(t).split(resId).join("RESULT").split(s.run).join("RUN");
  const out = {};
  for (const [what, uri] of Object.entries({
    runs: "isogate://runs/" + s.run,
    result: s.result,
    "result-part": s.result + "/r",
  })) {
    const r = await attempt(() => client.readResource({ uri }));
    out[what] = r.ok ? "read: " + scrub(r.value.contents?.[0]?.text ?? "") : "error: " + r.error.code + " " + scrub(r.error.message);
  }
  for (const [what, args] of Object.entries({
    read_result: { uri: s.result },
    "read_result-range": { uri: s.result, offset: 10, limit: 20 },
  })) {
    const r = await attempt(() => client.callTool({ name: "read_result", arguments: args }));
    out[what] = !r.ok ? "rpc-error: " + r.error.code + " " + scrub(r.error.message)
      : (r.value.isError ? "error: " : "read: ") + scrub(text(r.value));
  }
  return out;
}
