// Package pipeline is the one path every backend tool call takes: the calls
// a code-mode program makes (every tier) and calls passed through to a
// backend. Small stages wrap the backend manager, outermost first:
//
//		policy → arguments → approval → record → observe → manager
//
//	  - policy (policy.go) refuses tools the configuration denies or does not
//	    allow (TOOL_DENIED) and calls past a run's budget (TOOL_BUDGET), and
//	    marks tools that need approval;
//	  - arguments (arguments.go) refuses arguments the tool's input schema
//	    refuses (INVALID_ARGUMENTS);
//	  - approval (approval.go) asks a person through MCP elicitation
//	    (APPROVAL_DENIED, APPROVAL_REQUIRED);
//	  - record (record.go) adds the call to its run's record;
//	  - observe (Options.Observe, internal/observe) records each call in the
//	    stats, the metrics and the traces;
//	  - the fence (fence.go) refuses a call of a task this replica no
//	    longer holds (LEASE_LOST);
//	  - the manager (manager.go) sends tools/call to the backend.
//
// Per-run state (the call budget and the record) and the way to reach the
// person (an [Approver]) travel in the context: [WithRun], [WithApprover].
// A call without a run has no budget and no record.
package pipeline

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Call is one backend tool call on its way through the pipeline.
type Call struct {
	// Backend and Tool are the original names the backend reported.
	Backend, Tool string
	// Args is the JSON object of arguments; nil means {}.
	Args json.RawMessage
	// Meta is sent with the call (e.g. a passthrough client's progress token).
	Meta mcp.Meta
	// NeedsApproval is set by the policy stage for tools under approve.
	NeedsApproval bool
	// Approval is how a person answered the call's approval, set by the
	// approval stage; nil when none was asked.
	Approval *ApprovalAnswer
	// InputResponses and RequestState continue a call the backend answered
	// with an InputRequiredResult (SEP-2322, protocol 2026-07-28): the
	// client's retry, passed to the backend untouched.
	InputResponses mcp.InputResponseMap
	RequestState   string
}

// Name is "backend.tool".
func (c *Call) Name() string { return c.Backend + "." + c.Tool }

// Caller makes backend tool calls. A tool result with IsError set is a
// result, not an error; a refused call is an *Error.
type Caller interface {
	Call(ctx context.Context, c *Call) (*mcp.CallToolResult, error)
}

// CallerFunc adapts a function to [Caller].
type CallerFunc func(ctx context.Context, c *Call) (*mcp.CallToolResult, error)

// Call implements [Caller].
func (f CallerFunc) Call(ctx context.Context, c *Call) (*mcp.CallToolResult, error) { return f(ctx, c) }

// Stage wraps the rest of the pipeline.
type Stage func(next Caller) Caller

// Chain returns last wrapped by stages, stages[0] outermost.
func Chain(last Caller, stages ...Stage) Caller {
	for i := len(stages) - 1; i >= 0; i-- {
		last = stages[i](last)
	}
	return last
}

// Options configure [New].
type Options struct {
	// Backend makes the actual calls (see [Manager]); required.
	Backend Caller
	// Policy decides which tools are reachable; nil allows every tool.
	Policy *Policy
	// Observe, if set, is the stage next to the backend that records every
	// call that reaches it (stats, metrics and traces: internal/observe).
	Observe Stage
	// Audit, if set, receives an audit event per call that carries a
	// principal (AuditStage).
	Audit *slog.Logger
	// Arguments, if set, checks each call's arguments against the tool's
	// input schema (ArgumentsStage); nil: the backend alone decides.
	Arguments ArgumentChecker
}

// New returns the standard pipeline: audit → policy → arguments → approval
// → record → [Options.Observe] → input rounds → fence → backend.
func New(opts Options) Caller {
	stages := []Stage{AuditStage(opts.Audit), PolicyStage(opts.Policy), ArgumentsStage(opts.Arguments), ApprovalStage(opts.Policy), RecordStage()}
	if opts.Observe != nil {
		stages = append(stages, opts.Observe)
	}
	stages = append(stages, InputStage(), FenceStage())
	return Chain(opts.Backend, stages...)
}
