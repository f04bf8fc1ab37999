// What an agent reads back from call_tool_chain for common mistakes,
// through the official TypeScript SDK client: a missing await, a result
// read as the MCP envelope (r.content[0].text), an unclosed brace, an
// intent with a key=value pair, a thrown object (not an Error), and an
// endless loop after a tool call.
import { main, text } from "../lib/connect.mjs";

await main(async (client) => {
  const chain = async (args) => {
    const r = await client.callTool({ name: "call_tool_chain", arguments: args });
    return { isError: !!r.isError, text: text(r), code: r._meta?.["isogate/code"] ?? "" };
  };
  return {
    missingAwait: await chain({ code: "const r = everything.get_sum({a: 1, b: 2});\nreturn r.content" }),
    envelope: await chain({ code: "const r = await everything.get_sum({a: 1, b: 2});\nreturn r.content[0].text" }),
    syntax: await chain({ code: "return {a: 1" }),
    thrownValue: await chain({ code: "await everything.echo({message: 'x'});\nthrow {reason: 'nope'}" }),
    loopAfterCall: await chain({ code: "await everything.echo({message: 'x'});\nwhile (true) {}", timeout: 1000 }),
    intent: await chain({
      intent: "owner=dee",
      code: `return Array.from({length: 377}, (_, i) => "task " + i + " owner=" + (i === 200 ? "dee" : ["bo", "deepak", "ann"][i % 3]) + " state=open").join("\\n")`,
    }),
  };
});
