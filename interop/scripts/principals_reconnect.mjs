// One caller runs a program that leaves a run record and a cut (stored)
// result, then disconnects (its session ends). It connects again, a new
// session with the same credentials, and reads the record and the result
// every way a client can: resources/read of the run, of the result and of
// a part of it, and read_result whole and by range. Another client (with
// --other: another token, or none) reads them too, and ids of the same
// shape that name nothing. The ids are replaced by RUN and RESULT in every
// answer, so that the Go test (principals_reconnect_test.go) compares them.
//
// Flags: --first TOKEN (the caller; "" for none), --other TOKEN (omit for
// no other reader).
import { attempt, connect, parseArgs, report, text } from "../lib/connect.mjs";

const opts = parseArgs();
const tokenOf = (flag) => (opts.flags[flag] ? opts.flags[flag] : undefined);
const open = (token) => connect({ ...opts, token });

// otherId changes the last hex digit of id.
const otherId = (id) => id.slice(0, -1) + (id.endsWith("0") ? "1" : "0");

// reads reads what s names every way, ids scrubbed.
async function reads(client, s) {
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

const out = { sessions: [] };
try {
  const first = await open(tokenOf("first"));
  out.sessions.push(first.transport.sessionId ?? null);
  const res = await first.callTool({
    name: "call_tool_chain",
    arguments: {
      code: `const r = await everything.echo({message: "first-secret" + "x".repeat(2000)}); return {r};`,
      max_output_size: 300,
    },
  });
  out.stored = {
    run: res._meta?.["isogate/run"] ?? null,
    result: /isogate:\/\/result\/[0-9a-f]+/.exec(text(res) ?? "")?.[0] ?? null,
  };
  // The first session ends: the client closes it (HTTP DELETE).
  await first.transport.terminateSession?.();
  await first.close();
  if (out.stored.run && out.stored.result) {
    const again = await open(tokenOf("first"));
    out.sessions.push(again.transport.sessionId ?? null);
    out.again = await reads(again, out.stored);
    if ("other" in opts.flags) {
      const other = await open(tokenOf("other"));
      out.sessions.push(other.transport.sessionId ?? null);
      out.other = {
        got: await reads(other, out.stored),
        unknown: await reads(other, { run: otherId(out.stored.run), result: otherId(out.stored.result) }),
      };
    }
  }
} catch (err) {
  out.fatal = String(err?.message ?? err);
  out.stack = String(err?.stack ?? "");
}
report(out);
