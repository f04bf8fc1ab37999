package console

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/desk"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/stats"
)

// benchConsole is a console over 50 backends and 5 000 tools, with a
// full desk: 200 run records, 2 000 audit events, live runs and pending
// approvals.
func benchConsole(b *testing.B) *Console {
	cat := catalog.New()
	var statuses []backend.Status
	counters := stats.New()
	for i := range 50 {
		name := fmt.Sprintf("backend%02d", i)
		tools := make([]*mcp.Tool, 100)
		for j := range tools {
			tools[j] = &mcp.Tool{Name: fmt.Sprintf("tool_%03d", j), Description: fmt.Sprintf("Does thing %d of %s, with care.", j, name),
				InputSchema: map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}}}
			counters.ToolCall(name+"."+tools[j].Name, 100, time.Millisecond, nil)
		}
		cat.SetBackend(name, nil, tools)
		statuses = append(statuses, backend.Status{Name: name, Transport: "stdio", State: backend.StateHealthy, ToolCount: 100,
			Restarts: i % 3, Calls: int64(i * 10), Stderr: []string{"starting", "listening on stdio", "ready"}})
	}
	d := desk.New()
	logger := slog.New(d.AuditHandler(slog.NewTextHandler(io.Discard, nil)))
	for i := range 2000 {
		logger.Info("audit", "event", "tool_call", "principal", fmt.Sprintf("p%d", i%7), "tool", "backend01.tool_001", "outcome", "ok", "duration_ms", 3)
	}
	for i := range 200 {
		d.KeepRecord("alice", &pipeline.RunRecord{ID: fmt.Sprintf("run%d", i), Code: "return 1", Tier: "v8", Started: time.Now(), Outcome: "ok",
			Calls: []pipeline.CallRecord{{Seq: 1, Backend: "backend01", Tool: "tool_001", DurationMS: 4, OK: true}}})
	}
	for range 10 {
		d.StartRun("bob", "sync", "", func(error) {})
	}
	appr := d.Approver(nil, "bob", "")
	for i := range 5 {
		ctx, cancel := context.WithCancel(context.Background())
		b.Cleanup(cancel)
		go appr.Approve(ctx, &pipeline.Call{Backend: "backend01", Tool: "tool_001", Args: []byte(fmt.Sprintf(`{"id":"%d"}`, i))})
	}
	return New(Sources{Desk: d, Backends: func() []backend.Status { return statuses }, Catalog: cat,
		Policy: pipeline.NewPolicy(nil), Stats: counters.Snapshot, Sessions: func() int { return 42 }},
		Options{Admins: []string{"scope:isogate.admin"}, Verify: fakeVerify, Version: "bench", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

// BenchmarkPages: one answer of each page, signed in by bearer token,
// with 50 backends and 5 000 tools. The target is under 100 ms a page.
func BenchmarkPages(b *testing.B) {
	c := benchConsole(b)
	for _, target := range []string{"/console/overview", "/console/tools", "/console/tools?q=thing+42+care",
		"/console/tools?q=thing&name=backend07.tool_042", "/console/runs", "/console/record?id=run7", "/console/approvals",
		"/console/audit", "/console/audit?principal=p3&kind=tool_call", "/console/metrics"} {
		b.Run(target, func(b *testing.B) {
			for b.Loop() {
				r := httptest.NewRequest("GET", target, nil)
				r.Header.Set("Authorization", "Bearer admin-token")
				w := httptest.NewRecorder()
				c.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d", target, w.Code)
				}
			}
		})
	}
}
