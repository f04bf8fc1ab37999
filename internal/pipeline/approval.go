package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/textcut"
)

// Approver asks a person whether a call may run.
type Approver interface {
	// Approve reports whether the person accepted the call. It returns
	// [ErrCannotAsk] when there is no way to ask.
	Approve(ctx context.Context, c *Call) (bool, error)
}

// ErrCannotAsk is returned by an [Approver] that cannot reach a person.
var ErrCannotAsk = errors.New("the client cannot ask for approval (no MCP elicitation support)")

type approverKey struct{}

// WithApprover returns ctx carrying the approver of the calls made under it.
func WithApprover(ctx context.Context, a Approver) context.Context {
	return context.WithValue(ctx, approverKey{}, a)
}

func approverFrom(ctx context.Context) Approver {
	a, _ := ctx.Value(approverKey{}).(Approver)
	return a
}

// ApprovalStage asks the context's [Approver] before every call the policy
// marked: accept runs the call; decline or cancel refuses it with
// APPROVAL_DENIED; no way to ask refuses it with APPROVAL_REQUIRED. The wait
// is bounded by ctx (the run's deadline). Nothing is cached: every call asks.
func ApprovalStage(p *Policy) Stage {
	return func(next Caller) Caller {
		return CallerFunc(func(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
			if !c.NeedsApproval {
				return next.Call(ctx, c)
			}
			a := approverFrom(ctx)
			if a == nil {
				return nil, refuse(ctx, c, required(p, c))
			}
			ok, err := a.Approve(ctx, c)
			switch {
			case errors.Is(err, ErrCannotAsk):
				return nil, refuse(ctx, c, required(p, c))
			case err != nil && ctx.Err() != nil:
				return nil, fmt.Errorf("waiting for approval of %s: %w", c.Name(), ctx.Err())
			case err != nil:
				return nil, refuse(ctx, c, errorf(CodeApprovalDenied, "%s was not approved: %v", c.Name(), err))
			case !ok:
				return nil, refuse(ctx, c, errorf(CodeApprovalDenied, "%s was not approved: the person declined", c.Name()))
			}
			return next.Call(ctx, c)
		})
	}
}

func required(p *Policy, c *Call) *Error {
	return errorf(CodeApprovalRequired,
		"%s needs a person's approval, and this client cannot ask for it (it does not support MCP elicitation); "+
			"to allow the tool without approval, remove it from %s in the isogate configuration",
		c.Name(), p.approveKey(c.Backend))
}

// ElicitApprover asks the person behind an MCP client session through
// elicitation, showing the tool, its backend and the arguments.
type ElicitApprover struct {
	Session *mcp.ServerSession
}

// maxShownArgs bounds the arguments shown in an approval request.
const maxShownArgs = 4000

// Approve implements [Approver].
func (a ElicitApprover) Approve(ctx context.Context, c *Call) (bool, error) {
	if !CanElicit(a.Session) {
		return false, ErrCannotAsk
	}
	res, err := a.Session.Elicit(ctx, ElicitParams(c))
	if err != nil {
		return false, fmt.Errorf("asking for approval: %w", err)
	}
	return res.Action == "accept", nil
}

// CanElicit reports whether the client of ss declared elicitation support.
func CanElicit(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil
}

// ElicitParams is the approval request for c: a message naming the tool,
// its backend and the arguments (bounded), the same as structured data in
// _meta["isogate/approval"], and an empty form (accept, decline or cancel).
func ElicitParams(c *Call) *mcp.ElicitParams {
	args := string(c.Args)
	if args == "" {
		args = "{}"
	}
	shown := args
	if len(shown) > maxShownArgs {
		shown = textcut.Prefix(shown, maxShownArgs) + fmt.Sprintf("… (%d bytes)", len(args))
	}
	return &mcp.ElicitParams{
		Meta: mcp.Meta{"isogate/approval": map[string]any{
			"backend": c.Backend, "tool": c.Tool, "arguments": json.RawMessage(compactOr(c.Args))}},
		Message: fmt.Sprintf("A program wants to call the tool %q of the backend %q with these arguments:\n%s\n\nAllow this call?",
			c.Tool, c.Backend, shown),
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`),
	}
}

// compactOr returns args if it is a small valid JSON object, else {}.
func compactOr(args json.RawMessage) []byte {
	if len(args) == 0 || len(args) > maxShownArgs || !json.Valid(args) {
		return []byte("{}")
	}
	return args
}
