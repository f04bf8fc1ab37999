// Shared helpers for the interop scripts: connect the official TypeScript
// SDK client to isogate over stdio or streamable HTTP, and print one JSON
// report on stdout for the Go test to decode.
//
// Every script takes the same connection arguments:
//   --http URL [--token T]        streamable HTTP (with a bearer token)
//   --stdio CMD ARG...            stdio: everything after --stdio is the command
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

// parseArgs splits argv into connection options and the script's own flags
// (--name value pairs before --stdio).
export function parseArgs(argv = process.argv.slice(2)) {
  const opts = { flags: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--stdio") {
      opts.stdio = argv.slice(i + 1);
      break;
    }
    if (a === "--http") opts.http = argv[++i];
    else if (a === "--token") opts.token = argv[++i];
    else if (a.startsWith("--")) opts.flags[a.slice(2)] = argv[++i];
    else throw new Error(`unexpected argument ${a}`);
  }
  if (!opts.http && !opts.stdio) throw new Error("need --http URL or --stdio CMD ARGS...");
  return opts;
}

// transportFor builds the SDK transport the options ask for.
export function transportFor(opts) {
  if (opts.stdio) {
    const [command, ...args] = opts.stdio;
    return new StdioClientTransport({ command, args, stderr: "ignore" });
  }
  const headers = opts.token ? { Authorization: `Bearer ${opts.token}` } : {};
  return new StreamableHTTPClientTransport(new URL(opts.http), { requestInit: { headers } });
}

// connect returns a connected SDK client (initialize handshake done).
export async function connect(opts = parseArgs(), capabilities = {}) {
  const client = new Client({ name: "isogate-interop", version: "1.0.0" }, { capabilities });
  await client.connect(transportFor(opts));
  return client;
}

// errorInfo turns a thrown error into plain data: the MCP/JSON-RPC code
// (undefined when the error did not come from the server) and the message.
export function errorInfo(err) {
  return { code: err?.code, name: err?.name, message: String(err?.message ?? err) };
}

// attempt runs fn and returns {ok: true, value} or {ok: false, error}.
export async function attempt(fn) {
  try {
    return { ok: true, value: await fn() };
  } catch (err) {
    return { ok: false, error: errorInfo(err) };
  }
}

// report prints the single JSON object the Go side decodes, then exits
// (a stdio child or an HTTP keep-alive must not keep the script alive).
export function report(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
  process.exit(0);
}

// tapMessages records every message the client receives, in arrival order,
// before the SDK handles it. (The SDK runs notification handlers in a later
// microtask but settles responses at once, so a progress notification read
// in the same chunk as its response never reaches onprogress: count
// notifications here to see what the server sent.)
export function tapMessages(client) {
  const seen = [];
  const transport = client.transport;
  const handle = transport.onmessage;
  transport.onmessage = (message, extra) => {
    seen.push(message);
    handle?.call(transport, message, extra);
  };
  return seen;
}

// waitHealthy polls the isogate://backends resource until every backend is
// healthy (the gateway connects its backends in the background), failing
// after timeoutMs.
export async function waitHealthy(client, timeoutMs = 60000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await client.readResource({ uri: "isogate://backends" });
    const rows = JSON.parse(r.contents[0].text);
    if (rows.length > 0 && rows.every((b) => b.state === "healthy")) return rows;
    if (Date.now() > deadline) throw new Error("backends not healthy: " + r.contents[0].text);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// main runs a script body with a connected client and reports its result;
// an uncaught failure is reported as {fatal: ...} so the Go test shows it.
export async function main(body, capabilities = {}) {
  let client;
  try {
    const opts = parseArgs();
    client = await connect(opts, capabilities);
    if (opts.flags.wait !== "no") await waitHealthy(client);
    const out = await body(client, opts);
    await client.close().catch(() => {});
    report(out);
  } catch (err) {
    report({ fatal: errorInfo(err), stack: String(err?.stack ?? "") });
  }
}

// text returns the concatenated text content of a tool result.
export function text(result) {
  return (result?.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}
