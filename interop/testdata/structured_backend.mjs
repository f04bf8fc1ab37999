// A stdio MCP backend, built on the official TypeScript SDK's server, whose
// tools answer as TypeScript servers commonly do: `stat` with an
// outputSchema, structuredContent and the same object as indented JSON text
// (JSON.stringify(out, null, 2), keys in insertion order); `fail` with
// isError and a message with a stack.
//
//   node structured_backend.mjs
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "counter", version: "1.0.0" });
server.registerTool("stat", {
  description: "Reads a counter.",
  inputSchema: { key: z.string() },
  outputSchema: { value: z.number(), key: z.string(), updated: z.string(), tags: z.array(z.string()) },
}, async ({ key }) => {
  const out = { value: 42, key, updated: "2026-11-29T04:00:00Z", tags: ["<a>", "b&c", "é"] };
  return { content: [{ type: "text", text: JSON.stringify(out, null, 2) }], structuredContent: out };
});
server.registerTool("fail", { description: "Always fails.", inputSchema: { key: z.string() } }, async ({ key }) => {
  const err = new Error(`counter ${key} is locked by another writer`);
  return { isError: true, content: [{ type: "text", text: err.stack }] };
});
await server.connect(new StdioServerTransport());
