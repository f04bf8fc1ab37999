package surface

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/approvals"
	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/tasks"
)

// approvalHost is what the paused runs and approvals (internal/approvals)
// need of the surface.
func (sf *Surface) approvalHost() approvals.Host {
	return approvals.Host{
		Logger:   sf.logger,
		Durables: &sf.durables,
		Policy:   sf.policy,
		Owner:    func(req *mcp.CallToolRequest) string { return sf.ownerOf(req) },
		RunTimeout: func(p approvals.Program) time.Duration {
			return sf.runTimeout(chainInput(p))
		},
		Run: func(ctx context.Context, req *mcp.CallToolRequest, p approvals.Program) *mcp.CallToolResult {
			return sf.executeChain(ctx, req, chainInput(p))
		},
	}
}

// runTimeout is the deadline a run of in gets.
func (sf *Surface) runTimeout(in chainInput) time.Duration {
	if in.Timeout > 0 {
		return time.Duration(in.Timeout) * time.Millisecond
	}
	return sf.opts.RunTimeout
}

// durableFrom is the journal of the durable run ctx carries, nil for none.
func durableFrom(ctx context.Context) *codemode.DurableRun {
	if d := tasks.DurableFrom(ctx); d != nil {
		return d.Run
	}
	return nil
}
