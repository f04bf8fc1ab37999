// Captures the tools/list of real MCP servers into catalogs/<name>.json,
// with the official TypeScript SDK client over stdio. Run by capture.sh,
// from the temporary directory where it installed the pinned servers.
// Usage: node capture.mjs OUTDIR NAME=PACKAGE@VERSION ...
// No credentials are needed: servers that want a token are given a
// placeholder, as tools/list never calls their API.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [outDir, ...specs] = process.argv.slice(2);
const placeholder = "placeholder-not-a-credential";
const env = {
  ...process.env,
  GITHUB_PERSONAL_ACCESS_TOKEN: placeholder,
  GITLAB_PERSONAL_ACCESS_TOKEN: placeholder,
  SLACK_BOT_TOKEN: placeholder,
  SLACK_TEAM_ID: placeholder,
  GOOGLE_MAPS_API_KEY: placeholder,
  BRAVE_API_KEY: placeholder,
};
for (const spec of specs) {
  const [name, pkgAt] = spec.split("=");
  const at = pkgAt.lastIndexOf("@");
  const pkg = pkgAt.slice(0, at), version = pkgAt.slice(at + 1);
  const bin = join("node_modules", ".bin", "mcp-server-" + name);
  // server-filesystem needs an allowed directory: an empty temporary one.
  const args = name === "filesystem" ? [mkdtempSync(join(tmpdir(), "searchbench-fs-"))] : [];
  const client = new Client({ name: "isogate-searchbench-capture", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: bin, args, env, stderr: "ignore" }));
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  await client.close();
  const out = { server: pkg, version, tools };
  writeFileSync(join(outDir, name + ".json"), JSON.stringify(out, null, 2) + "\n");
  console.log(`${name}: ${tools.length} tools (${pkg}@${version})`);
}
