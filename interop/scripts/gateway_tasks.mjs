// Gateway-owned tasks through isogate, for the official TypeScript SDK
// client that declares tasks (its experimental tasks API): server-everything's
// simulate-research-query runs as a task to completion with status messages
// and is cancelled midway; call_tool_chain runs as a task; tasks/list shows
// the caller's tasks; an unknown task id is "not found".
// Flags: --foreign ID   a task id of another principal, to be not found.
// Needs a surface with both passthrough and call_tool_chain (expose both).
import { main, text, tapMessages, attempt } from "../lib/connect.mjs";

const tasksCaps = { tasks: { list: {}, cancel: {} } };

await main(async (client, opts) => {
  const out = {};
  const tools = (await client.listTools()).tools;
  const exec = (name) => tools.find((t) => t.name === name)?.execution ?? null;
  out.execution = { research: exec("simulate-research-query"), chain: exec("call_tool_chain"), sum: exec("get-sum") };
  out.serverTasks = client.getServerCapabilities()?.tasks ?? null;
  const seen = tapMessages(client);

  // To completion: the SDK creates the task (the tool is listed with
  // taskSupport), polls tasks/get and reads tasks/result.
  const run = { statuses: [], messages: [] };
  for await (const m of client.experimental.tasks.callToolStream(
    { name: "simulate-research-query", arguments: { topic: "interop" } })) {
    if (m.type === "taskCreated") run.taskId = m.task.taskId;
    if (m.type === "taskStatus") { run.statuses.push(m.task.status); if (m.task.statusMessage) run.messages.push(m.task.statusMessage); }
    if (m.type === "result") run.result = { isError: !!m.result.isError, text: text(m.result), meta: m.result._meta ?? null };
    if (m.type === "error") run.error = String(m.error?.message ?? m.error);
  }
  out.run = run;
  out.statusNotifications = seen.filter((m) => m.method === "notifications/tasks/status").map((m) => m.params.status);

  // Cancelled midway: at the first status that is still working.
  const cancel = { statuses: [] };
  for await (const m of client.experimental.tasks.callToolStream(
    { name: "simulate-research-query", arguments: { topic: "cancel" } })) {
    if (m.type === "taskCreated") {
      cancel.taskId = m.task.taskId;
      const c = await client.experimental.tasks.cancelTask(m.task.taskId);
      cancel.cancelAnswer = c.status;
    }
    if (m.type === "taskStatus") cancel.statuses.push(m.task.status);
    if (m.type === "result") cancel.result = text(m.result);
    if (m.type === "error") cancel.error = String(m.error?.message ?? m.error);
  }
  cancel.after = (await client.experimental.tasks.getTask(cancel.taskId)).status;
  cancel.again = await attempt(() => client.experimental.tasks.cancelTask(cancel.taskId));
  out.cancel = cancel;

  // A program as a task.
  const chain = { messages: [] };
  for await (const m of client.experimental.tasks.callToolStream({ name: "call_tool_chain", arguments: {
    code: `const r = await everything.simulate_research_query({topic: "chain"}); return r` } })) {
    if (m.type === "taskCreated") chain.taskId = m.task.taskId;
    if (m.type === "taskStatus" && m.task.statusMessage) chain.messages.push(m.task.statusMessage);
    if (m.type === "result") chain.result = { isError: !!m.result.isError, text: text(m.result) };
    if (m.type === "error") chain.error = String(m.error?.message ?? m.error);
  }
  out.chain = chain;

  out.list = (await client.experimental.tasks.listTasks()).tasks.map((t) => ({ id: t.taskId, status: t.status }));
  out.unknown = await attempt(() => client.experimental.tasks.getTask("0123456789abcdef0123456789abcdef"));
  if (opts.flags.foreign) {
    out.foreign = {
      get: await attempt(() => client.experimental.tasks.getTask(opts.flags.foreign)),
      result: await attempt(() => client.experimental.tasks.getTaskResult(opts.flags.foreign)),
      cancel: await attempt(() => client.experimental.tasks.cancelTask(opts.flags.foreign)),
    };
  }
  return out;
}, tasksCaps);
