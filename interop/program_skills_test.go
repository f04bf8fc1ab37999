package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// programSkillsReport is the report of scripts/program_skills.mjs.
type programSkillsReport struct {
	Saved  string
	Skills []struct {
		URI         string
		Frontmatter map[string]any
		GetEqual    bool
		Files       []struct {
			URI, Text string
			Verified  bool
		}
	}
	Resources []string
	Asked     struct{ Get, Read any }
}

// TestTypeScriptSDKSavedProgramsAreSkills: a program alice saves with
// save_program is served to her as a skill (issue 45), seen by the official
// TypeScript SDK client: skills/list has skill://isogate/programs/<name>/
// SKILL.md (frontmatter name and description), skills/get answers it as
// listed, and both files (SKILL.md, program.ts with her code) read with the
// size and SHA-256 digest the entry says; resources/list lists them; after
// a second save both files are the second version's. Bob,
// another principal on the same gateway, lists no skill, and asking for
// alice's by URI is refused (-32602) for skills/get and resources/read.
func TestTypeScriptSDKSavedProgramsAreSkills(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	everything := filepath.Join(repoRoot, "examples", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	cfg := fmt.Sprintf(`server:
  auth:
    mode: token
    tokens:
      alice: {token: %q}
      bob: {token: %q}
store:
  data_dir: %q
backends:
  everything:
    command: node
    args: [%q, stdio]
sandbox:
  isolation: process
`, principalTokens["alice"], principalTokens["bob"], filepath.Join(dir, "data"), everything)
	file := filepath.Join(dir, "isogate.yaml")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	gw := startHTTPWith(file)
	t.Cleanup(func() {
		if gw.cmd != nil && gw.cmd.Process != nil {
			_ = gw.cmd.Process.Signal(syscall.SIGTERM)
			_ = gw.cmd.Wait()
		}
	})
	if gw.err != nil {
		t.Fatalf("HTTP gateway: %v\n%s", gw.err, gw.logs)
	}
	const uri = "skill://isogate/programs/add-for-alice/SKILL.md"
	var a programSkillsReport
	runNodeInto(t, &a, "program_skills.mjs", "--save", "add_for_alice", "--http", gw.url, "--token", principalTokens["alice"])
	if a.Saved != "ok" {
		t.Fatalf("save_program: %s", a.Saved)
	}
	if len(a.Skills) != 1 || a.Skills[0].URI != uri {
		t.Fatalf("alice's skills/list: %+v, want her program's skill %s\n%s", a.Skills, uri, gw.logs)
	}
	s := a.Skills[0]
	if s.Frontmatter["name"] != "add-for-alice" || s.Frontmatter["description"] != "Adds two numbers for add_for_alice." || !s.GetEqual {
		t.Errorf("frontmatter %v, skills/get as listed %v", s.Frontmatter, s.GetEqual)
	}
	if len(s.Files) != 2 {
		t.Fatalf("%d files, want SKILL.md and program.ts: %+v", len(s.Files), s.Files)
	}
	for _, f := range s.Files {
		if !f.Verified {
			t.Errorf("%s: size or digest differ from the entry", f.URI)
		}
		if strings.HasSuffix(f.URI, "/program.ts") && !strings.Contains(f.Text, "return args.a + args.b; // add_for_alice") {
			t.Errorf("program.ts: %q, want alice's code", f.Text)
		}
	}
	if want := []string{uri, strings.TrimSuffix(uri, "SKILL.md") + "program.ts"}; fmt.Sprint(a.Resources) != fmt.Sprint(want) {
		t.Errorf("alice's skill resources: %v, want %v", a.Resources, want)
	}
	// A second version is served in place of the first (versions are
	// rendered once each, never confused).
	var a2 programSkillsReport
	runNodeInto(t, &a2, "program_skills.mjs", "--save", "add_for_alice", "--tag", "second", "--http", gw.url, "--token", principalTokens["alice"])
	if len(a2.Skills) != 1 || len(a2.Skills[0].Files) != 2 {
		t.Fatalf("after a second save: %+v", a2.Skills)
	}
	for _, f := range a2.Skills[0].Files {
		if !f.Verified || !strings.Contains(f.Text, "add_for_alice@2") && !strings.Contains(f.Text, "// add_for_alice second") {
			t.Errorf("after a second save, %s (verified %v): %q", f.URI, f.Verified, f.Text)
		}
	}
	var b programSkillsReport
	runNodeInto(t, &b, "program_skills.mjs", "--ask", uri, "--http", gw.url, "--token", principalTokens["bob"])
	if len(b.Skills) != 0 || len(b.Resources) != 0 {
		t.Errorf("bob sees alice's skill: skills %+v, resources %v", b.Skills, b.Resources)
	}
	if fmt.Sprint(b.Asked.Get) != "-32602" || b.Asked.Read == "answered" {
		t.Errorf("bob asking for %s: skills/get %v, resources/read %v; want both refused", uri, b.Asked.Get, b.Asked.Read)
	}
}
