// What an agent reads back from call_tool_chain for common mistakes,
// through the official TypeScript SDK client: a missing await, a result
// read as the MCP envelope (r.content[0].text), an unclosed brace, and an
// intent with a key=value pair.
import { main, text } from "../lib/connect.mjs";

await main(async (client) => {
  const chain = async (args) => {
    const r = await client.callTool({ name: "call_tool_chain", arguments: args });
    return { isError: !!r.isError, text: text(r) };
  };
  return {
    missingAwait: await chain({ code: "const r = everything.get_sum({a: 1, b: 2});\nreturn r.content" }),
    envelope: await chain({ code: "const r = await everything.get_sum({a: 1, b: 2});\nreturn r.content[0].text" }),
    syntax: await chain({ code: "return {a: 1" }),
    intent: await chain({
      intent: "owner=dee",
      code: `return Array.from({length: 377}, (_, i) => "task " + i + " owner=" + (i === 200 ? "dee" : ["bo", "deepak", "ann"][i % 3]) + " state=open").join("\\n")`,
    }),
  };
});
