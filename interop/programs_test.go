package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// programsCall is a tool call as scripts/programs.mjs reports it.
type programsCall struct {
	IsError bool
	Text    string
	Code    *string
}

// programsReport is the report of scripts/programs.mjs.
type programsReport struct {
	Save        programsCall
	ListChanged bool
	Listed      *struct {
		Description string
		Required    []string
		Properties  []string
		Execution   map[string]any
	}
	Direct, FromProgram programsCall
	Task                struct {
		TaskID   string
		Statuses []string
		Result   *programsCall
		Error    string
	}
	BobBefore, BobAfter struct {
		Listed bool
		Call   programsCall
	}
	Publish programsCall
}

// TestTypeScriptSDKSavedPrograms (issue 45): the official TypeScript SDK
// client, as alice, saves a program calling server-everything's get-sum
// and receives tools/list_changed; her second session lists it as
// program_sum_pair (its parameters required, task support optional) and
// calls it directly (5), from a call_tool_chain program through
// programs.sum_pair (42) and as a task through callToolStream (11,
// completed); bob neither lists nor calls it (PROGRAM_NOT_FOUND) until
// carol, the admin, publishes it to him, and then does both.
func TestTypeScriptSDKSavedPrograms(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var tokens strings.Builder
	for name, token := range principalTokens {
		fmt.Fprintf(&tokens, "      %s: {token: %q}\n", name, token)
	}
	everything := filepath.Join(repoRoot, "examples", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	cfg := fmt.Sprintf(`server:
  auth:
    mode: token
    admins: [carol]
    tokens:
%sbackends:
  everything:
    command: node
    args: [%q, stdio]
store:
  data_dir: %q
`, tokens.String(), everything, filepath.Join(dir, "data"))
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
	var r programsReport
	runNodeInto(t, &r, "programs.mjs", "--http", gw.url, "--token", principalTokens["alice"],
		"--bob", principalTokens["bob"], "--admin", principalTokens["carol"])
	t.Logf("report: %+v; listed %+v; task result %+v", r, r.Listed, r.Task.Result)
	if r.Save.IsError || !strings.Contains(r.Save.Text, "sum_pair@1") {
		t.Fatalf("save: %+v\n%s", r.Save, gw.logs)
	}
	if !r.ListChanged {
		t.Error("no tools/list_changed after the save")
	}
	if r.Listed == nil || strings.Join(r.Listed.Required, ",") != "a,b" || !strings.Contains(r.Listed.Description, "Calls everything.get-sum") ||
		r.Listed.Execution["taskSupport"] != "optional" {
		t.Errorf("alice's other session lists %+v", r.Listed)
	}
	if r.Direct.IsError || !strings.Contains(r.Direct.Text, "is 5") {
		t.Errorf("called directly: %+v", r.Direct)
	}
	if r.FromProgram.IsError || !strings.Contains(r.FromProgram.Text, "is 42") {
		t.Errorf("called from a program: %+v", r.FromProgram)
	}
	if r.Task.TaskID == "" || r.Task.Result == nil || r.Task.Result.IsError || !strings.Contains(r.Task.Result.Text, "is 11") {
		t.Errorf("called as a task: %+v", r.Task)
	}
	if r.BobBefore.Listed || !r.BobBefore.Call.IsError || r.BobBefore.Call.Code == nil || *r.BobBefore.Call.Code != "PROGRAM_NOT_FOUND" {
		t.Errorf("bob before the publication: %+v", r.BobBefore)
	}
	if r.Publish.IsError {
		t.Fatalf("carol publishes: %+v", r.Publish)
	}
	if !r.BobAfter.Listed || r.BobAfter.Call.IsError || !strings.Contains(r.BobAfter.Call.Text, "is 2") {
		t.Errorf("bob after the publication: %+v", r.BobAfter)
	}
}
