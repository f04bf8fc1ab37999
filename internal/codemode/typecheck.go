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

// The error codes of a program sandbox.typecheck: strict refused because
// its check could not finish: nothing of it ran (issue 42: strict means
// checked, never unchecked).
const (
	// CodeTypecheckUnavailable: the checker could not answer (still
	// loading at the run's deadline, restarting, crashed, the principal's
	// queue of checks full). Retryable.
	CodeTypecheckUnavailable v8sandbox.Code = "TYPECHECK_UNAVAILABLE"
	// CodeTypecheckTimeout: the check ran past sandbox.typecheck_timeout
	// and was ended inside the checker.
	CodeTypecheckTimeout v8sandbox.Code = "TYPECHECK_TIMEOUT"
	// CodeTypecheckTooComplex: checking the program exceeded the checker's
	// memory (its isolate's heap cap, or its stack).
	CodeTypecheckTooComplex v8sandbox.Code = "TYPECHECK_TOO_COMPLEX"
)

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
	code := stripFences(req.Code)
	// A backend still starting is declared `any`: its calls would go
	// unchecked. The run waits for those its program names (within the
	// backend's wait), as their calls would; in strict mode one still
	// without tools refuses the program.
	if v = e.awaitNamedBackends(ctx, v, code, timeout); strict {
		if b := startingBackendNamed(v, code); b != "" {
			e.checked(typecheck.OutcomeFailed, 0, nil)
			return e.uncheckedFailure(CodeTypecheckUnavailable, fmt.Sprintf("the tools of backend %q are not known yet: it is still starting or down", b), req, v, calls)
		}
	}
	// The run's timeout bounds the waits (for a checker still loading or
	// being replaced, for the principal's lane); the check itself has its
	// own budget, sandbox.typecheck_timeout, past which the checker ends it.
	wctx, cancel := context.WithTimeout(ctx, timeout)
	start := time.Now()
	rep, err := e.opts.Typecheck.Submit(wctx, typecheck.Request{Decls: e.checkDeclarations(v), Program: code + req.Programs.checkerDeclarations(),
		Module: exportsMain(code), Principal: principalKey(ctx), Budget: e.opts.TypecheckTimeout})
	took := time.Since(start)
	cancel()
	rep = withoutDenied(v, rep)
	var notices []string
	switch {
	case err != nil:
		code, outcome := CodeTypecheckUnavailable, typecheck.OutcomeFailed
		switch {
		case ctx.Err() != nil:
			e.checked(typecheck.OutcomeCancelled, took, nil)
			return e.failure(TierV8, v8sandbox.CodeCancelled, "CANCELLED: execution cancelled by the caller (while its program was checked)", req, v, calls, nil)
		case errors.Is(err, typecheck.ErrTimeout):
			code, outcome = CodeTypecheckTimeout, typecheck.OutcomeTimeout
		case errors.Is(err, typecheck.ErrTooComplex):
			code = CodeTypecheckTooComplex
		}
		e.checked(outcome, took, err)
		e.logger.Warn("program not type-checked", "err", err, "code", code)
		why := strings.TrimPrefix(err.Error(), typecheck.ErrUnchecked.Error()+": ")
		if strict {
			return e.uncheckedFailure(code, why, req, v, calls)
		}
		notices = append(notices, "typecheck: the program ran unchecked: "+why)
	case strict && len(rep.Certain()) > 0:
		e.checked(typecheck.OutcomeRefused, took, nil)
		// A denied tool named by a spelling the checker cannot relate to
		// it is said as such too (the plan resolves it); no person is asked
		// about a program refused anyway.
		plan := planOf(v, rep.Plan, req.Programs)
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
		plan = planOf(v, rep.Plan, req.Programs)
		if refused := e.admitPlan(ctx, req, v, calls, plan, true); refused != nil {
			refused.Notices = append(notices, refused.Notices...)
			return checked(refused, rep, plan)
		}
	}
	resp := e.runV8(ctx, req, v, calls, timeout)
	resp.Notices = append(notices, resp.Notices...)
	return checked(resp, rep, plan)
}

// startingBackendNamed returns the first backend of v whose tools are not
// known yet (starting, or down) and whose identifier the program names, ""
// when none.
func startingBackendNamed(v *view, code string) string {
	for _, b := range v.backends {
		if b.Ident != "" && len(b.tools) == 0 && strings.Contains(code, b.Ident) {
			return b.Name
		}
	}
	return ""
}

// awaitNamedBackends waits, within timeout, for the backends the program
// names whose tools are not known yet, and returns the view then.
func (e *Engine) awaitNamedBackends(ctx context.Context, v *view, code string, timeout time.Duration) *view {
	if e.opts.Backends == nil || startingBackendNamed(v, code) == "" {
		return v
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, b := range v.backends {
		if b.Ident != "" && len(b.tools) == 0 && strings.Contains(code, b.Ident) {
			_ = e.waitBackend(wctx, b.Name) // one still not ready is reported by its calls, or refused in strict mode
		}
	}
	return e.view()
}

// uncheckedFailure is the response of a program sandbox.typecheck: strict
// refused because its check could not finish (why).
func (e *Engine) uncheckedFailure(code v8sandbox.Code, why string, req Request, v *view, calls *callTracker) *Response {
	var msg string
	switch code {
	case CodeTypecheckTimeout:
		msg = fmt.Sprintf("its check exceeded sandbox.typecheck_timeout (%v) and was stopped (%s). "+
			"Simplify its types (a deeply recursive type, a huge union or literal), or try again if the gateway was busy", e.opts.TypecheckTimeout, why)
	case CodeTypecheckTooComplex:
		msg = fmt.Sprintf("checking it exceeded the type checker's memory (%s). Simplify its types or split the program", why)
	default:
		msg = fmt.Sprintf("sandbox.typecheck is strict and the type checker could not answer (%s). Try again in a few seconds", why)
	}
	return e.failure(TierV8, code, string(code)+": the program was not run (no tool was called): "+msg, req, v, calls, nil)
}

// checked tells Options.OnCheck of a check's outcome.
func (e *Engine) checked(outcome string, took time.Duration, err error) {
	if e.opts.OnCheck != nil {
		e.opts.OnCheck(outcome, took, err)
	}
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
	return types.String() + globals.String() + stateDeclarations(v)
}

// typeDeclarationsOf is Tool.TypeDeclarations for a catalogue entry.
func typeDeclarationsOf(e *catalog.Entry) func(map[string]bool) *catalog.Decls {
	return func(taken map[string]bool) *catalog.Decls { return e.Declarations(e.DeclarationPrefix(), taken) }
}
