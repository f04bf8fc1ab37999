package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Approver asks a person whether a call may run.
type Approver interface {
	// Approve reports whether the person accepted the call. It returns
	// [ErrCannotAsk] when there is no way to ask.
	Approve(ctx context.Context, c *Call) (bool, error)
}

// AnsweringApprover is an [Approver] that also says who answered (an
// operator on the console, or the agent's client), recorded with the call.
type AnsweringApprover interface {
	Approver
	// ApproveBy is Approve, also naming who answered.
	ApproveBy(ctx context.Context, c *Call) (ok bool, by ApprovalBy, err error)
}

// ApprovalBy is who answered an approval.
type ApprovalBy struct {
	// Name is the principal who answered ("" when unknown: no
	// authentication, or a client that does not say).
	Name string `json:"by,omitempty"`
	// Via is where: "console" (an operator) or "client" (the agent's own
	// client, through elicitation).
	Via string `json:"via"`
}

// The places an approval is answered from.
const (
	ViaConsole = "console"
	ViaClient  = "client"
)

// ApprovalAnswer is how a call's approval was answered: recorded with the
// call (isogate://runs/{id}) and shown by the console ("waited 83 s for
// approval, approved by alice").
type ApprovalAnswer struct {
	// WaitedMS is how long the call waited for the answer.
	WaitedMS int64 `json:"waited_ms"`
	// Approved is the answer; false also when the wait ended without one.
	Approved bool `json:"approved"`
	ApprovalBy
}

// ErrCannotAsk is returned by an [Approver] that cannot reach a person.
var ErrCannotAsk = errors.New("the client cannot ask for approval (no MCP elicitation support)")

type approverKey struct{}

// WithApprover returns ctx carrying the approver of the calls made under it.
func WithApprover(ctx context.Context, a Approver) context.Context {
	return context.WithValue(ctx, approverKey{}, a)
}

// ApproverFrom returns the approver ctx carries, or nil.
func ApproverFrom(ctx context.Context) Approver { return approverFrom(ctx) }

func approverFrom(ctx context.Context) Approver {
	a, _ := ctx.Value(approverKey{}).(Approver)
	return a
}

// ApprovalStage asks the context's [Approver] before every call the policy
// marked: accept runs the call; decline or cancel refuses it with
// APPROVAL_DENIED; no way to ask refuses it with APPROVAL_REQUIRED. The wait
// is bounded by ctx (the run's deadline). Nothing is cached: every call asks,
// except calls to a tool a person approved with the run's plan (AdmitPlan).
func ApprovalStage(p *Policy) Stage {
	return func(next Caller) Caller {
		return CallerFunc(func(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
			if !c.NeedsApproval {
				return next.Call(ctx, c)
			}
			if run := RunFrom(ctx); run != nil && run.planApproved(c) {
				return next.Call(ctx, c) // approved with the program's plan (AdmitPlan)
			}
			if err := Showable(c); err != nil {
				return nil, refuse(ctx, c, err)
			}
			a := approverFrom(ctx)
			if a == nil {
				return nil, refuse(ctx, c, required(p, c))
			}
			asked := time.Now()
			var ok bool
			var err error
			by := ApprovalBy{Via: ViaClient}
			if aa, answering := a.(AnsweringApprover); answering {
				ok, by, err = aa.ApproveBy(ctx, c)
			} else {
				ok, err = a.Approve(ctx, c)
			}
			if !errors.Is(err, ErrCannotAsk) {
				c.Approval = &ApprovalAnswer{WaitedMS: time.Since(asked).Milliseconds(), Approved: ok && err == nil, ApprovalBy: by}
			}
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

// MaxApprovalArgs bounds the arguments of a call that may be approved: a
// person is shown all of them, so larger ones are refused (APPROVAL_DENIED)
// rather than cut, which would hide the fields past the cut.
const MaxApprovalArgs = 16 << 10

// Showable returns nil if c's arguments can be shown to a person in full,
// else the APPROVAL_DENIED refusal.
func Showable(c *Call) *Error {
	if n := len(c.Args); n > MaxApprovalArgs {
		return errorf(CodeApprovalDenied,
			"%s was not approved: its arguments (%d bytes) are too large to show in full for approval (at most %d bytes); "+
				"pass less data in one call", c.Name(), n, MaxApprovalArgs)
	}
	return nil
}

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
// its backend and all the arguments, the same as structured data in
// _meta["isogate/approval"], and an empty form (accept, decline or cancel).
// Every character that could disguise the text (control, line and
// paragraph separators, bidi and other invisible format characters) is
// shown escaped. Callers check [Showable] first; arguments past
// MaxApprovalArgs are never cut here.
func ElicitParams(c *Call) *mcp.ElicitParams {
	args := []byte(c.Args)
	if len(args) == 0 {
		args = []byte("{}")
	}
	var meta any
	var compact bytes.Buffer
	if json.Compact(&compact, args) == nil {
		args = compact.Bytes()
		meta = json.RawMessage(EscapeForHuman(string(args))) // escapes keep it JSON
	} else {
		meta = EscapeForHuman(string(args)) // not JSON: shown as the text it is
	}
	return &mcp.ElicitParams{
		Meta: mcp.Meta{"isogate/approval": map[string]any{
			"backend": c.Backend, "tool": c.Tool, "arguments": meta, "bytes": len(c.Args)}},
		Message: fmt.Sprintf("A program wants to call the tool %q of the backend %q with these arguments (%d bytes, shown in full):\n%s\n\nAllow this call?",
			c.Tool, c.Backend, len(c.Args), EscapeForHuman(string(args))),
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`),
	}
}

// EscapeForHuman returns s with every character that is not plainly
// visible (control characters, line and paragraph separators, bidi
// controls and other format characters, invalid UTF-8) written as a JSON
// \uXXXX escape, so a text shown to a person cannot draw lines or reorder
// what it shows. Inside a JSON string the escapes keep the JSON valid.
func EscapeForHuman(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n <= 1 {
				b.WriteString(`\ufffd`)
				continue
			}
		}
		if r == ' ' || (unicode.IsGraphic(r) && !unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Bidi_Control, unicode.Co)) {
			b.WriteRune(r)
			continue
		}
		if r1, r2 := utf16.EncodeRune(r); r1 != unicode.ReplacementChar {
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		} else {
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}
