// The official TypeScript SDK client, as a host would, finds isogate's
// declaration of the Skills extension, lists its skills (skills/list),
// gets each (skills/get), reads every file of each with resources/read and
// verifies it against the entry: the URI, the byte size and the SHA-256
// digest. It also asks for skills isogate must not serve, and lists the
// resources. The Go test (skills_test.go) judges the report.
import { createHash } from "node:crypto";
import { z } from "zod";
import { attempt, main } from "../lib/connect.mjs";

const Entry = z.object({ uri: z.string(), frontmatter: z.record(z.unknown()), resources: z.union([z.literal("dynamic"), z.array(z.object({ uri: z.string(), digest: z.string(), size: z.number() }))]) }).passthrough();
const ListResult = z.object({ skills: z.array(Entry), nextCursor: z.string().optional() }).passthrough();
const GetResult = z.object({ skill: Entry }).passthrough();

await main(async (client) => {
  const caps = client.getServerCapabilities();
  const out = { declared: caps?.extensions?.["io.modelcontextprotocol/skills"] !== undefined && caps?.resources !== undefined, skills: [], refused: {} };
  const list = await client.request({ method: "skills/list", params: {} }, ListResult);
  for (const e of list.skills) {
    const got = await client.request({ method: "skills/get", params: { uri: e.uri } }, GetResult);
    const skill = { uri: e.uri, frontmatter: e.frontmatter, getEqual: JSON.stringify(got.skill) === JSON.stringify(e), files: [] };
    for (const r of e.resources === "dynamic" ? [] : e.resources) {
      const res = await client.readResource({ uri: r.uri });
      const c = res.contents[0];
      const bytes = c.blob !== undefined ? Buffer.from(c.blob, "base64") : Buffer.from(c.text, "utf8");
      const digest = "sha256:" + createHash("sha256").update(bytes).digest("hex");
      skill.files.push({ uri: r.uri, readURI: c.uri, verified: c.uri === r.uri && bytes.length === r.size && digest === r.digest, text: bytes.toString("utf8") });
    }
    out.skills.push(skill);
  }
  for (const uri of ["skill://refunds/SKILL.md", "skill://beta/private/SKILL.md"]) {
    const g = await attempt(() => client.request({ method: "skills/get", params: { uri } }, GetResult));
    const r = await attempt(() => client.readResource({ uri }));
    out.refused[uri] = { get: g.ok ? "answered" : g.error.code, read: r.ok ? "answered" : r.error.code };
  }
  // The backends' resource lists are aggregated in the background once
  // they are up: wait (at most 20 s) until both refunds skills are listed.
  const deadline = Date.now() + 20000;
  for (;;) {
    out.resources = (await client.listResources()).resources.map((r) => r.uri).filter((u) => u.startsWith("skill://")).sort();
    if (out.resources.filter((u) => u.endsWith("/refunds/SKILL.md")).length >= 2 || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return out;
});
