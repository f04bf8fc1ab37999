package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTypeScriptSDKDeniedTool is issue 43's "a denied tool looks like a
// typo", through the official TypeScript SDK client over stdio against
// the real binary and the real server-everything with
// backends.everything.tools.deny: [get-env]. A program reaching get-env by
// dot (get_env), bracket ("get-env") or a computed name ends TOOL_DENIED
// naming the rule, never "not a function" or "has no tool"; a program can
// catch it and read e.code; tool_info and a passthrough call of the name
// say the same.
func TestTypeScriptSDKDeniedTool(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	everything := filepath.Join(repoRoot, "examples", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	cfg := fmt.Sprintf(`server:
  expose: both
backends:
  everything:
    command: node
    args: [%q]
    tools:
      deny: [get-env]
`, everything)
	file := filepath.Join(dir, "isogate.yaml")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var r map[string]struct {
		IsError bool
		Code    string
		Text    string
	}
	runNodeInto(t, &r, "denied_names.mjs", "--stdio", binary, "serve", "--config", file)
	const rule = "everything.get-env is denied by backends.everything.tools.deny"
	for _, name := range []string{"dot", "bracket", "computed", "toolInfo", "passthrough"} {
		got := r[name]
		code := "TOOL_DENIED"
		if name == "toolInfo" {
			code = ""
		}
		if !got.IsError || got.Code != code || !strings.Contains(got.Text, rule) {
			t.Errorf("%s: %+v, want an error %q naming %q", name, got, code, rule)
		}
		for _, bad := range []string{"not a function", "has no tool", "unknown tool", "did you mean"} {
			if strings.Contains(got.Text, bad) {
				t.Errorf("%s: %q in %q", name, bad, got.Text)
			}
		}
	}
	if got := r["caught"]; got.IsError || got.Text != "TOOL_DENIED|TOOL_DENIED: "+rule {
		t.Errorf("caught: %+v", got)
	}
}
