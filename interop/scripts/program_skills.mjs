// The official TypeScript SDK client, as one principal: saves a program
// when --save NAME is given (save_program), then lists isogate's skills
// (skills/list), gets each (skills/get) and reads every file of each with
// resources/read, verifying it against the entry (URI, byte size, SHA-256
// digest); also asks for --ask URI with skills/get and resources/read.
// The Go test (program_skills_test.go) judges the report.
import { createHash } from "node:crypto";
import { z } from "zod";
import { attempt, main, text } from "../lib/connect.mjs";

const Entry = z.object({ uri: z.string(), frontmatter: z.record(z.unknown()), resources: z.union([z.literal("dynamic"), z.array(z.object({ uri: z.string(), digest: z.string(), size: z.number() }))]) }).passthrough();
const ListResult = z.object({ skills: z.array(Entry) }).passthrough();
const GetResult = z.object({ skill: Entry }).passthrough();

await main(async (client, opts) => {
  const out = { skills: [], resources: [] };
  if (opts.flags.save) {
    const saved = await client.callTool({ name: "save_program", arguments: {
      name: opts.flags.save, description: `Adds two numbers for ${opts.flags.save}.`,
      code: "return args.a + args.b; // " + opts.flags.save + (opts.flags.tag ? " " + opts.flags.tag : ""), parameters: "{ a: number; b: number }" } });
    out.saved = saved.isError ? text(saved) : "ok";
  }
  const list = await client.request({ method: "skills/list", params: {} }, ListResult);
  for (const e of list.skills) {
    const got = await client.request({ method: "skills/get", params: { uri: e.uri } }, GetResult);
    const skill = { uri: e.uri, frontmatter: e.frontmatter, getEqual: JSON.stringify(got.skill) === JSON.stringify(e), files: [] };
    for (const r of e.resources === "dynamic" ? [] : e.resources) {
      const res = await client.readResource({ uri: r.uri });
      const c = res.contents[0];
      const bytes = c.blob !== undefined ? Buffer.from(c.blob, "base64") : Buffer.from(c.text, "utf8");
      const digest = "sha256:" + createHash("sha256").update(bytes).digest("hex");
      skill.files.push({ uri: r.uri, verified: c.uri === r.uri && bytes.length === r.size && digest === r.digest, text: bytes.toString("utf8") });
    }
    out.skills.push(skill);
  }
  out.resources = (await client.listResources()).resources.map((r) => r.uri).filter((u) => u.startsWith("skill://")).sort();
  if (opts.flags.ask) {
    const g = await attempt(() => client.request({ method: "skills/get", params: { uri: opts.flags.ask } }, GetResult));
    const r = await attempt(() => client.readResource({ uri: opts.flags.ask.replace(/SKILL\.md$/, "program.ts") }));
    out.asked = { get: g.ok ? "answered" : g.error.code, read: r.ok ? "answered" : r.error.code };
  }
  return out;
});
