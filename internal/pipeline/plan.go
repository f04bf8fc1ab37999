package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/authn"
)

// Plan is what a type-checked program may call, known before it runs
// (internal/typecheck finds it): policy decides on it before the first
// call ([AdmitPlan]).
type Plan struct {
	// Tools are the tools the program names, by original backend and tool
	// name, in the order first named.
	Tools []PlanTool `json:"tools"`
	// Partial reports that the program may also call tools the plan cannot
	// name (Dynamic says where): those calls are decided one by one.
	Partial bool       `json:"partial,omitempty"`
	Dynamic []PlanSite `json:"dynamic,omitempty"`
}

// PlanTool is one tool of a [Plan]: where the program names it and
// whether a call may repeat ("yes", "no" or "unknown", the worst of its
// call sites), and when it may not, how many calls at most (Calls).
type PlanTool struct {
	Backend string `json:"backend"`
	Tool    string `json:"tool"`
	Loop    string `json:"loop"`
	Lines   []int  `json:"lines"`
	// Calls is the most calls the program makes to the tool when Loop is
	// "no" (the sum over its call sites of how often each runs); 0 when
	// Loop is not "no". An approved plan covers that many calls, no more
	// ([Plan.Covers]).
	Calls int `json:"calls,omitempty"`
	// Unknown marks a name that is no tool of the backend (a mistake):
	// Tool is the name as written.
	Unknown bool `json:"unknown,omitempty"`
	// DeniedBy is the configuration key that denies the tool
	// (backends.<b>.tools.deny or .allow), when the catalogue's answer for
	// the name is a denied tool: Tool is then its original name.
	DeniedBy string `json:"denied_by,omitempty"`
}

// Name is "backend.tool".
func (t PlanTool) Name() string { return t.Backend + "." + t.Tool }

// PlanSite is a place where a program reaches tools by a name no plan can
// know (a computed tool name, a backend object passed as a value).
type PlanSite struct {
	Line   int    `json:"line"`
	Column int    `json:"column"`
	Text   string `json:"text"`
	Why    string `json:"why"`
}

// Add records a reference to backend.tool at line with its loop verdict
// and, when that is "no", how many times it runs at most (unknown: the
// tool is not in the catalogue).
func (p *Plan) Add(backend, tool string, line int, loop string, times int, unknown bool) {
	p.add(PlanTool{Backend: backend, Tool: tool, Unknown: unknown}, line, loop, times)
}

// AddDenied records a reference to a tool the configuration denies (rule
// is the key that does), as Add does.
func (p *Plan) AddDenied(backend, tool, rule string, line int, loop string, times int) {
	p.add(PlanTool{Backend: backend, Tool: tool, DeniedBy: rule}, line, loop, times)
}

func (p *Plan) add(ref PlanTool, line int, loop string, times int) {
	backend, tool, unknown := ref.Backend, ref.Tool, ref.Unknown
	if loop == "no" {
		times = max(times, 1)
	} else {
		times = 0
	}
	for i := range p.Tools {
		t := &p.Tools[i]
		if t.Backend == backend && t.Tool == tool && t.Unknown == unknown && t.DeniedBy == ref.DeniedBy {
			if !slices.Contains(t.Lines, line) {
				t.Lines = append(t.Lines, line)
			}
			t.Loop = worseLoop(t.Loop, loop)
			if t.Loop == "no" {
				t.Calls += times
			} else {
				t.Calls = 0
			}
			return
		}
	}
	ref.Loop, ref.Lines, ref.Calls = loop, []int{line}, times
	p.Tools = append(p.Tools, ref)
}

// Covers is how many calls to t one approval of its plan covers: Calls
// (at least one) when t is not called in a loop, else -1 (any number:
// the person was told the calls may repeat).
func (t PlanTool) Covers() int {
	if t.Loop == "yes" || t.Loop == "unknown" {
		return -1
	}
	return max(t.Calls, 1)
}

// calls is how t's calls are shown to a person.
func (t PlanTool) calls() string {
	if n := t.Covers(); n == 1 {
		return "; at most 1 call"
	} else if n > 1 {
		return fmt.Sprintf("; at most %d calls", n)
	}
	return ""
}

func worseLoop(a, b string) string {
	rank := map[string]int{"no": 0, "unknown": 1, "yes": 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// Text renders the plan for a person or a terminal, one tool a line; the
// names and the code quoted are shown escaped ([EscapeForHuman]): a
// program cannot draw lines of its own in it.
func (p *Plan) Text() string {
	var b strings.Builder
	for _, t := range p.Tools {
		note := ""
		switch {
		case t.DeniedBy != "":
			note = "; denied by " + t.DeniedBy
		case t.Unknown:
			note = "; not in the catalogue"
		}
		fmt.Fprintf(&b, "- %s (line %s; in a loop: %s%s%s)\n", EscapeForHuman(t.Name()), joinInts(t.Lines), t.Loop, t.calls(), note)
	}
	if p.Partial {
		b.WriteString("The program may also call tools by names known only when it runs; each such call is decided on its own:\n")
		for _, d := range p.Dynamic {
			fmt.Fprintf(&b, "- line %d, column %d: %s (%s)\n", d.Line, d.Column, EscapeForHuman(d.Text), d.Why)
		}
	}
	return b.String()
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// PlanApprover is an [Approver] that can also ask a person once about a
// whole plan (the same elicitation, another message).
type PlanApprover interface {
	ApproveParams(ctx context.Context, params *mcp.ElicitParams) (bool, error)
}

// AdmitPlan decides on a program's plan before it runs, under the run ctx
// carries: a tool the configuration or the caller's server.auth.rules
// deny refuses the program (PLAN_DENIED, naming the call and its line).
// With approve (sandbox.plan_approval), the tools under approval are
// asked about once, together: accepted, the run's calls to them ask no
// more, up to the number of calls the plan announced ([PlanTool.Covers]:
// past it a call asks on its own); declined, the program is refused
// (APPROVAL_DENIED). A client that
// cannot be asked leaves the decision to each call. Tools the plan does
// not name are decided call by call, as without a plan.
func AdmitPlan(ctx context.Context, p *Policy, plan *Plan, approve bool) error {
	if plan == nil {
		return nil
	}
	pr := authn.FromContext(ctx)
	var asks []PlanTool
	for _, t := range plan.Tools {
		c := &Call{Backend: t.Backend, Tool: t.Tool}
		decision := p.Decide(t.Backend, t.Tool)
		configRule, _ := p.DeniedBy(t.Backend, t.Tool)
		if rule := cmp.Or(configRule, t.DeniedBy); decision == Denied || rule != "" {
			// The catalogue's answer (t.DeniedBy) is enough: a tool it
			// knows as denied is refused even if the policy changed since.
			return errorf(CodePlanDenied, "the program was not run (no tool was called): line %s calls %s, which the configuration denies (%s)",
				joinInts(t.Lines), t.Name(), cmp.Or(rule, "backends."+t.Backend+".tools"))
		}
		deniedBy, needs, _ := p.principalDecision(pr, c)
		if deniedBy != "" {
			return errorf(CodePlanDenied, "the program was not run (no tool was called): line %s calls %s, which is not available to %s: server.auth.rules.%s denies it",
				joinInts(t.Lines), t.Name(), pr.Name, deniedBy)
		}
		if (decision == NeedsApproval || needs) && !t.Unknown && t.DeniedBy == "" {
			asks = append(asks, t)
		}
	}
	if !approve || len(asks) == 0 {
		return nil
	}
	a, ok := approverFrom(ctx).(PlanApprover)
	if !ok {
		return nil
	}
	accepted, err := a.ApproveParams(ctx, PlanElicitParams(plan, asks))
	switch {
	case errors.Is(err, ErrCannotAsk):
		return nil
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("waiting for approval of the program's plan: %w", ctx.Err())
	case err != nil:
		return errorf(CodeApprovalDenied, "the program was not run (no tool was called): its plan was not approved: %v", err)
	case !accepted:
		return errorf(CodeApprovalDenied, "the program was not run (no tool was called): the person declined its plan")
	}
	if run := RunFrom(ctx); run != nil {
		run.approve(asks)
	}
	return nil
}

// PlanElicitParams is the one approval request of a plan: the tools that
// need approval, each with whether it is called in a loop, the whole plan,
// the same as data in _meta["isogate/plan_approval"], and an empty form.
func PlanElicitParams(plan *Plan, asks []PlanTool) *mcp.ElicitParams {
	var b strings.Builder
	b.WriteString("A program wants to call these tools, which need your approval; approving allows, in this run and with any arguments, " +
		"the calls listed (all of them where in a loop, else at most as many as shown); any call past that is asked on its own:\n")
	for _, t := range asks {
		fmt.Fprintf(&b, "- %s (line %s; in a loop: %s%s)\n", EscapeForHuman(t.Name()), joinInts(t.Lines), t.Loop, t.calls())
	}
	b.WriteString("\nEverything the program may call:\n")
	b.WriteString(strings.TrimSuffix(plan.Text(), "\n"))
	b.WriteString("\n\nAllow these calls?")
	meta, _ := json.Marshal(struct {
		Approve []PlanTool `json:"approve"`
		Plan    *Plan      `json:"plan"`
	}{asks, plan})
	return &mcp.ElicitParams{
		Meta:            mcp.Meta{"isogate/plan_approval": json.RawMessage(meta)},
		Message:         b.String(),
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`),
	}
}

// ApproveParams implements [PlanApprover].
func (a ElicitApprover) ApproveParams(ctx context.Context, params *mcp.ElicitParams) (bool, error) {
	if !CanElicit(a.Session) {
		return false, ErrCannotAsk
	}
	res, err := a.Session.Elicit(ctx, params)
	if err != nil {
		return false, fmt.Errorf("asking for approval: %w", err)
	}
	return res.Action == "accept", nil
}
