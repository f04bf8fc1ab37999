package interop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTypeScriptSDKDownBackend: with a backend down (its command does not
// exist), the meta-tools say so where an agent looks for its tools:
// tool_info for one of them is an error naming the down backend beside
// "unknown tool", and list_tools_meta's notice names it, so that an
// absent tool never reads as one that does not exist (search_tools did
// already).
func TestTypeScriptSDKDownBackend(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`backends:
  counter:
    command: node
    args: [%q, %q]
  ghost:
    command: /nonexistent/isogate-no-such-command
`, filepath.Join(repoRoot, "interop", "testdata", "recording_backend.mjs"), filepath.Join(dir, "calls.txt"))
	file := filepath.Join(dir, "isogate.yaml")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var r struct {
		ToolInfo, List, Search struct {
			IsError bool
			Text    string
		}
	}
	runNodeInto(t, &r, "down_backend.mjs", "--wait", "no", "--stdio", binary, "serve", "--config", file)
	const down = "Down (calls fail; read isogate://backend/<name> for why): ghost."
	if ti := r.ToolInfo; !ti.IsError || !strings.Contains(ti.Text, `unknown tool "ghost.anything"`) || !strings.Contains(ti.Text, down) {
		t.Errorf("tool_info ghost.anything: %+v", ti)
	}
	var list struct {
		Tools  []string
		Notice string
	}
	if err := json.Unmarshal([]byte(r.List.Text), &list); err != nil || r.List.IsError || !strings.Contains(list.Notice, down) {
		t.Errorf("list_tools_meta: %+v", r.List)
	}
	if s := r.Search; s.IsError || !strings.Contains(s.Text, down) {
		t.Errorf("search_tools: %+v", s)
	}
}
