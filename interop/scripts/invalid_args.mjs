// A call with wrong arguments, through the official TypeScript SDK client
// against the real binary and server-everything: what the agent reads back
// (text and _meta["isogate/code"]) in tier 2, tier 3 and caught in a
// program, and this session's calls of get-sum as isogate://stats counts
// them (calls that reached the backend) before, after the wrong calls and
// after one right call.
import { main, text } from "../lib/connect.mjs";

await main(async (client) => {
  const chain = async (code) => {
    const r = await client.callTool({ name: "call_tool_chain", arguments: { code } });
    return { isError: !!r.isError, text: text(r), code: r._meta?.["isogate/code"] ?? "" };
  };
  const sumCalls = async () => {
    const r = await client.readResource({ uri: "isogate://stats" });
    return JSON.parse(r.contents[0].text);
  };
  const before = await sumCalls();
  const simple = await chain("return await everything.get_sum({x: 1, y: 2})");
  const v8 = await chain("const n = 1;\nconst s = await everything.get_sum({a: n, b: 'two'});\nreturn s");
  const caught = await chain("try { await everything.get_sum({a: 1}); } catch (e) { return e.code; }");
  const afterWrong = await sumCalls();
  const right = await chain("return await everything.get_sum({a: 1, b: 2})");
  const afterRight = await sumCalls();
  return { simple, v8, caught, right, before, afterWrong, afterRight };
});
