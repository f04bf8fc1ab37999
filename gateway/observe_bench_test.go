package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/tracing"
)

// discard is a span exporter that drops every span.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkObserveOverhead measures what the observe stage (metrics, and
// spans with trace context injection) adds to one backend call: compare
// off/metrics/tracing with bare (no stage). Targets: ≤ 5 µs with tracing
// off, ≤ 30 µs on.
func BenchmarkObserveOverhead(b *testing.B) {
	cfg := config.Default()
	cfg.Server.CacheDir = b.TempDir()
	cfg.Sandbox.Isolation = config.IsolationThread
	local := mcp.NewServer(&mcp.Implementation{Name: "local"}, nil)
	mcp.AddTool(local, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	g, err := New(cfg, Options{Runner: testPool(), ExtraSpecs: []backend.Spec{backend.InMemory("local", local)}})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	if err := g.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Backends().WaitHealthy(ctx); err != nil {
		b.Fatal(err)
	}
	result := &mcp.CallToolResult{}
	backendCall := pipeline.CallerFunc(func(context.Context, *pipeline.Call) (*mcp.CallToolResult, error) { return result, nil })
	call := &pipeline.Call{Backend: "local", Tool: "echo", Args: []byte(`{"x":1}`)}
	run := func(b *testing.B, c pipeline.Caller) {
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Call(ctx, call); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("bare", func(b *testing.B) { run(b, backendCall) })
	b.Run("metrics", func(b *testing.B) { run(b, g.observe(backendCall)) })
	b.Run("metrics+tracing", func(b *testing.B) {
		g.tracer = tracing.NewWithExporter(discard{}, "bench")
		defer func() { g.tracer.Shutdown(context.Background()); g.tracer = nil }()
		run(b, g.observe(backendCall))
	})
}
