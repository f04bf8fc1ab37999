package interop

import (
	"strings"
	"testing"
)

// taskToolReport is the report of scripts/task_tool.mjs.
type taskToolReport struct {
	Listed    bool
	Execution any
	Call      struct {
		IsError bool
		Text    string
	}
	Progress []string
	Wire     []struct {
		Progress float64
		Message  string
	}
	Chain struct {
		IsError bool
		Text    string
	}
}

// TestTypeScriptSDKTaskRequiredTool: the official TypeScript SDK client,
// declaring no tasks, uses server-everything's task-required
// simulate-research-query through isogate over stdio and HTTP: it is listed
// with taskSupport optional, not required (the client would refuse to call
// it plainly otherwise), a plain call returns the completed report with the task's
// status messages as progress numbered 1, 2, 3…, and a call_tool_chain
// program awaits it as an ordinary function.
func TestTypeScriptSDKTaskRequiredTool(t *testing.T) {
	t.Parallel()
	cases := map[string]func(t *testing.T){}
	for name, args := range map[string]func(t *testing.T) []string{
		"stdio": func(*testing.T) []string {
			return []string{"--stdio", "/usr/bin/env", "ISOGATE_SERVER__EXPOSE=both", binary, "serve", "--config", config}
		},
		"http": func(t *testing.T) []string { return []string{"--http", gateways.http(t, "").url + "?expose=both"} },
	} {
		cases[name] = func(t *testing.T) {
			var r taskToolReport
			runNodeInto(t, &r, "task_tool.mjs", args(t)...)
			if ex, _ := r.Execution.(map[string]any); !r.Listed || ex["taskSupport"] != "optional" {
				t.Errorf("listed %v, execution %v", r.Listed, r.Execution)
			}
			if r.Call.IsError || !strings.Contains(r.Call.Text, "# Research Report: interop") {
				t.Fatalf("plain call: %+v", r.Call)
			}
			stages := 0
			for i, m := range r.Wire {
				if m.Progress != float64(i+1) {
					t.Errorf("progress %d is numbered %v", i, m.Progress)
				}
				if strings.HasSuffix(m.Message, "...") {
					stages++
				}
			}
			if stages == 0 || len(r.Progress) == 0 {
				t.Errorf("status messages as progress: sent %+v, seen by onprogress %q", r.Wire, r.Progress)
			}
			if r.Chain.IsError || !strings.Contains(r.Chain.Text, "Research Report: chain") {
				t.Fatalf("program: %+v", r.Chain)
			}
		}
	}
	concurrently(t, cases)
}
