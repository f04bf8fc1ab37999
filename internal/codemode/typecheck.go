package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/typecheck"
	"github.com/isogate/isogate/v8sandbox"
)

// The sandbox.typecheck modes.
const (
	// TypecheckOff runs programs unchecked.
	TypecheckOff = "off"
	// TypecheckWarn checks each tier-3 program before it runs and attaches
	// what the compiler found as notices; the program runs as it is.
	TypecheckWarn = "warn"
	// TypecheckStrict refuses a program with a certain mistake in a tool
	// call (unknown tool, unknown or missing parameter, literal of the
	// wrong type) before any call, with CodeTypecheckFailed.
	TypecheckStrict = "strict"
)

// CodeTypecheckFailed is the error code of a program refused by the
// checker (sandbox.typecheck: strict): nothing of it ran.
const CodeTypecheckFailed v8sandbox.Code = "TYPECHECK_FAILED"

// maxTypecheckNotices bounds the diagnostics attached to one response.
const maxTypecheckNotices = 8

// checkedV8 serves tier 3 with the program checked first (Options.Typecheck).
func (e *Engine) checkedV8(ctx context.Context, req Request, v *view, calls *callTracker, timeout time.Duration) *Response {
	if e.opts.Typecheck == nil || e.opts.TypecheckMode == "" || e.opts.TypecheckMode == TypecheckOff {
		record := e.censusCheck(ctx, req.Code, v)
		resp := e.runV8(ctx, req, v, calls, timeout)
		if record != nil {
			record(resp)
		}
		return resp
	}
	strict := e.opts.TypecheckMode == TypecheckStrict
	if !e.opts.Typecheck.Ready() {
		// The compiler is loading (once per process), or its worker is
		// being replaced: this run does not wait for it.
		e.opts.Typecheck.WarmInBackground()
		e.checked(typecheck.OutcomeSkipped, 0, nil)
		resp := e.runV8(ctx, req, v, calls, timeout)
		if strict {
			resp.Notices = append([]string{"typecheck: the program ran unchecked: " + notReadyReason(e.opts.Typecheck.Status())}, resp.Notices...)
		}
		return resp
	}
	code := stripFences(req.Code)
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if e.opts.TypecheckTimeout > 0 {
		cctx, cancel = context.WithTimeout(ctx, e.opts.TypecheckTimeout)
	}
	start := time.Now()
	rep, err := e.opts.Typecheck.Check(cctx, e.checkDeclarations(v), code, exportsMain(code))
	took := time.Since(start)
	ended := cctx.Err()
	cancel()
	var notices []string
	switch {
	case err != nil:
		switch {
		case errors.Is(ended, context.DeadlineExceeded):
			e.checked(typecheck.OutcomeTimeout, took, err)
		case ended != nil:
			e.checked(typecheck.OutcomeCancelled, took, nil)
		default:
			e.checked(typecheck.OutcomeFailed, took, err)
		}
		// Said to the agent in strict mode, which it relies on; in warn
		// mode only logged, so that the output stays as it was.
		e.logger.Warn("program not type-checked", "err", err)
		if strict {
			notices = append(notices, "typecheck: the program ran unchecked: "+strings.TrimPrefix(err.Error(), typecheck.ErrUnchecked.Error()+": "))
		}
	case strict && len(rep.Certain()) > 0:
		e.checked(typecheck.OutcomeRefused, took, nil)
		// A denied tool is said as such (it is not in the declarations, so
		// the checker calls it unknown); no person is asked about a program
		// refused anyway.
		plan := planOf(v, rep.Plan)
		if refused := e.admitPlan(ctx, req, v, calls, plan, false); refused != nil {
			return checked(refused, rep, plan)
		}
		return checked(e.typecheckFailure(req, v, calls, rep), rep, plan)
	default:
		e.checked(typecheck.OutcomeOK, took, nil)
		notices = typecheckNotices(rep.Diagnostics)
	}
	var plan *pipeline.Plan
	if rep != nil {
		plan = planOf(v, rep.Plan)
		if refused := e.admitPlan(ctx, req, v, calls, plan, true); refused != nil {
			refused.Notices = append(notices, refused.Notices...)
			return checked(refused, rep, plan)
		}
	}
	resp := e.runV8(ctx, req, v, calls, timeout)
	resp.Notices = append(notices, resp.Notices...)
	return checked(resp, rep, plan)
}

// checked tells Options.OnCheck of a check's outcome.
func (e *Engine) checked(outcome string, took time.Duration, err error) {
	if e.opts.OnCheck != nil {
		e.opts.OnCheck(outcome, took, err)
	}
}

// notReadyReason says why a program ran without waiting for the checker.
func notReadyReason(st typecheck.Status) string {
	switch st.State {
	case typecheck.StateRestarting:
		return "the checker worker is restarting"
	case typecheck.StateFailed:
		return "the checker could not start: " + st.Error
	}
	return "the checker is still loading"
}

// checked keeps what the checker found in the response (for the run
// record).
func checked(resp *Response, rep *typecheck.Report, plan *pipeline.Plan) *Response {
	if rep != nil {
		resp.Diagnostics = rep.Diagnostics
	}
	resp.Plan = plan
	return resp
}

// typecheckFailure is the response of a program refused in strict mode.
func (e *Engine) typecheckFailure(req Request, v *view, calls *callTracker, rep *typecheck.Report) *Response {
	certain := rep.Certain()
	var b strings.Builder
	fmt.Fprintf(&b, "TYPECHECK_FAILED: the program was not run (no tool was called): its tool calls have %d certain mistake", len(certain))
	if len(certain) > 1 {
		b.WriteString("s")
	}
	b.WriteString(". Fix them and run it again:")
	for _, d := range certain {
		b.WriteString("\n- " + d.Hint())
	}
	resp := e.failure(TierV8, CodeTypecheckFailed, b.String(), req, v, calls, nil)
	var others []typecheck.Diagnostic
	for _, d := range rep.Diagnostics {
		if !d.Certain {
			others = append(others, d)
		}
	}
	resp.Notices = typecheckNotices(others)
	return resp
}

// typecheckNotices renders diagnostics as notices, at most
// maxTypecheckNotices.
func typecheckNotices(ds []typecheck.Diagnostic) []string {
	var out []string
	for i, d := range ds {
		if i == maxTypecheckNotices {
			out = append(out, fmt.Sprintf("typecheck: %d more diagnostics", len(ds)-i))
			break
		}
		out = append(out, "typecheck: "+d.Hint())
	}
	return out
}

// checkDecls caches the checker's declarations of one view (one catalogue
// version): built and parsed once, not per run.
type checkDecls struct {
	view  *view
	decls typecheck.Declarations
}

var (
	checkDeclsSeq atomic.Uint64
	checkDeclsMu  sync.Mutex
)

// checkDeclarations returns the declarations of v for the checker.
func (e *Engine) checkDeclarations(v *view) typecheck.Declarations {
	if c := e.decls.Load(); c != nil && c.view == v {
		return c.decls
	}
	checkDeclsMu.Lock()
	defer checkDeclsMu.Unlock()
	if c := e.decls.Load(); c != nil && c.view == v {
		return c.decls
	}
	d := typecheck.Declarations{ID: "decls-" + strconv.FormatUint(checkDeclsSeq.Add(1), 10), Text: declarationsOf(v)}
	e.decls.Store(&checkDecls{view: v, decls: d})
	return d
}

// BackendTypePrefix starts the name of each backend's interface in the
// checker's declarations: the checker recognises tool calls by it.
const BackendTypePrefix = "IsogateBackend_"

// declarationsOf renders the declarations a program is checked against:
// each backend a global of its own interface, each tool a method under its
// identifier and its original name, taking its declared input and
// returning its declared output, or `any` without an output schema (loose
// typing: valid dynamic code over an undeclared result is not refused). A
// backend whose tools are not known yet is `any`.
func declarationsOf(v *view) string {
	var types, globals strings.Builder
	taken := map[string]bool{}
	for i, b := range v.backends {
		if b.Ident == "" {
			continue // reachable as globalThis["name"] only: not checked
		}
		if len(b.tools) == 0 {
			globals.WriteString("declare var " + b.Ident + ": any;\n")
			continue
		}
		iface := BackendTypePrefix + strconv.Itoa(i)
		globals.WriteString("interface " + iface + " {\n")
		for _, t := range b.tools {
			in, out, optional := "any", "any", "?"
			if t.TypeDeclarations != nil {
				d := t.TypeDeclarations(taken)
				types.WriteString(d.Input)
				types.WriteString(d.Output)
				in = d.InputType
				if d.OutputType != "unknown" {
					out = d.OutputType
				}
				if !d.ArgsOptional {
					optional = ""
				}
			}
			sig := "(args" + optional + ": " + in + "): Promise<" + out + ">;\n"
			globals.WriteString("  " + t.NameIdent + sig)
			if t.Name != t.NameIdent {
				q, _ := json.Marshal(t.Name)
				globals.WriteString("  " + string(q) + sig)
			}
		}
		globals.WriteString("}\ndeclare var " + b.Ident + ": " + iface + ";\n")
	}
	return types.String() + globals.String()
}

// typeDeclarationsOf is Tool.TypeDeclarations for a catalogue entry.
func typeDeclarationsOf(e *catalog.Entry) func(map[string]bool) *catalog.Decls {
	return func(taken map[string]bool) *catalog.Decls { return e.Declarations(e.DeclarationPrefix(), taken) }
}
