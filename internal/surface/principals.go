package surface

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/pipeline"
)

// principalMiddleware attaches the request's principal (its bearer token's,
// checked by requireAuth) to the context of everything the request does:
// the pipeline's policy and audit read it there, and the span gets it as
// enduser.id.
func principalMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if p := principalOf(req); p != nil {
			ctx = authn.WithPrincipal(ctx, p)
			trace.SpanFromContext(ctx).SetAttributes(attribute.String("enduser.id", p.Name))
		}
		return next(ctx, method, req)
	}
}

// auditRun logs the audit event of one program run by a principal: who,
// the run id, the tools it called, the outcome (ok, or the run's error code)
// and the duration; never the
// program, its arguments or its result. The run's span gets the principal
// and run id as attributes.
func (sf *Surface) auditRun(ctx context.Context, rec *pipeline.RunRecord, failed bool, d time.Duration) {
	p := authn.FromContext(ctx)
	if p == nil {
		return
	}
	outcome := "ok"
	if failed {
		outcome = "error"
		if rec != nil && rec.Error != nil && rec.Error.Code != "" {
			outcome = rec.Error.Code // the run's code, as its result's _meta says
		}
	}
	attrs := []any{slog.String("event", "program_run"), slog.String("principal", p.Name),
		slog.String("outcome", outcome), slog.Int64("duration_ms", d.Milliseconds())}
	if rec != nil {
		var tools []string
		for _, c := range rec.Calls {
			if name := c.Backend + "." + c.Tool; !slices.Contains(tools, name) {
				tools = append(tools, name)
			}
		}
		attrs = append(attrs, slog.String("run", rec.ID), slog.Any("tools", tools),
			slog.Int("calls", len(rec.Calls)+rec.OmittedCalls))
		trace.SpanFromContext(ctx).SetAttributes(attribute.String("isogate.run", rec.ID))
	}
	sf.logger.Info("audit", attrs...)
}
