// What passthrough forwards besides calls, through the official TypeScript
// SDK client connected with ?expose=passthrough: a backend's progress
// (server-everything's trigger-long-running-operation) under the client's
// own token, its log messages (toggle-simulated-logging sends one at once)
// at the client's level and tagged with the backend, and completion/complete
// for a backend prompt and resource template.
import {
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { main, attempt, text, tapMessages } from "../lib/connect.mjs";

// signal: wait() resolves on the first fire(), or after
// ms as a bound (the caller then reports what it has).
function signal(ms) {
  let fire;
  const p = new Promise((resolve) => {
    fire = resolve;
    setTimeout(resolve, ms);
  });
  return { fire, wait: () => p };
}

await main(async (client) => {
  const out = {};
  out.capabilities = Object.keys(client.getServerCapabilities() ?? {}).sort();
  out.tools = (await client.listTools()).tools.map((t) => t.name);

  // Progress: what reached onprogress and, in order, what the server sent
  // (see tapMessages: a notification in the chunk of its response may miss
  // onprogress).
  const seen = tapMessages(client);
  const progress = [];
  const long = await attempt(() => client.callTool(
    { name: "trigger-long-running-operation", arguments: { duration: 0.3, steps: 3 } },
    undefined,
    { onprogress: (p) => progress.push(p) },
  ));
  out.long = long.ok ? { isError: !!long.value.isError, text: text(long.value) } : long;
  out.progress = progress;
  out.wire = seen.map((m) => m.method === "notifications/progress"
    ? { progress: m.params.progress, total: m.params.total, token: m.params.progressToken }
    : { method: m.method ?? null, response: m.id !== undefined && m.method === undefined, id: m.id ?? null });

  // Logging: the backend logs once at once when simulated logging starts.
  const logs = [];
  const logged = signal(20000);
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(n.params);
    logged.fire();
  });
  out.setLevel = await attempt(() => client.setLoggingLevel("debug"));
  const on = await attempt(() => client.callTool({ name: "toggle-simulated-logging", arguments: {} }));
  await logged.wait();
  const off = await attempt(() => client.callTool({ name: "toggle-simulated-logging", arguments: {} }));
  out.toggle = { on: on.ok && !on.value.isError, off: off.ok && !off.value.isError };
  out.logs = logs.map((l) => ({ level: l.level, logger: l.logger ?? null, data: l.data }));

  // Completion: the prompts are published once the backend is up; wait for
  // completable-prompt through prompts/list_changed.
  let changed = signal(0);
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => changed.fire());
  const deadline = Date.now() + 20000;
  for (;;) {
    changed = signal(Math.max(0, deadline - Date.now()));
    const names = (await client.listPrompts()).prompts.map((p) => p.name);
    if (names.includes("completable-prompt") || Date.now() > deadline) break;
    await changed.wait();
  }
  const complete = (ref, name, value, context) => attempt(async () =>
    (await client.complete({ ref, argument: { name, value }, ...(context ? { context } : {}) })).completion);
  const prompt = { type: "ref/prompt", name: "completable-prompt" };
  out.complete = {
    department: await complete(prompt, "department", "E"),
    name: await complete(prompt, "name", "A", { arguments: { department: "Engineering" } }),
    template: await complete({ type: "ref/resource", uri: "demo://resource/dynamic/text/{resourceId}" }, "resourceId", "7"),
    unknown: await complete({ type: "ref/prompt", name: "no-such-prompt" }, "x", ""),
  };
  return out;
});
