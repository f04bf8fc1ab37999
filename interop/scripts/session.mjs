// The full client workflow through the official TypeScript SDK client:
// initialize, list everything (the SDK validates each response with its
// zod schemas; tools/list is also checked explicitly against
// ListToolsResultSchema), call every meta-tool, read every resource
// including a stored result, and the JSON-RPC codes of bad result reads.
// Reports one JSON object; the Go test (session_test.go) judges it.
import { z } from "zod";
import { ListToolsResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { main, attempt, text } from "../lib/connect.mjs";

await main(async (client) => {
  const out = {};
  out.server = client.getServerVersion();
  out.protocolVersion = client.transport?.protocolVersion ?? null;
  const caps = client.getServerCapabilities() ?? {};
  out.capabilities = Object.keys(caps).sort();

  // The raw tools/list response, validated explicitly.
  const raw = await client.request({ method: "tools/list", params: {} }, z.any());
  const parsed = ListToolsResultSchema.safeParse(raw);
  out.toolsListValid = parsed.success;
  out.toolsListIssues = parsed.success ? [] : parsed.error.issues;
  const tools = await client.listTools(); // validated by the SDK itself
  out.tools = Object.fromEntries(tools.tools.map((t) => [t.name, {
    annotations: t.annotations ?? null,
    hasOutputSchema: !!t.outputSchema,
  }]));

  out.resources = (await client.listResources()).resources.map((r) => r.uri).sort();
  out.templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate).sort();
  // Prompts: listed when advertised; otherwise the error must carry a real code.
  const prompts = await attempt(() => client.listPrompts());
  out.prompts = prompts.ok ? { ok: true, count: prompts.value.prompts.length } : prompts;

  const call = async (name, args) => {
    const r = await attempt(() => client.callTool({ name, arguments: args }));
    return r.ok ? { ok: true, isError: !!r.value.isError, text: text(r.value), structured: r.value.structuredContent ?? null } : r;
  };
  out.calls = {
    search_tools: await call("search_tools", { query: "echo message" }),
    tool_info: await call("tool_info", { tool_name: "everything.echo" }),
    list_tools_meta: await call("list_tools_meta", { page_size: 5 }),
    call_tool_chain: await call("call_tool_chain", {
      code: `const s = await everything.get_sum({a: 2, b: 3}); const e = await everything.echo({message: "hi"}); return {s, e};`,
    }),
    run_code: await call("run_code", { code: "const xs = [3, 1, 2]; console.log(xs.length); return xs.sort();" }),
    tool_error: await call("call_tool_chain", { code: `throw new Error("boom")` }),
  };

  // A large result is summarised with the URI of the full result.
  const big = await call("call_tool_chain", {
    code: `return Array.from({length: 400}, (_, i) => ({id: i, title: "item number " + i, tags: ["a", "b"]}));`,
  });
  const uri = /isogate:\/\/result\/[A-Za-z0-9_-]+/.exec(big.text ?? "")?.[0] ?? null;
  out.storedResultURI = uri;
  if (uri) out.calls.read_result = await call("read_result", { uri, limit: 2000 });

  const read = async (u) => {
    const r = await attempt(() => client.readResource({ uri: u }));
    if (!r.ok) return r;
    const c = r.value.contents;
    return { ok: true, count: c.length, mimeType: c[0]?.mimeType, textType: typeof c[0]?.text, length: (c[0]?.text ?? "").length, head: (c[0]?.text ?? "").slice(0, 200) };
  };
  out.reads = {};
  for (const u of [...out.resources, "isogate://backend/everything"]) out.reads[u] = await read(u);
  if (uri) {
    out.reads.stored = await read(uri);
    out.reads.storedPart = await read(uri + "/3/title");
    out.reads.storedBadPath = await read(uri + "/no_such_key");
  }
  out.reads.unknownResult = await read("isogate://result/doesnotexist");
  out.reads.unknownBackend = await read("isogate://backend/nope");
  out.reads.unknownScheme = await read("isogate://nothing-here");
  return out;
});
