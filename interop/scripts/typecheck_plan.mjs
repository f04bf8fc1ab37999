// Check before run (issue 36), for the official TypeScript SDK client: it
// sends call_tool_chain programs that are wrong from the start, one that
// may call a denied tool and one of 20 writes under approval, answering
// (accept) and counting the elicitations it receives. Before them it
// waits until the gateway's checker is loaded (a program with a type
// hint comes back with a "typecheck:" notice): until then programs run
// unchecked, by design.
// Output: {ready: {probes}, runs: {NAME: {isError, text}}, asked: {NAME: [message]}}.
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { main, text } from "../lib/connect.mjs";

const programs = {
  ident: "await counter.bump({id:'p1'}); await counter.bump({id:'p2'}); await counter.bump({ident:'p3'})",
  bumpp: "await counter.bump({id:'r1'}); await counter.bumpp({id:'r2'})",
  literal: "await counter.bump({id:'w1'});\nawait counter.bump({id: 7})",
  denied: "await counter.bump({id:'d1'});\nif (Math.random() > 2) await counter.wipe({id:'d2'});\nreturn 'done'",
  writes: "for (let i = 0; i < 20; i++) {\n  await counter.write({id: 'a' + i});\n}\nreturn 'wrote 20'",
};

const call = async (client, code) => {
  const res = await client.callTool({ name: "call_tool_chain", arguments: { code } });
  return { isError: !!res.isError, text: text(res) };
};

await main(async (client) => {
  let asked = [];
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params.message);
    return { action: "accept", content: {} };
  });
  const probe = "const probe: number = 'not a number';\nreturn 1";
  let probes = 0;
  for (const until = Date.now() + 120_000; ; ) {
    probes++;
    if ((await call(client, probe)).text.includes("typecheck: line")) break;
    if (Date.now() > until) throw new Error("the checker did not load within 120 s");
    await new Promise((r) => setTimeout(r, 50));
  }
  const out = { ready: { probes }, runs: {}, asked: {} };
  for (const [name, code] of Object.entries(programs)) {
    out.runs[name] = await call(client, code);
    out.asked[name] = asked;
    asked = [];
  }
  return out;
}, { elicitation: { form: {} } });
