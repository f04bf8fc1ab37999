// Two principals (static tokens) connect with the official TypeScript SDK
// client and run programs at the same time, each leaving a run record and
// a cut (stored) result. Then, while both run more programs, each reads
// the other's records and results every way a client can: resources/read
// of the run, of the result and of a part of it, and read_result whole and
// by range; and the same for ids of the same shape that name nothing. The
// ids are replaced by RUN and RESULT in every answer, so that the Go test
// (principals_reads_test.go) can compare the answers.
import { connect, parseArgs, report } from "../lib/connect.mjs";
import { otherId, reads, runStoring } from "../lib/stored.mjs";

const opts = parseArgs();
const tokens = { alice: opts.flags.alice, bob: opts.flags.bob };
const clients = {};
for (const who of ["alice", "bob"]) {
  clients[who] = await connect({ ...opts, token: tokens[who] });
}

// store runs who's i-th program, which stores its result.
const store = (who, i) => runStoring(clients[who], who, who + "-secret-" + i);

const out = { stored: {}, attacks: {}, own: {} };
const first = await Promise.all([store("alice", 0), store("bob", 0), store("alice", 1), store("bob", 1)]);
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
await Promise.all([...attacks, store("alice", 2), store("bob", 2)]);
for (const who of ["alice", "bob"]) {
  const s = out.stored[who][0];
  if (s.run && s.result) out.own[who] = await reads(clients[who], s);
}
report(out);
