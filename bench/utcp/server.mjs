// An MCP stdio server exposing UTCP code-mode (CodeModeUtcpClient from
// @utcp/code-mode) as one tool, call_tool_chain, with one MCP stdio server
// registered as its tool source through @utcp/mcp. isogate's bench talks to
// it with the same go-sdk client it uses for `isogate serve`.
//
//   node server.mjs MANUAL COMMAND [ARGS...]
//
// The backend's tools are reachable in programs as MANUAL.MANUAL_TOOL (UTCP
// names them MANUAL.SERVER.TOOL and code-mode joins the last parts with "_").
// The tool's result is the JSON of the program's result; a failed program is
// an error result carrying UTCP's log lines.
import util from "node:util";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
import "@utcp/mcp";
import { CodeModeUtcpClient } from "@utcp/code-mode";

// UTCP logs with console.log; stdout carries the MCP protocol.
for (const level of ["log", "info", "warn", "debug"]) {
  console[level] = (...args) => process.stderr.write(util.format(...args) + "\n");
}

const [manual, command, ...args] = process.argv.slice(2);
if (!manual || !command) {
  process.stderr.write("usage: node server.mjs MANUAL COMMAND [ARGS...]\n");
  process.exit(2);
}

const client = await CodeModeUtcpClient.create(process.cwd(), {
  manual_call_templates: [{
    name: manual,
    call_template_type: "mcp",
    config: { mcpServers: { [manual]: { transport: "stdio", command, args } } },
  }],
});
if ((await client.getTools()).length === 0) {
  process.stderr.write(`no tools discovered from ${command}\n`);
  process.exit(1);
}

const server = new McpServer({ name: "utcp-code-mode-bench", version: "1.0.0" });
server.registerTool("call_tool_chain", {
  description: "Runs a program through UTCP code-mode's callToolChain.",
  inputSchema: { code: z.string(), timeout: z.number().optional() },
}, async ({ code, timeout }) => {
  const { result, logs } = await client.callToolChain(code, timeout ?? 30000);
  const failed = logs.find((l) => l.startsWith("[ERROR] Code execution failed"));
  if (failed) {
    return { isError: true, content: [{ type: "text", text: logs.join("\n") }] };
  }
  return { content: [{ type: "text", text: JSON.stringify(result ?? null) }] };
});

const transport = new StdioServerTransport();
// The client closing stdin ends the run (the backend child goes with us).
process.stdin.on("end", () => process.exit(0));
await server.connect(transport);
