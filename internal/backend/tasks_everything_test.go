//go:build unix

package backend

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestTaskRequiredToolOfServerEverything: server-everything's
// simulate-research-query has execution.taskSupport "required" and refuses
// a plain tools/call; a plain Manager.Call (what passthrough and programs
// make) gets its completed report, the gateway having created the task,
// polled it and read its result, and the task's status messages arrive as
// progress under the call's token, numbered 1, 2, 3…; the result does not
// name the backend's task (_meta related-task), which the caller never made.
func TestTaskRequiredToolOfServerEverything(t *testing.T) {
	spec := everythingSpec(t)
	var mu sync.Mutex
	var progress []*mcp.ProgressNotificationParams
	m := startManager(t, Options{
		Specs:     []Spec{spec},
		StartWait: 30 * time.Second,
		OnProgress: func(_ string, p *mcp.ProgressNotificationParams) {
			mu.Lock()
			progress = append(progress, p)
			mu.Unlock()
		},
	})
	waitHealthy(t, m)
	if names := toolNames(m.Tools()["everything"]); !slices.Contains(names, "simulate-research-query") {
		t.Fatalf("simulate-research-query not among %v", names)
	}
	ctx := WithProgressToken(context.Background(), "tok-1")
	res, err := m.CallTool(ctx, "everything", "simulate-research-query", map[string]any{"topic": "isolates"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, res); res.IsError || !strings.Contains(got, "# Research Report: isolates") {
		t.Fatalf("result (isError %v): %.300s", res.IsError, got)
	}
	// The backend's task is the gateway's own business: its id, which no
	// client's tasks/get knows, is not in the plain call's result (issue 43).
	if rt, ok := res.Meta["io.modelcontextprotocol/related-task"]; ok {
		t.Errorf("a plain call's result carries the backend's task: _meta related-task %v", rt)
	}
	mu.Lock()
	defer mu.Unlock()
	var messages []string
	for i, p := range progress {
		if p.ProgressToken != "tok-1" || p.Progress != float64(i+1) {
			t.Errorf("progress %d: token %v, progress %v", i, p.ProgressToken, p.Progress)
		}
		messages = append(messages, p.Message)
	}
	// Polled at the task's pollInterval (1 s) while each stage lasts a
	// second: a stage may be missed, but each message is one of the
	// stages', in order.
	stages := []string{"working", "Gathering sources...", "Analyzing content...", "Synthesizing findings...", "Generating report..."}
	at := -1
	for _, msg := range messages {
		i := slices.Index(stages, msg)
		if i <= at {
			t.Fatalf("status messages %q: %q out of place", messages, msg)
		}
		at = i
	}
	if at < 1 {
		t.Errorf("no stage among the status messages %q", messages)
	}
}
