// What an agent reads from the meta-tools when a backend is down (its
// command does not exist), through the official TypeScript SDK client:
// tool_info for one of its tools, list_tools_meta and search_tools. Run
// with --wait no: the backends are never all healthy.
import { main, text } from "../lib/connect.mjs";

await main(async (client) => {
  const call = async (name, args) => {
    const r = await client.callTool({ name, arguments: args });
    return { isError: !!r.isError, text: text(r) };
  };
  return {
    toolInfo: await call("tool_info", { tool_name: "ghost.anything" }),
    list: await call("list_tools_meta", {}),
    search: await call("search_tools", { query: "anything" }),
  };
});
