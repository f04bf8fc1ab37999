// A stdio MCP backend, built on the official TypeScript SDK's server, that
// records every tool call it receives: one line "tool:id" appended to the
// file named by its first argument, before it answers. Its tools bump,
// write and wipe each take {id: string, by?: number}.
//
//   node recording_backend.mjs RECORD_FILE
import { appendFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const record = process.argv[2];
if (!record) throw new Error("usage: recording_backend.mjs RECORD_FILE");

const server = new McpServer({ name: "counter", version: "1.0.0" });
for (const [name, description] of [["bump", "Bumps a counter."], ["write", "Writes a record."], ["wipe", "Wipes a record."]]) {
  server.registerTool(name, { description, inputSchema: { id: z.string(), by: z.number().optional() } }, async ({ id }) => {
    appendFileSync(record, `${name}:${id}\n`);
    return { content: [{ type: "text", text: JSON.stringify({ ok: true, [name]: id }) }] };
  });
}
await server.connect(new StdioServerTransport());
