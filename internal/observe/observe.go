// Package observe is the one observer of the gateway: every backend call and
// every code-mode run is recorded once, here, in each of its sinks — the
// isogate://stats counters, the Prometheus metrics and the OpenTelemetry
// spans — so that the three cannot disagree.
package observe

import (
	"context"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/fairshare"
	"github.com/isogate/isogate/internal/metrics"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/stats"
	"github.com/isogate/isogate/internal/tracing"
	"github.com/isogate/isogate/internal/typecheck"
)

// Options configure [New]. Every sink is optional: a nil one records nothing.
type Options struct {
	// Stats are the counters behind the isogate://stats resource.
	Stats *stats.Counters
	// Callers are the same counters per caller (stats.WithCaller on the
	// context of the calls and runs), recorded when Stats is set; nil: a
	// fresh set.
	Callers *stats.Callers
	// Metrics are the Prometheus metrics behind /metrics.
	Metrics *metrics.Metrics
	// Checks count code mode's type checks for the operators' reports;
	// nil: not counted there.
	Checks *typecheck.Tally
	// Tracer exports spans; nil is tracing off.
	Tracer *tracing.Tracer
	// Labels bounds the metric labels of a call (a tool the catalogue does
	// not know becomes metrics.Other); nil keeps them as they are.
	Labels func(backend, tool string) (string, string)
}

// Observer records calls and runs in every sink. Its methods are safe for
// concurrent use.
type Observer struct{ opts Options }

// New returns an observer over opts' sinks.
func New(opts Options) *Observer {
	if opts.Callers == nil {
		opts.Callers = &stats.Callers{}
	}
	return &Observer{opts: opts}
}

// CallerStats is what the caller key's calls and runs did.
func (o *Observer) CallerStats(key string) stats.Snapshot { return o.opts.Callers.Snapshot(key) }

// Stats returns the counters of the isogate://stats resource (never nil).
func (o *Observer) Stats() *stats.Counters {
	if o.opts.Stats == nil {
		o.opts.Stats = stats.New()
	}
	return o.opts.Stats
}

// Tracer returns the span exporter, nil when tracing is off.
func (o *Observer) Tracer() *tracing.Tracer { return o.opts.Tracer }

// Calls is the pipeline stage next to the backend: it records each call's
// counters, metrics and span, and passes the trace context on to the
// backend in the call's _meta.
func (o *Observer) Calls(next pipeline.Caller) pipeline.Caller {
	return pipeline.CallerFunc(func(ctx context.Context, c *pipeline.Call) (*mcp.CallToolResult, error) {
		start := time.Now()
		tracer := o.opts.Tracer
		var span tracing.Span
		if tracer != nil { // without tracing, no span and no attributes to build
			ctx, span = tracer.Start(ctx, "backend tools/call", trace.SpanKindClient,
				attribute.String("isogate.backend", c.Backend), attribute.String("mcp.tool", c.Tool))
			call := *c
			call.Meta = tracer.Inject(ctx, c.Meta)
			c = &call
		}
		res, err := next.Call(ctx, c)
		took := time.Since(start)
		outcome := CallOutcome(res, err)
		if tracer != nil {
			span.SetAttributes(attribute.String("isogate.outcome", outcome))
			span.End(err)
		}
		if o.opts.Stats != nil {
			counted := err
			if counted == nil && res != nil && res.IsError {
				counted = errToolReported
			}
			name, size := c.Name(), pipeline.ResultSize(res)
			o.opts.Stats.ToolCall(name, size, took, counted)
			if k := stats.CallerFrom(ctx); k != "" {
				o.opts.Callers.For(k).ToolCall(name, size, took, counted)
			}
		}
		if o.opts.Metrics != nil {
			b, tool := c.Backend, c.Tool
			if o.opts.Labels != nil {
				b, tool = o.opts.Labels(b, tool)
			}
			o.opts.Metrics.ToolCall(b, tool, outcome, took)
		}
		return res, err
	})
}

// errToolReported counts a result with isError as a failed call.
var errToolReported = errors.New("the tool reported an error")

// CallOutcome names how a backend call ended, as the metrics label it.
func CallOutcome(res *mcp.CallToolResult, err error) string {
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

// StartRun starts a code-mode run's span; the returned function records
// the finished run in every sink (it implements codemode.RunObserver).
func (o *Observer) StartRun(ctx context.Context) (context.Context, func(codemode.RunSummary)) {
	start := time.Now()
	caller := stats.CallerFrom(ctx)
	ctx, span := o.opts.Tracer.Start(ctx, "run", trace.SpanKindInternal)
	return ctx, func(r codemode.RunSummary) {
		took := time.Since(start)
		outcome := r.Outcome
		if o.opts.Stats != nil {
			o.opts.Stats.Run(r.Tier, r.Processed, r.Returned, r.Received, r.Failed)
			if caller != "" {
				o.opts.Callers.For(caller).Run(r.Tier, r.Processed, r.Returned, r.Received, r.Failed)
			}
		}
		if o.opts.Metrics != nil {
			o.opts.Metrics.Run(r.Tier, outcome, took, r.Processed, r.Returned, r.Received)
		}
		span.SetAttributes(attribute.String("isogate.tier", r.Tier), attribute.String("isogate.outcome", outcome))
		span.End(nil)
	}
}

// ShareHit records that an acquisition of a slot of pool (a
// metrics.Pool* value; backend names the backend of metrics.PoolBackend)
// found its principal at its share of the slots, and what then happened.
// A nil observer records nothing.
func (o *Observer) ShareHit(pool, backend string, outcome fairshare.Outcome) {
	if o == nil {
		return
	}
	o.opts.Metrics.ShareHit(pool, backend, string(outcome))
}

// Check records one type check of a code-mode program (a typecheck.Outcome*
// value, its duration, why it failed) in the metrics and the checks' tally.
// A nil observer records nothing.
func (o *Observer) Check(outcome string, took time.Duration, err error) {
	if o == nil {
		return
	}
	o.opts.Metrics.Check(outcome, took)
	if o.opts.Checks != nil {
		o.opts.Checks.Record(outcome, took, err)
	}
}
