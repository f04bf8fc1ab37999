package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/metrics"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/tracing"
	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/procpool"
)

// newMetrics builds the gateway's metrics over its backends and sandbox.
func (g *Gateway) newMetrics() *metrics.Metrics {
	return metrics.New(metrics.Sources{
		Backends: func() []metrics.BackendState {
			var out []metrics.BackendState
			for _, st := range g.manager.Status() {
				out = append(out, metrics.BackendState{Name: st.Name, Up: st.State == backend.StateHealthy, Restarts: st.Restarts})
			}
			return out
		},
		Workers: func() metrics.Workers { return workerStates(g.runner) },
	})
}

// workerStates reads the sandbox workers of either isolation mode.
func workerStates(r v8sandbox.Runner) metrics.Workers {
	switch p := r.(type) {
	case *procpool.Pool:
		st := p.Stats()
		w := metrics.Workers{States: map[string]int{"busy": 0, "idle": 0, "draining": 0},
			Deaths: map[string]uint64{"crashed": st.Crashed, "killed": st.Killed, "recycled": st.Recycled}}
		for _, pr := range st.Workers {
			switch {
			case pr.Draining:
				w.States["draining"]++
			case pr.Runs > 0:
				w.States["busy"]++
			default:
				w.States["idle"]++
			}
		}
		return w
	case *v8sandbox.Pool:
		busy := p.Busy()
		return metrics.Workers{States: map[string]int{"busy": busy, "idle": p.Workers() - busy}}
	}
	return metrics.Workers{}
}

// observe is the pipeline stage next to the backend: it records each
// call's metrics and span, and passes the trace context on to the backend
// in the call's _meta.
func (g *Gateway) observe(next pipeline.Caller) pipeline.Caller {
	return pipeline.CallerFunc(func(ctx context.Context, c *pipeline.Call) (*mcp.CallToolResult, error) {
		start := time.Now()
		ctx, span := g.tracer.Start(ctx, "backend tools/call", trace.SpanKindClient,
			attribute.String("isogate.backend", c.Backend), attribute.String("mcp.tool", c.Tool))
		if g.tracer != nil {
			call := *c
			call.Meta = g.tracer.Inject(ctx, c.Meta)
			c = &call
		}
		res, err := next.Call(ctx, c)
		outcome := callOutcome(res, err)
		span.SetAttributes(attribute.String("isogate.outcome", outcome))
		span.End(err)
		b, tool := g.labels(c.Backend, c.Tool)
		g.metrics.ToolCall(b, tool, outcome, time.Since(start))
		return res, err
	})
}

// labels bounds the labels of a call: the tool only when the catalogue has
// it, the backend only when it is configured.
func (g *Gateway) labels(backendName, tool string) (string, string) {
	if e, err := g.catalog.Lookup(backendName + "." + tool); err == nil && e.Backend == backendName && e.Tool == tool {
		return backendName, tool
	}
	if slices.Contains(g.manager.Backends(), backendName) {
		return backendName, metrics.Other
	}
	return metrics.Other, metrics.Other
}

func callOutcome(res *mcp.CallToolResult, err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return metrics.OutcomeTimeout
	case errors.Is(err, context.Canceled):
		return metrics.OutcomeCancelled
	case err != nil:
		return metrics.OutcomeError
	case res != nil && res.IsError:
		return metrics.OutcomeToolError
	}
	return metrics.OutcomeOK
}

// observeRun records a finished code-mode run.
func (g *Gateway) observeRun(span tracing.Span, resp codemode.Response, took time.Duration) {
	outcome, processed := "ok", resp.Shaped.ProcessedBytes
	if resp.IsError {
		outcome, processed = string(resp.Code), len(resp.Text)
		if outcome == "" {
			outcome = "error"
		}
	}
	g.metrics.Run(string(resp.Tier), outcome, took, processed, len(resp.Render()))
	span.SetAttributes(attribute.String("isogate.tier", string(resp.Tier)), attribute.String("isogate.outcome", outcome))
	span.End(nil)
}

// readyz answers 200 when every enabled backend is healthy or has a cached
// tool list, else 503 naming the others.
func (g *Gateway) readyz(w http.ResponseWriter, _ *http.Request) {
	type notReady struct {
		Name      string `json:"name"`
		State     string `json:"state"`
		LastError string `json:"last_error,omitempty"`
	}
	body := struct {
		Ready    bool       `json:"ready"`
		Backends int        `json:"backends"`
		NotReady []notReady `json:"not_ready"`
	}{Ready: true, NotReady: []notReady{}}
	for _, st := range g.manager.Status() {
		body.Backends++
		if st.State == backend.StateHealthy || (st.ToolsCached && st.ToolCount > 0) {
			continue
		}
		body.Ready = false
		body.NotReady = append(body.NotReady, notReady{st.Name, st.State.String(), st.LastError})
	}
	w.Header().Set("Content-Type", "application/json")
	if !body.Ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(body)
}
