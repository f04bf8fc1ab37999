// Saved programs (issue 45) through the official TypeScript SDK client:
// alice saves a program and is told tools/list changed; it is listed as a
// tool to another session of hers, called there directly, from a program
// (programs.<name>) and as a task (callToolStream); bob neither lists nor
// calls it until the admin publishes it to him.
// Flags: --bob TOKEN  --admin TOKEN  (the connection's --token is alice's).
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { main, connect, attempt, text } from "../lib/connect.mjs";

const tasksCaps = { tasks: { list: {}, cancel: {} } };

// changedSignal resolves on the first tools/list_changed, or false after ms.
function changedSignal(client, ms) {
  let fire;
  const p = new Promise((resolve) => {
    fire = resolve;
    setTimeout(() => resolve(false), ms);
  });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => fire(true));
  return p;
}

const program = `const r = await everything.get_sum({ a: args.a, b: args.b });
return { sum: r, by: "saved" };`;

await main(async (alice, opts) => {
  const out = {};
  const as = (token, caps = {}) => connect({ http: opts.http, token, flags: {} }, caps);
  const names = async (c) => (await c.listTools()).tools.map((t) => t.name);
  const call = async (c, name, args) => {
    const r = await attempt(() => c.callTool({ name, arguments: args }));
    return r.ok ? { isError: !!r.value.isError, text: text(r.value), code: r.value._meta?.["isogate/code"] ?? null }
      : { isError: true, text: r.error.message, code: null };
  };

  await alice.listTools();
  const changed = changedSignal(alice, 20000);
  out.save = await call(alice, "save_program", { name: "sum_pair", description: "Adds a and b with everything.get_sum.",
    code: program, parameters: "{ a: number; b: number }" });
  out.listChanged = await changed;

  const alice2 = await as(opts.token, tasksCaps);
  const tool = (await alice2.listTools()).tools.find((t) => t.name === "program_sum_pair");
  out.listed = tool ? { description: tool.description, required: tool.inputSchema?.required ?? [],
    properties: Object.keys(tool.inputSchema?.properties ?? {}), execution: tool.execution ?? null } : null;
  out.direct = await call(alice2, "program_sum_pair", { a: 2, b: 3 });
  out.fromProgram = await call(alice2, "call_tool_chain",
    { code: `const r = await programs.sum_pair({ a: 20, b: 22 }); return { inner: r }` });

  const task = { statuses: [] };
  for await (const m of alice2.experimental.tasks.callToolStream({ name: "program_sum_pair", arguments: { a: 5, b: 6 } })) {
    if (m.type === "taskCreated") task.taskId = m.task.taskId;
    if (m.type === "taskStatus") task.statuses.push(m.task.status);
    if (m.type === "result") task.result = { isError: !!m.result.isError, text: text(m.result) };
    if (m.type === "error") task.error = String(m.error?.message ?? m.error);
  }
  out.task = task;

  const bob = await as(opts.flags.bob);
  out.bobBefore = { listed: (await names(bob)).includes("program_sum_pair"),
    call: await call(bob, "program_sum_pair", { a: 1, b: 1 }) };
  const admin = await as(opts.flags.admin);
  out.publish = await call(admin, "programs", { action: "publish", owner: "alice", name: "sum_pair", to: ["bob"] });
  out.bobAfter = { listed: (await names(bob)).includes("program_sum_pair"),
    call: await call(bob, "program_sum_pair", { a: 1, b: 1 }) };
  for (const c of [alice2, bob, admin]) await c.close().catch(() => {});
  return out;
});
