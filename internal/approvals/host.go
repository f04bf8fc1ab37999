package approvals

import (
	"context"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/tasks"
)

// Host is what the paused runs and approvals need of the surface that
// serves them.
type Host struct {
	// Logger logs resumed and ended paused runs.
	Logger *slog.Logger
	// Durables writes durable runs' journals (sandbox.durable); its Store
	// is nil when runs are not durable.
	Durables *tasks.Durables
	// Policy says which passthrough calls need an approval.
	Policy *pipeline.Policy
	// Owner is the owner key of a request's caller: its principal's.
	Owner func(req *mcp.CallToolRequest) string
	// RunTimeout is the deadline a run of p gets.
	RunTimeout func(p Program) time.Duration
	// Run runs p as call_tool_chain in ctx, which carries the run's
	// approver, answerer and durable run, and keeps its run record.
	Run func(ctx context.Context, req *mcp.CallToolRequest, p Program) *mcp.CallToolResult
}

// Program is a call_tool_chain call's arguments (its input schema is the
// surface's).
type Program struct {
	Code          string
	Timeout       int64 // milliseconds; 0: sandbox.timeout
	MaxOutputSize int
	Intent        string
}

// Rounds keeps runs and passthrough approvals between a client's rounds.
type Rounds struct {
	h     Host
	trips roundTrips
}

// New returns the rounds of host h.
func New(h Host) *Rounds { return &Rounds{h: h} }

// refused is a tool error result saying text.
func refused(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: true}
}
