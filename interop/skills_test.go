package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// skillsReport is the report of scripts/skills.mjs.
type skillsReport struct {
	Declared bool
	Skills   []struct {
		URI         string
		Frontmatter map[string]any
		GetEqual    bool
		Files       []struct {
			URI, ReadURI, Text string
			Verified           bool
		}
	}
	Refused   map[string]struct{ Get, Read any }
	Resources []string
}

// TestTypeScriptSDKSkillsOfTwoBackends: two TypeScript SDK backends
// (testdata/skills_backend.mjs) both serve skill://refunds, beta also
// skill://private, which backends.beta.resources.deny refuses. The official
// TypeScript SDK client (on 2025-11-25, the newest it speaks) sees isogate
// declare io.modelcontextprotocol/skills, lists skill://alpha/refunds and
// skill://beta/refunds, gets each as listed, and reads every file with the
// size and SHA-256 its entry says: each backend's own text. The unprefixed
// URI and beta's denied skill are refused (-32602 for skills/get), and
// resources/list shows the files under their prefixes only.
func TestTypeScriptSDKSkillsOfTwoBackends(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(repoRoot, "interop", "testdata", "skills_backend.mjs")
	cfg := fmt.Sprintf(`backends:
  alpha:
    command: node
    args: [%q, alpha]
  beta:
    command: node
    args: [%q, beta, private]
    resources:
      deny: ["skill://private/*"]
`, script, script)
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
	var r skillsReport
	runNodeInto(t, &r, "skills.mjs", "--http", gw.url)
	if !r.Declared {
		t.Error("the initialize result does not declare io.modelcontextprotocol/skills with resources")
	}
	var uris []string
	for _, s := range r.Skills {
		uris = append(uris, s.URI)
		who := strings.Split(strings.TrimPrefix(s.URI, "skill://"), "/")[0]
		if s.Frontmatter["name"] != "refunds" || s.Frontmatter["description"] != "Refund the "+who+" way — «vite»" || !s.GetEqual {
			t.Errorf("%s: frontmatter %v, skills/get as listed: %v", s.URI, s.Frontmatter, s.GetEqual)
		}
		if len(s.Files) != 2 {
			t.Errorf("%s: %d files read, want 2", s.URI, len(s.Files))
		}
		for _, f := range s.Files {
			if !f.Verified || !strings.Contains(f.Text, who) {
				t.Errorf("%s: read as %s, verified %v: %q", f.URI, f.ReadURI, f.Verified, f.Text)
			}
		}
	}
	if want := []string{"skill://alpha/refunds/SKILL.md", "skill://beta/refunds/SKILL.md"}; !slices.Equal(uris, want) {
		t.Errorf("skills/list: %v, want %v", uris, want)
	}
	for uri, got := range r.Refused {
		if fmt.Sprint(got.Get) != "-32602" || got.Read == "answered" {
			t.Errorf("%s: skills/get %v, resources/read %v; want both refused (-32602 for skills/get)", uri, got.Get, got.Read)
		}
	}
	if len(r.Refused) != 2 {
		t.Errorf("refused: %v", r.Refused)
	}
	want := []string{"skill://alpha/refunds/SKILL.md", "skill://alpha/refunds/examples/email.md",
		"skill://beta/refunds/SKILL.md", "skill://beta/refunds/examples/email.md"}
	if !slices.Equal(r.Resources, want) {
		t.Errorf("resources/list: %v, want %v", r.Resources, want)
	}
}
