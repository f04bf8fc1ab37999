// A denied tool, as the official TypeScript SDK client meets it (issue
// 43): call_tool_chain programs that reach it by each access form,
// tool_info by name, and passthrough calls of its names. Every answer is
// an error naming the rule, with the code in _meta["isogate/code"].
// Output: {NAME: {isError, code, text}}.
import { main, text, attempt } from "../lib/connect.mjs";

const programs = {
  dot: "const s = await everything.get_sum({a: 1, b: 2});\nreturn await everything.get_env({})",
  bracket: "const s = await everything.get_sum({a: 1, b: 2});\nreturn await everything[\"get-env\"]({})",
  computed: "const n = ['get', 'env'].join('-');\nconst s = await everything.get_sum({a: 1, b: 2});\nreturn await everything[n]({})",
  caught: "try {\n  await everything.get_env({});\n  return 'called';\n} catch (e) {\n  return e.code + '|' + e.message;\n}",
};

await main(async (client) => {
  const call = async (name, args) => {
    const r = await attempt(() => client.callTool({ name, arguments: args }));
    if (!r.ok) return { isError: true, code: "", text: "protocol error: " + r.error.message };
    return { isError: !!r.value.isError, code: r.value._meta?.["isogate/code"] ?? "", text: text(r.value) };
  };
  const out = {};
  for (const [name, code] of Object.entries(programs)) out[name] = await call("call_tool_chain", { code });
  out.toolInfo = await call("tool_info", { tool_name: "everything.get_env" });
  out.passthrough = await call("get-env", {});
  return out;
});
