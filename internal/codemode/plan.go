package codemode

import (
	"context"
	"strconv"
	"strings"

	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/typecheck"
	"github.com/isogate/isogate/v8sandbox"
)

// planOf turns the checker's plan (tool references by their backend's
// interface in the declarations of v) into the pipeline's, by original
// backend and tool names.
//
// A call of a saved program (programs.<name>, lib) puts the tools that
// program may call in its place (Library.addToPlan).
func planOf(v *view, p *typecheck.Plan, lib *Library) *pipeline.Plan {
	if p == nil {
		return nil
	}
	out := &pipeline.Plan{Tools: []pipeline.PlanTool{}, Partial: p.Partial()}
	for _, c := range p.Calls {
		if c.Backend == stateTypeName {
			if c.Tool == "set" || c.Tool == "delete" {
				out.AddState(c.Tool, c.Line, c.Loop, c.Times)
			}
			continue
		}
		if c.Backend == programsInterface && !lib.Empty() {
			lib.addToPlan(out, c)
			continue
		}
		i, err := strconv.Atoi(strings.TrimPrefix(c.Backend, BackendTypePrefix))
		if err != nil || i < 0 || i >= len(v.backends) {
			continue
		}
		b := v.backends[i]
		// The name as the catalogue answers it: a tool, a denied tool
		// (PLAN_DENIED naming the rule), or unknown.
		t, d := b.resolve(c.Tool)
		switch {
		case d != nil:
			out.AddDenied(b.Name, d.Tool, d.Rule, c.Line, c.Loop, c.Times)
		case t != nil && !c.Unknown:
			out.Add(b.Name, t.Name, c.Line, c.Loop, c.Times, false)
		default:
			out.Add(b.Name, c.Tool, c.Line, c.Loop, c.Times, true)
		}
	}
	for _, d := range p.Dynamic {
		out.Dynamic = append(out.Dynamic, pipeline.PlanSite{Line: d.Line, Column: d.Column, Text: d.Text, Why: d.Why})
	}
	return out
}

// admitPlan asks Options.AdmitPlan about a checked program's plan (with
// ask, a plan approval may be asked): nil lets it run; else the response
// that refuses it (nothing ran).
func (e *Engine) admitPlan(ctx context.Context, req Request, v *view, calls *callTracker, plan *pipeline.Plan, ask bool) *Response {
	if e.opts.AdmitPlan == nil || plan == nil {
		return nil
	}
	err := e.opts.AdmitPlan(ctx, plan, ask)
	if err == nil {
		return nil
	}
	code := v8sandbox.CodeOf(err)
	if code == "" {
		code = v8sandbox.CodeCancelled
		if ctx.Err() == context.DeadlineExceeded {
			code = v8sandbox.CodeTimeout
		}
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, string(code)) {
		msg = string(code) + ": " + msg
	}
	return e.failure(TierV8, code, msg, req, v, calls, nil)
}

// Check type-checks a program against the current catalogue without
// running it (isogate check): the diagnostics, and the plan by original
// names. It waits for the compiler to load.
func (e *Engine) Check(ctx context.Context, code string) (*typecheck.Report, *pipeline.Plan, error) {
	return e.CheckWith(ctx, code, nil)
}

// CheckWith is Check of a program that may call the saved programs of lib
// (programs.<name>(args) typed from their parameters; the plan holds, at
// each call of one, the tools it may call).
func (e *Engine) CheckWith(ctx context.Context, code string, lib *Library) (*typecheck.Report, *pipeline.Plan, error) {
	var c typecheck.Service = typecheck.Shared()
	if e.opts.Typecheck != nil {
		c = e.opts.Typecheck
	}
	if err := c.Warm(ctx); err != nil {
		return nil, nil, err
	}
	code = stripFences(code)
	v := e.view()
	rep, err := c.Check(ctx, e.checkDeclarations(v), code+lib.checkerDeclarations(), exportsMain(code))
	if err != nil {
		return nil, nil, err
	}
	rep = withoutDenied(v, rep)
	return rep, planOf(v, rep.Plan, lib), nil
}

// withoutDenied is rep without the diagnostics that call a denied tool
// unknown, or a configured backend undefined: the declarations leave denied tools out (the checker suggests
// only tools the program may call), and the plan names them as denied
// (planOf), which refuses the program with PLAN_DENIED naming the rule.
func withoutDenied(v *view, rep *typecheck.Report) *typecheck.Report {
	if rep == nil {
		return nil
	}
	keep := rep.Diagnostics[:0:0]
	for _, d := range rep.Diagnostics {
		if d.Kind == "unknown_backend" && v.backend(d.Name) != nil {
			// A configured backend the declarations leave out (down,
			// starting, or every tool denied): the run or the plan says
			// which, not a misspelling.
			continue
		}
		if d.Kind == "unknown_tool" {
			if _, denied := v.backend(strings.TrimSuffix(d.Tool, "."+d.Name)).resolve(d.Name); denied != nil {
				continue
			}
		}
		keep = append(keep, d)
	}
	if len(keep) == len(rep.Diagnostics) {
		return rep
	}
	out := *rep
	out.Diagnostics = keep
	return &out
}
