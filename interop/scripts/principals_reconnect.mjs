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
import { connect, parseArgs, report } from "../lib/connect.mjs";
import { otherId, reads, runStoring } from "../lib/stored.mjs";

const opts = parseArgs();
const tokenOf = (flag) => (opts.flags[flag] ? opts.flags[flag] : undefined);
const open = (token) => connect({ ...opts, token });

const out = { sessions: [] };
try {
  const first = await open(tokenOf("first"));
  out.sessions.push(first.transport.sessionId ?? null);
  out.stored = await runStoring(first, "first", "first-secret");
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
