package interop

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// typecheckReport is the report of scripts/typecheck_plan.mjs.
type typecheckReport struct {
	Ready struct{ Probes int }
	Runs  map[string]struct {
		IsError bool
		Text    string
	}
	Asked map[string][]string
}

// typecheckGateway writes the configuration of a stdio gateway whose one
// backend is testdata/recording_backend.mjs (counter: bump, write under
// approval, wipe denied), checking programs in mode with plan approval
// on; it returns the stdio arguments of a script and the backend's record.
func typecheckGateway(t *testing.T, mode string) (args []string, record string) {
	t.Helper()
	dir := t.TempDir()
	record = filepath.Join(dir, "calls.txt")
	cfg := fmt.Sprintf(`backends:
  counter:
    command: node
    args: [%q, %q]
    tools:
      deny: [wipe]
      approve: [write]
sandbox:
  typecheck: %s
  typecheck_timeout: 1m
  plan_approval: true
`, filepath.Join(repoRoot, "interop", "testdata", "recording_backend.mjs"), record, mode)
	file := filepath.Join(dir, "isogate.yaml")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--stdio", binary, "serve", "--config", file}, record
}

// recorded reads the calls the recording backend received.
func recorded(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// writes are the 20 calls of the program of 20 writes.
func writes() []string {
	var out []string
	for i := range 20 {
		out = append(out, fmt.Sprintf("write:a%d", i))
	}
	return out
}

// TestTypeScriptSDKTypecheckAndPlan is issue 36's "Done when" through the
// official TypeScript SDK client over stdio, against a backend that
// records each call it receives. In strict mode the three programs
// (a misspelt parameter after two good calls, a misspelt tool after one, a
// literal of the wrong type) are refused with TYPECHECK_FAILED and hints
// naming the fix, and the backend receives none of their calls; in warn
// mode they run as before (their good calls made, the mistake failing at
// its call) with the diagnostics attached. In both, a program that may call
// a denied tool is refused with PLAN_DENIED before its first call, and a
// program of 20 writes under approval asks the client once.
func TestTypeScriptSDKTypecheckAndPlan(t *testing.T) {
	t.Parallel()
	hints := map[string]string{
		"ident":   "line 1, column 83: `ident` is not a parameter of counter.bump; did you mean `id`?",
		"bumpp":   "line 1, column 46: `bumpp` is not a tool of counter; did you mean `counter.bump`?",
		"literal": "line 2, column 21: the value of `id` has the wrong type for counter.bump",
	}
	common := func(t *testing.T, r *typecheckReport) {
		t.Helper()
		denied := r.Runs["denied"]
		if !denied.IsError || !strings.HasPrefix(denied.Text, "PLAN_DENIED: the program was not run (no tool was called): line 2 calls counter.wipe") {
			t.Errorf("denied: (error %v) %s", denied.IsError, denied.Text)
		}
		w := r.Runs["writes"]
		if w.IsError || !strings.HasPrefix(w.Text, "wrote 20") {
			t.Errorf("writes: (error %v) %s", w.IsError, w.Text)
		}
		if asked := r.Asked["writes"]; len(asked) != 1 || !strings.Contains(asked[0], "- counter.write (line 2; in a loop: yes)") {
			t.Errorf("writes: %d prompts, want one listing counter.write in a loop: %q", len(asked), asked)
		}
		for name, asked := range r.Asked {
			if name != "writes" && len(asked) != 0 {
				t.Errorf("%s: prompts %q, want none", name, asked)
			}
		}
	}
	concurrently(t, map[string]func(t *testing.T){
		"strict": func(t *testing.T) {
			args, record := typecheckGateway(t, "strict")
			var r typecheckReport
			runNodeInto(t, &r, "typecheck_plan.mjs", args...)
			for name, hint := range hints {
				run := r.Runs[name]
				if !run.IsError || !strings.HasPrefix(run.Text, "TYPECHECK_FAILED: the program was not run (no tool was called)") ||
					!strings.Contains(run.Text, hint) {
					t.Errorf("%s: (error %v)\n%s\nwant TYPECHECK_FAILED with %q", name, run.IsError, run.Text, hint)
				}
			}
			common(t, &r)
			// Only the 20 approved writes reached the backend: no call of
			// the refused programs, none of the denied one.
			if got, want := strings.Join(recorded(t, record), " "), strings.Join(writes(), " "); got != want {
				t.Errorf("the backend received %q; want only the 20 writes", got)
			}
		},
		"warn": func(t *testing.T) {
			args, record := typecheckGateway(t, "warn")
			var r typecheckReport
			runNodeInto(t, &r, "typecheck_plan.mjs", args...)
			for name, hint := range hints {
				run := r.Runs[name]
				if !run.IsError || strings.HasPrefix(run.Text, "TYPECHECK_FAILED") || !strings.Contains(run.Text, "[notice] typecheck: "+hint) {
					t.Errorf("%s: (error %v)\n%s\nwant the run's own failure with the notice %q", name, run.IsError, run.Text, hint)
				}
			}
			// Each failed at its mistake, as it does unchecked: a wrong
			// argument refused before the backend (INVALID_ARGUMENTS), at
			// its call.
			for name, failure := range map[string]string{
				"ident":   "Error: INVALID_ARGUMENTS: `ident` (did you mean `id`?) is not a parameter of counter.bump; the required parameter `id` is missing; it takes { by?: number; id: string } (line 1, column 77)",
				"bumpp":   "TypeError: counter.bumpp is not a function",
				"literal": "Error: INVALID_ARGUMENTS: counter.bump: `id` must be string, not integer; it takes { by?: number; id: string } (line 2, column 15)",
			} {
				if !strings.HasPrefix(r.Runs[name].Text, failure) {
					t.Errorf("%s: the run's own failure %q, want it to start with %q", name, r.Runs[name].Text, failure)
				}
			}
			common(t, &r)
			// The good calls before each mistake ran, as without a check.
			want := append([]string{"bump:p1", "bump:p2", "bump:r1", "bump:w1"}, writes()...)
			if got := strings.Join(recorded(t, record), " "); got != strings.Join(want, " ") {
				t.Errorf("the backend received %q; want %q", got, strings.Join(want, " "))
			}
		},
	})
}
