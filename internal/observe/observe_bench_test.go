package observe

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/isogate/isogate/internal/metrics"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/stats"
	"github.com/isogate/isogate/internal/tracing"
)

// discard is a span exporter that drops every span.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkObserveOverhead measures what the observer stage (stats and
// metrics, then spans with trace context injection) adds to one backend
// call: compare with bare (no stage). Targets: ≤ 5 µs with tracing off,
// ≤ 30 µs on.
func BenchmarkObserveOverhead(b *testing.B) {
	result := &mcp.CallToolResult{}
	backendCall := pipeline.CallerFunc(func(context.Context, *pipeline.Call) (*mcp.CallToolResult, error) { return result, nil })
	call := &pipeline.Call{Backend: "local", Tool: "echo", Args: []byte(`{"x":1}`)}
	labels := func(b, t string) (string, string) { return b, t }
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
	b.Run("metrics", func(b *testing.B) {
		o := New(Options{Stats: stats.New(), Metrics: metrics.New(metrics.Sources{}), Labels: labels})
		run(b, o.Calls(backendCall))
	})
	b.Run("metrics+tracing", func(b *testing.B) {
		tracer := tracing.NewWithExporter(discard{}, "bench")
		defer tracer.Shutdown(context.Background())
		o := New(Options{Stats: stats.New(), Metrics: metrics.New(metrics.Sources{}), Tracer: tracer, Labels: labels})
		run(b, o.Calls(backendCall))
	})
}
