// Input inside a gateway-owned task (2025-11-25), for the official
// TypeScript SDK client that declares tasks and elicitation: a
// call_tool_chain program run as a task calls a tool under approval
// (tools.approve); the task shows input_required in tasks/get; the SDK
// then reads tasks/result, on which the approval's elicitation arrives
// (tied to the task by _meta); the handler accepts and the task completes
// with the program's result. A backend's own elicitation inside a program
// run as a task travels the same way.
// Flags: --tool NAME   the tool under approval (default echo).
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { main, text } from "../lib/connect.mjs";

const capabilities = { tasks: { list: {}, cancel: {} }, elicitation: { form: {} } };

// runTask runs a program as a task and reports what the client saw.
async function runTask(client, code) {
  const run = { statuses: [] };
  for await (const m of client.experimental.tasks.callToolStream({ name: "call_tool_chain", arguments: { code } })) {
    if (m.type === "taskCreated") run.taskId = m.task.taskId;
    if (m.type === "taskStatus") run.statuses.push(m.task.status);
    if (m.type === "result") run.result = { isError: !!m.result.isError, text: text(m.result) };
    if (m.type === "error") run.error = String(m.error?.message ?? m.error);
  }
  run.after = (await client.experimental.tasks.getTask(run.taskId)).status;
  return run;
}

await main(async (client, opts) => {
  const asked = [];
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push({ message: req.params.message, relatedTask: req.params._meta?.["io.modelcontextprotocol/related-task"]?.taskId ?? null });
    if (req.params.requestedSchema && Object.keys(req.params.requestedSchema.properties ?? {}).length > 0) {
      return { action: "accept", content: { name: "Ada", check: true, integer: 7 } };
    }
    return { action: "accept", content: {} };
  });
  await client.listTools(); // the SDK learns call_tool_chain is task-capable
  const tool = (opts.flags.tool ?? "echo").replaceAll("-", "_");
  const out = {};
  out.approval = await runTask(client, `const r = await everything.${tool}({message: "approved in a task"}); return r`);
  out.approvalAsked = asked.splice(0);
  if (opts.flags.backend === "yes") {
    out.backend = await runTask(client, `return await everything.trigger_elicitation_request({})`);
    out.backendAsked = asked.splice(0);
  }
  return out;
}, capabilities);
