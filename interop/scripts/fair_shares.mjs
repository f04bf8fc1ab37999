// Fair shares between principals, through the official TypeScript SDK
// client: bob (the connection's --token) keeps one busy loop running and
// one queued behind his share of the V8 slots; alice (--alice TOKEN) then
// runs a trivial program, which must answer while bob's loops still run,
// and bob's next run is refused. Bob's loops have a 10-minute timeout: they
// end only when this script exits, so a loaded machine that is slow to run
// alice's program cannot end them first. The gateway's /metrics (--metrics
// URL) says when bob's second run is queued.
import { main, connect, text, errorInfo } from "../lib/connect.mjs";

const chain = (client, code, timeout) =>
  client.callTool({ name: "call_tool_chain", arguments: timeout ? { code, timeout } : { code } })
    .then((r) => ({ isError: !!r.isError, text: text(r) }), (e) => ({ error: errorInfo(e) }));

await main(async (bob, opts) => {
  const out = {};
  let busyEnded = 0;
  const busy = [1, 2].map(() => chain(bob, "while (true) {}", 600000).finally(() => busyEnded++));

  const want = 'isogate_principal_share_hits_total{backend="",outcome="waited",pool="sandbox"} 1';
  const deadline = Date.now() + 30000; // a give-up bound: the queued run stays queued
  out.queued = false;
  while (Date.now() < deadline) {
    const m = await (await fetch(opts.flags.metrics)).text();
    if (m.includes(want)) {
      out.queued = true;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }

  const alice = await connect({ http: opts.http, token: opts.flags.alice, flags: {} });
  const start = Date.now();
  out.alice = await chain(alice, "return 6 * 7");
  out.aliceMs = Date.now() - start;
  out.busyEndedFirst = busyEnded; // bob's loops that ended before alice's answer
  out.bobNext = await chain(bob, "return 3");
  await alice.close().catch(() => {});
  return out;
});
