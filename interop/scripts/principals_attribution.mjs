// Backend requests and log messages stay with the principal whose call
// caused them (issue 32): three principals connect with the official
// TypeScript SDK client, each with its own token (--alice, --bob, --token
// for carol), each answering sampling and elicitation as itself and
// recording what it is asked and which log messages it receives.
//
// bob's passthrough trigger-sampling-request is held in flight (his
// handler waits until released) while alice's call_tool_chain programs
// call server-everything's trigger_sampling_request with her secret
// (--secret) and trigger_elicitation_request; then alice's program runs
// alone. No sleeps: each step waits for the event it needs.
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { main, attempt, text, connect } from "../lib/connect.mjs";

const capabilities = { sampling: {}, elicitation: { form: {} } };

// answer makes client answer as name, recording what it was asked (hold,
// when set, handles the first sampling request instead) and its logs.
function answer(client, name, logs, hold) {
  const asked = [];
  let first = true;
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    if (hold && first) {
      first = false;
      return hold(req);
    }
    const prompt = req.params.messages[0]?.content?.text ?? "";
    asked.push("sampling: " + prompt);
    return { model: name + "-model", role: "assistant", content: { type: "text", text: name + " answers " + prompt } };
  });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push("elicitation: " + req.params.message);
    return { action: "decline" };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(typeof n.params.data === "string" ? n.params.data : JSON.stringify(n.params.data));
  });
  return asked;
}

await main(async (carol, opts) => {
  const secret = opts.flags.secret;
  const logs = { alice: [], bob: [], carol: [] };
  const alice = await connect({ ...opts, token: opts.flags.alice }, capabilities);
  const bob = await connect({ ...opts, token: opts.flags.bob }, capabilities);

  let inFlight, release;
  const bobInFlight = new Promise((resolve) => { inFlight = resolve; });
  const released = new Promise((resolve) => { release = resolve; });
  const asked = {
    alice: answer(alice, "alice", logs.alice),
    bob: answer(bob, "bob", logs.bob, async () => {
      inFlight();
      await released;
      return { model: "bob-model", role: "assistant", content: { type: "text", text: "bob held" } };
    }),
    carol: answer(carol, "carol", logs.carol),
  };
  for (const c of [alice, bob, carol]) await c.setLoggingLevel("debug");

  const call = async (client, name, args) => {
    const r = await attempt(() => client.callTool({ name, arguments: args }));
    return r.ok ? { ok: true, isError: !!r.value.isError, text: text(r.value) } : r;
  };
  const program = (code) => call(alice, "call_tool_chain", { code });

  const bobCall = call(bob, "trigger-sampling-request", { prompt: "bob's own" });
  await bobInFlight;
  const refused = {
    sampling: await program(`try { return await everything.trigger_sampling_request({prompt: ${JSON.stringify(secret)}}) } catch (e) { return "refused: " + e.message }`),
    elicitation: await program(`try { return await everything.trigger_elicitation_request({}) } catch (e) { return "refused: " + e.message }`),
  };
  release();
  const bobResult = await bobCall;
  const alone = await program(`return await everything.trigger_sampling_request({prompt: "alone"})`);
  await alice.close().catch(() => {});
  await bob.close().catch(() => {});
  return {
    bobCall: bobResult,
    refused,
    alone,
    aliceAsked: asked.alice,
    bobAsked: asked.bob,
    carolAsked: asked.carol,
    logs,
  };
}, capabilities);
