package observe

import (
	"context"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/metrics"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/stats"
)

// TestOneEventFeedsEverySink: a call and a run, each observed once, show
// up alike in the isogate://stats counters and in the Prometheus metrics,
// with the catalogue-bounded labels.
func TestOneEventFeedsEverySink(t *testing.T) {
	counters, m := stats.New(), metrics.New(metrics.Sources{})
	o := New(Options{Stats: counters, Metrics: m, Labels: func(b, tool string) (string, string) {
		if tool == "known" {
			return b, tool
		}
		return b, metrics.Other
	}})
	results := map[string]*mcp.CallToolResult{
		"known":   {Content: []mcp.Content{&mcp.TextContent{Text: "12345"}}},
		"refused": {IsError: true},
	}
	backend := pipeline.CallerFunc(func(_ context.Context, c *pipeline.Call) (*mcp.CallToolResult, error) {
		if r, ok := results[c.Tool]; ok {
			return r, nil
		}
		return nil, errors.New("backend down")
	})
	calls := o.Calls(backend)
	for _, tool := range []string{"known", "refused", "unknown-to-the-catalogue"} {
		_, _ = calls.Call(context.Background(), &pipeline.Call{Backend: "b", Tool: tool})
	}
	_, done := o.StartRun(context.Background())
	done(codemode.RunSummary{Tier: "v8", Outcome: "ok", Processed: 1000, Returned: 100, Received: 4000})
	_, done = o.StartRun(context.Background())
	done(codemode.RunSummary{Tier: "simple", Outcome: "TIMEOUT", Processed: 10, Returned: 10, Failed: true})

	snap := counters.Snapshot()
	if snap.ToolCalls != 3 || snap.Runs["v8"] != 1 || snap.Runs["simple"] != 1 || snap.RunErrors != 1 ||
		snap.BytesProcessed != 1010 || snap.BytesReturned != 110 || snap.BytesReceived != 4000 || snap.BytesKeptOut != 3890 {
		t.Fatalf("stats: %+v", snap)
	}
	errs := 0
	for _, ts := range snap.Tools {
		errs += int(ts.Errors)
	}
	if errs != 2 {
		t.Errorf("stats count %d failed calls, want 2 (a tool error and a backend error)", errs)
	}
	for metric, want := range map[string]int{
		"isogate_tool_calls_total":   3, // b/known/ok, b/other/tool_error, b/other/error
		"isogate_runs_total":         2,
		"isogate_output_bytes_total": 3, // processed, returned, received
	} {
		if n, err := testutil.GatherAndCount(m.Registry(), metric); err != nil || n != want {
			t.Errorf("%s: %d series (%v), want %d", metric, n, err, want)
		}
	}
}
