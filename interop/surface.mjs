// Exercises isogate's passthrough tools, aggregated prompts and resources
// with the official TypeScript SDK client (which validates every result with
// zod, and structuredContent against outputSchema). Tools and prompts are
// called by the backend's own names (server.tool_names auto, one backend).
// Usage:
//   node surface.mjs http://127.0.0.1:PORT/mcp?expose=both
// Prints one JSON object with what it saw; exits 1 on any error.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const url = new URL(process.argv[2]);
const client = new Client({ name: "isogate-interop", version: "1.0.0" });
let changed = () => {};
client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed());
await client.connect(new StreamableHTTPClientTransport(url));

// Backends connect in the background: wait for server-everything's tools
// (announced with notifications/tools/list_changed), bounded.
const deadline = Date.now() + 30000;
let tools = (await client.listTools()).tools;
while (!tools.some((t) => t.name === "echo")) {
  if (Date.now() > deadline) throw new Error("echo never listed: " + tools.map((t) => t.name));
  await new Promise((resolve) => { changed = resolve; setTimeout(resolve, 1000); });
  tools = (await client.listTools()).tools;
}
const sum = await client.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } });
const structured = await client.callTool({ name: "get-structured-content", arguments: { location: "Chicago" } });
let denied;
try {
  const r = await client.callTool({ name: "get-env", arguments: {} });
  denied = { isError: !!r.isError, text: r.content?.[0]?.text ?? "" };
} catch (e) {
  denied = { error: String(e.message ?? e) };
}
let prompts = (await client.listPrompts()).prompts;
while (prompts.length === 0) { // isogate has no prompts of its own
  if (Date.now() > deadline) throw new Error("no backend prompt listed");
  await new Promise((resolve) => setTimeout(resolve, 200));
  prompts = (await client.listPrompts()).prompts;
}
const simple = prompts.find((p) => !(p.arguments ?? []).some((a) => a.required));
const prompt = await client.getPrompt({ name: simple.name, arguments: {} });
const resources = (await client.listResources()).resources;
const backendResource = resources.find((r) => !r.uri.startsWith("isogate:"));
const read = await client.readResource({ uri: backendResource.uri });
const templates = (await client.listResourceTemplates()).resourceTemplates;
console.log(JSON.stringify({
  tools: tools.map((t) => t.name),
  sum: sum.content,
  structured: structured.structuredContent,
  denied,
  prompts: prompts.map((p) => p.name),
  prompt: { name: simple.name, messages: prompt.messages.length },
  resources: resources.map((r) => r.uri),
  read: { uri: backendResource.uri, contents: read.contents.length },
  templates: templates.map((t) => t.uriTemplate),
}));
await client.close();
