// A stdio MCP backend, built on the official TypeScript SDK's server, that
// declares the Skills extension (io.modelcontextprotocol/skills) and serves
// one skill at skill://refunds (SKILL.md and examples/email.md), written
// the LABEL way, through skills/list, skills/get and resources/read. With
// a second argument "private" it also serves skill://private.
//
//   node skills_backend.mjs LABEL [private]
import { createHash } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { McpError, ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const label = process.argv[2];
if (!label) throw new Error("usage: skills_backend.mjs LABEL [private]");

const skills = {
  refunds: {
    "SKILL.md": `---\nname: refunds\ndescription: Refund the ${label} way — «vite»\nlicense: MIT\n---\n# Refunds at ${label}\n\nSee [the email](examples/email.md).\n`,
    "examples/email.md": `Dear customer, your refund from ${label} is on its way.\n`,
  },
};
if (process.argv[3] === "private") skills.private = { "SKILL.md": "---\nname: private\ndescription: a secret\n---\nsecret\n" };

const digest = (text) => "sha256:" + createHash("sha256").update(Buffer.from(text, "utf8")).digest("hex");
const entries = Object.entries(skills).map(([name, files]) => ({
  uri: `skill://${name}/SKILL.md`,
  frontmatter: { name, description: files["SKILL.md"].split("\n")[2].slice("description: ".length), ...(name === "refunds" ? { license: "MIT" } : {}) },
  resources: Object.entries(files).map(([path, text]) => ({ uri: `skill://${name}/${path}`, digest: digest(text), size: Buffer.byteLength(text, "utf8") })),
}));

const server = new McpServer({ name: `skills-${label}`, version: "1.0.0" },
  { capabilities: { resources: {}, extensions: { "io.modelcontextprotocol/skills": {} } } });
server.registerTool("echo", { description: "Echoes.", inputSchema: { message: z.string() } }, async ({ message }) => ({ content: [{ type: "text", text: message }] }));
for (const [name, files] of Object.entries(skills)) {
  for (const [path, text] of Object.entries(files)) {
    const uri = `skill://${name}/${path}`;
    server.registerResource(`${name}/${path}`, uri, { mimeType: "text/markdown" }, async () => ({ contents: [{ uri, mimeType: "text/markdown", text }] }));
  }
}
const cacheable = { ttlMs: 0, cacheScope: "public", resultType: "complete" };
server.server.setRequestHandler(z.object({ method: z.literal("skills/list"), params: z.object({}).passthrough().optional() }),
  async () => ({ skills: entries, ...cacheable }));
server.server.setRequestHandler(z.object({ method: z.literal("skills/get"), params: z.object({ uri: z.string() }).passthrough() }),
  async (req) => {
    const skill = entries.find((e) => e.uri === req.params.uri);
    if (!skill) throw new McpError(ErrorCode.InvalidParams, `No skill is served at ${req.params.uri}`);
    return { skill, ...cacheable };
  });
await server.connect(new StdioServerTransport());
