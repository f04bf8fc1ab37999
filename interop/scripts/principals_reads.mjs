// Two principals (static tokens) connect with the official TypeScript SDK
// client and run programs at the same time, each leaving a run record and
// a cut (stored) result. Then, while both run more programs, each reads
// the other's records and results every way a client can: resources/read
// of the run, of the result and of a part of it, and read_result whole and
// by range; and the same for ids of the same shape that name nothing. The
// ids are replaced by RUN and RESULT in every answer, so that the Go test
// (principals_reads_test.go) can compare the answers.
import { attempt, connect, parseArgs, report, text } from "../lib/connect.mjs";

const opts = parseArgs();
const tokens = { alice: opts.flags.alice, bob: opts.flags.bob };
const clients = {};
for (const who of ["alice", "bob"]) {
  clients[who] = await connect({ ...opts, token: tokens[who] });
}

const program = (who, i) => ({
  name: "call_tool_chain",
  arguments: {
    code: `const r = await everything.echo({message: ${JSON.stringify(who + "-secret-" + i)} + "x".repeat(2000)}); return {who: ${JSON.stringify(who)}, r};`,
    max_output_size: 300,
  },
});

// runStoring runs a program and returns its run id and result URI.
async function runStoring(who, i) {
  const res = await clients[who].callTool(program(who, i));
  const run = res._meta?.["isogate/run"] ?? null;
  const result = /isogate:\/\/result\/[0-9a-f]+/.exec(text(res) ?? "")?.[0] ?? null;
  return { run, result, isError: !!res.isError };
}

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

const out = { stored: {}, attacks: {}, own: {} };
const first = await Promise.all([runStoring("alice", 0), runStoring("bob", 0), runStoring("alice", 1), runStoring("bob", 1)]);
out.stored.alice = [first[0], first[2]];
out.stored.bob = [first[1], first[3]];
const attacks = [];
for (const [attacker, victim] of [["alice", "bob"], ["bob", "alice"]]) {
  out.attacks[attacker] = [];
  for (const s of out.stored[victim]) {
    if (!s.run || !s.result) continue;
    attacks.push((async () => {
      const got = await reads(clients[attacker], s);
      const unknown = await reads(clients[attacker], { run: otherId(s.run), result: otherId(s.result) });
      out.attacks[attacker].push({ got, unknown });
    })());
  }
}
// More programs of both in flight during the attacks.
await Promise.all([...attacks, runStoring("alice", 2), runStoring("bob", 2)]);
for (const who of ["alice", "bob"]) {
  const s = out.stored[who][0];
  if (s.run && s.result) out.own[who] = await reads(clients[who], s);
}
report(out);
