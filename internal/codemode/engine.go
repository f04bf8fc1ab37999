// Package codemode implements call_tool_chain: an agent's TypeScript or
// JavaScript program that calls backend tools as async functions, run in
// the cheapest tier that can serve it.
//
//  1. Direct JSON ({"tool": "backend.tool", "arguments": {...}}) is
//     dispatched at once, without V8.
//  2. A simple call (`return await b.t({...})` with a literal argument) is
//     dispatched without V8 too; so is introspection of __interfaces.
//  3. Everything else runs in a V8 isolate through v8sandbox, with a bridge
//     generated from the catalogue.
//
// Tiers 1 and 2 return exactly what tier 3 returns for the same call. The
// result goes through the output pipeline (intent filter, JSON chunking,
// truncation, size footer) before it reaches the agent.
package codemode

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf16"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/codemode/fastpath"
	"github.com/isogate/isogate/internal/codemode/output"
	"github.com/isogate/isogate/internal/fairshare"
	"github.com/isogate/isogate/internal/jsonscan"
	"github.com/isogate/isogate/internal/logsite"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/internal/typecheck"
	"github.com/isogate/isogate/v8sandbox"
)

// Tool is one backend tool as code mode sees it.
type Tool struct {
	Backend, Name           string // original names
	BackendIdent, NameIdent string // sanitized JavaScript identifiers
	Description             string
	InputSchema             json.RawMessage
	// Declarations, when set, returns the tool's TypeScript declarations
	// (the `ts` field of __interfaces entries); called lazily.
	Declarations func() string
	// TypeDeclarations, when set, generates the tool's input and output
	// declarations for the checker, avoiding the type names in taken.
	TypeDeclarations func(taken map[string]bool) *catalog.Decls
	// Idempotent: the tool declares annotations.idempotentHint, so a
	// durable run may send again a call whose outcome is unknown.
	Idempotent bool
}

// Catalog lists the tools programs can call and is the only authority on
// their names.
type Catalog interface {
	CodeModeTools() []Tool
	// Lookup resolves "backend.tool", its sanitized form or a bare tool
	// name that only one backend has; with suggest, an unknown name's
	// error names the closest tools.
	Lookup(name string, suggest bool) (Tool, error)
}

// Caller calls backend tools.
type Caller interface {
	CallTool(ctx context.Context, backend, tool string, args json.RawMessage) (*mcp.CallToolResult, error)
}

// Backends knows the configured backends, including those whose tools are
// not known yet, and waits for one that is still starting.
type Backends interface {
	// Names lists the configured, enabled backends.
	Names() []string
	// WaitReady waits until the backend can take calls (its tool list is
	// then in the catalogue), within the gateway's sandbox.backend_wait and
	// ctx. A backend that is down fails with its error.
	WaitReady(ctx context.Context, name string) error
}

// Tier says how a request was served.
type Tier string

// The tiers, cheapest first.
const (
	TierDirect     Tier = "direct"
	TierSimpleCall Tier = "simple"
	TierV8         Tier = "v8"
)

// Options configure an [Engine].
type Options struct {
	Runner  v8sandbox.Runner // runs tier-3 programs; required
	Catalog Catalog          // required
	Caller  Caller           // required
	// Backends makes every configured backend an object in programs, even
	// before its tools are known; nil: only backends with known tools.
	Backends Backends

	Timeout       time.Duration // default and maximum run timeout (sandbox.timeout); 30s
	HeapMB        int           // heap cap of a run; 50
	MaxConcurrent int           // concurrent V8 runs; 8
	// MaxConcurrentPerPrincipal is the share of the V8 slots one
	// authenticated principal (authn.FromContext) may hold: as many again
	// may wait, further runs fail with PRINCIPAL_BUSY; a freed slot goes to
	// the waiting principal that holds the fewest. 0: MaxConcurrent.
	MaxConcurrentPerPrincipal int
	// OnShare is told each time a principal's run finds it at its share
	// (metrics); nil: nobody.
	OnShare func(fairshare.Outcome)
	// Output shapes results; Output.MaxOutputSize is a run's default and
	// maximum max_output_size (output.DefaultMaxOutputSize when 0).
	Output       output.Options
	Store        resultstore.Store // keeps full results retrievable; nil disables chunking
	ConsoleLines int               // console lines kept per run; 200
	MaxToolCalls int               // backend calls per run; 0: no limit
	// MaxResultBytes caps the JSON a program may return, stored whole when
	// over the output limit; 0: DefaultMaxResultBytes, at most
	// MaxResultBytesCap. The gateway passes what one session may keep in
	// the result store.
	MaxResultBytes int

	// Typecheck checks tier-3 programs before they run, as TypecheckMode
	// (sandbox.typecheck: off, warn, strict) says; nil: unchecked. A
	// *typecheck.Checker checks in this process, a checkworker.Checker in a
	// confined worker process (process isolation).
	Typecheck        typecheck.Service
	TypecheckMode    string
	TypecheckTimeout time.Duration // one check; 0: the checker's own
	// OnCheck, when set, is told of each check's outcome (a
	// typecheck.Outcome* value), its duration and, for one that failed or
	// timed out, why (the operators' counts and metrics).
	OnCheck func(outcome string, took time.Duration, err error)
	// Durable makes programs run with journalled Date and Math.random, so
	// that a request with a [DurableRun] can be journalled and replayed
	// (sandbox.durable other than off). The prelude of every run depends
	// on it, so that prepared contexts fit every run.
	Durable bool
	// AdmitPlan decides on a checked program's plan before it runs
	// (pipeline.AdmitPlan: denied tools, and with ask a plan approval); an
	// error refuses the program. nil: each call is decided on its own only.
	AdmitPlan func(ctx context.Context, plan *pipeline.Plan, ask bool) error

	// State serves programs' state.get/set/delete/list under the run's
	// principal (internal/state); nil: those calls fail with
	// STORE_UNAVAILABLE.
	State StateService

	// Observer is told of every run (stats, metrics, traces); nil: none.
	Observer RunObserver
	Logger   *slog.Logger
}

// RunObserver is told of every run: StartRun when it starts, and the
// function it returns once the run has finished.
type RunObserver interface {
	StartRun(ctx context.Context) (context.Context, func(RunSummary))
}

// RunSummary is what an observer learns of a finished run.
type RunSummary struct {
	Tier      string // the tier that ran it
	Outcome   string // "ok", or the error code ("error" without one)
	Processed int    // bytes the program produced before shaping
	Returned  int    // bytes returned to the agent
	// Received is what the run's tool calls received from backends (each
	// result as the program saw it, JSON): what an agent calling the tools
	// directly would have read. Received minus Returned stayed out of the
	// agent's context.
	Received int
	Failed   bool
}

// Engine executes call_tool_chain requests. It is safe for concurrent use.
type Engine struct {
	opts   Options
	slots  *fairshare.Slots
	logger *slog.Logger
	views  viewCache
	decls  atomic.Pointer[checkDecls] // the checker's declarations of the last view
}

// New returns an engine.
func New(opts Options) (*Engine, error) {
	if opts.Runner == nil || opts.Catalog == nil || opts.Caller == nil {
		return nil, errors.New("codemode: Runner, Catalog and Caller are required")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = v8sandbox.DefaultTimeout
	}
	if opts.HeapMB <= 0 {
		opts.HeapMB = v8sandbox.DefaultHeapMB
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = v8sandbox.DefaultWorkers
	}
	if opts.Output.MaxOutputSize <= 0 {
		opts.Output.MaxOutputSize = output.DefaultMaxOutputSize
	}
	if opts.ConsoleLines <= 0 {
		opts.ConsoleLines = 200
	}
	if opts.MaxResultBytes <= 0 {
		opts.MaxResultBytes = DefaultMaxResultBytes
	}
	opts.MaxResultBytes = min(opts.MaxResultBytes, MaxResultBytesCap)
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	slots := fairshare.New(fairshare.Options{Capacity: opts.MaxConcurrent, Share: opts.MaxConcurrentPerPrincipal,
		MaxWaiting: opts.MaxConcurrentPerPrincipal, OnShare: opts.OnShare})
	return &Engine{opts: opts, slots: slots, logger: opts.Logger}, nil
}

// Request is one call_tool_chain invocation.
type Request struct {
	Code string
	// Timeout bounds the run: 0 means the engine's Timeout, which is also
	// the maximum (a larger or negative value is replaced, with a warning
	// in the response). See [Millis].
	Timeout       time.Duration
	MaxOutputSize int // 0: the engine's, which is also the maximum
	Intent        string
	// Owner scopes stored full results (e.g. the MCP session id).
	Owner string
	// OnToolCall is called after each backend call completes.
	OnToolCall func(done int, tool string)
	// OnRun, when set, is given the run as it starts (its id is the run
	// record's; its calls so far are readable while it runs).
	OnRun func(*pipeline.Run)
	// Detached marks a caller that prints the response and exits (isogate
	// exec): nothing in it may need the gateway after the run. The output
	// is whole (the intent filter applies, but no auto-chunking, truncation
	// or stored result, so no isogate://result URI), and hints name no
	// isogate:// resource.
	Detached bool
	// Durable journals the run (and, when it was loaded from a journal,
	// replays it): nil for a run that is not durable. It needs an engine
	// with Options.Durable.
	Durable *DurableRun
	// Programs are the saved programs the code may call as
	// programs.<name>(args) (library.go); nil: none.
	Programs *Library
	// Approved are tools approved for the run before it starts, as a plan
	// approval approves them (a saved program's approval at save).
	Approved []pipeline.PlanTool
}

// Response is the outcome of a request.
type Response struct {
	Text    string   // the shaped result, or the error message with hints
	IsError bool     // the program failed
	Console []string // captured console lines
	Tier    Tier
	// Value is the raw JSON result before shaping (nil on error).
	Value json.RawMessage
	// Code is the engine error code on failure (EVAL_ERROR, TIMEOUT, …).
	Code   v8sandbox.Code
	Shaped output.Result
	// Record is what the run did, every backend call included.
	Record *pipeline.RunRecord
	// Warnings are notes about the request itself (e.g. a clamped timeout).
	Warnings []string
	// ToolCalls counts the backend calls the program made.
	ToolCalls int
	// Notices tell the agent what the program did not see for itself:
	// tool calls it did not await (they completed, or how they failed)
	// and "missing await?" reads of a tool call's promise.
	Notices []string
	// UnawaitedCalls counts the tool calls the program did not await.
	UnawaitedCalls int
	// Diagnostics and Plan are what the type checker found (sandbox.typecheck
	// warn or strict); nil when the program was not checked.
	Diagnostics []typecheck.Diagnostic
	Plan        *pipeline.Plan
}

// DefaultMaxResultBytes caps the JSON a program may return when
// Options.MaxResultBytes is 0: what one session may keep in the default
// result store (a quarter of its 64 MiB). Far more than an agent reads
// (output is cut to max_output_size): a larger result is stored whole and
// returned truncated with its isogate://result/{id} and a read_result hint.
const DefaultMaxResultBytes = 16 << 20

// MaxResultBytesCap bounds Options.MaxResultBytes: a result crosses the
// process sandbox's pipe in one frame (procpool.MaxFrameBytes, 64 MiB).
const MaxResultBytesCap = 48 << 20

// deadlineGrace lets the sandbox report its own TIMEOUT before the request
// context (which bounds host calls made by the parent) expires.
const deadlineGrace = time.Second

// Millis converts a caller's timeout in milliseconds to a Duration without
// overflow: values beyond the largest Duration saturate.
func Millis(ms int64) time.Duration {
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return math.MaxInt64
	}
	if ms < math.MinInt64/int64(time.Millisecond) {
		return math.MinInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// timeoutOf validates a request's timeout against the engine's maximum.
func (e *Engine) timeoutOf(d time.Duration) (time.Duration, string) {
	max := e.opts.Timeout
	switch {
	case d == 0:
		return max, ""
	case d < 0:
		return max, fmt.Sprintf("timeout must be positive; using sandbox.timeout (%d ms)", max.Milliseconds())
	case d > max:
		return max, fmt.Sprintf("timeout of %d ms exceeds sandbox.timeout; clamped to %d ms", d.Milliseconds(), max.Milliseconds())
	}
	return d, ""
}

// outputLimitOf validates a request's max_output_size against the engine's
// (sandbox.max_output_size), which is its default and its maximum.
func (e *Engine) outputLimitOf(n int) (int, string) {
	max := min(e.opts.Output.MaxOutputSize, output.MaxOutputSizeCap)
	switch {
	case n == 0:
		return max, ""
	case n < 0:
		return max, fmt.Sprintf("max_output_size must be positive; using sandbox.max_output_size (%d bytes)", max)
	case n > max:
		return max, fmt.Sprintf("max_output_size of %d bytes exceeds sandbox.max_output_size; clamped to %d bytes", n, max)
	}
	return n, ""
}

// Execute runs one request in the cheapest tier that can serve it.
func (e *Engine) Execute(ctx context.Context, req Request) Response {
	start := time.Now()
	done := func(RunSummary) {}
	if e.opts.Observer != nil {
		ctx, done = e.opts.Observer.StartRun(ctx)
	}
	timeout, warning := e.timeoutOf(req.Timeout)
	ctx, cancel := context.WithTimeout(ctx, timeout+deadlineGrace)
	defer cancel()
	run := pipeline.NewRun(e.opts.MaxToolCalls)
	run.ApprovePlan(req.Approved)
	ctx = pipeline.WithRun(ctx, run)
	if req.OnRun != nil {
		req.OnRun(run)
	}
	v := e.view()
	calls := &callTracker{}

	resp := e.fast(ctx, req, v, calls, timeout)
	if resp == nil {
		resp = e.checkedV8(ctx, req, v, calls, timeout)
	}
	if warning != "" {
		resp.Warnings = append(resp.Warnings, warning)
	}
	if resp.IsError && resp.Code == v8sandbox.CodeCancelled {
		// Cancelled with a coded cause (an operator's cancel from the
		// console): the run says who, under that cause's code.
		if cause := context.Cause(ctx); v8sandbox.CodeOf(cause) != "" {
			resp.Code, resp.Text = v8sandbox.CodeOf(cause), cause.Error()
		}
	}
	if resp.IsError && resp.Code == v8sandbox.CodeTimeout && req.Timeout > 0 && req.Timeout < time.Second {
		ms := req.Timeout.Milliseconds()
		resp.Text += fmt.Sprintf("\n\nHint: `timeout` is in milliseconds: %d means %d ms. For %d seconds pass %d (at most sandbox.timeout, %d ms).",
			ms, ms, ms, ms*1000, e.opts.Timeout.Milliseconds())
	}
	var outWarning string
	req.MaxOutputSize, outWarning = e.outputLimitOf(req.MaxOutputSize)
	if outWarning != "" {
		resp.Warnings = append(resp.Warnings, outWarning)
	}
	resp.ToolCalls = calls.count()
	sum := e.finish(ctx, req, resp)
	sum.Received = calls.receivedBytes()
	done(sum)
	resp.Record = record(run, req, resp)
	resp.Record.Limits = &pipeline.RunLimits{TimeoutMS: timeout.Milliseconds(), HeapMB: e.opts.HeapMB,
		MaxToolCalls: e.opts.MaxToolCalls, MaxResultBytes: e.opts.MaxResultBytes}
	e.logRun(resp, time.Since(start), calls)
	return *resp
}

// record describes a finished run.
func record(run *pipeline.Run, req Request, resp *Response) *pipeline.RunRecord {
	rec := &pipeline.RunRecord{
		ID: run.ID, Code: req.Code, Tier: string(resp.Tier), Started: run.Started,
		DurationMS: time.Since(run.Started).Milliseconds(), Outcome: pipeline.OutcomeOK,
		Console: resp.Console, ResultBytes: len(resp.Value), Calls: run.Calls(),
		UnawaitedCalls: resp.UnawaitedCalls, Diagnostics: resp.Diagnostics, Plan: resp.Plan,
	}
	rec.OmittedCalls, rec.RefusedCalls = run.Totals()
	if req.Durable != nil {
		rec.Durability = req.Durable.describe()
	}
	if rec.Console == nil {
		rec.Console = []string{}
	}
	if resp.IsError {
		rec.Outcome = pipeline.OutcomeError
		rec.Error = &pipeline.RunError{Code: string(resp.Code), Message: resp.Text}
	} else {
		rec.Result = pipeline.NewBlob(resp.Value)
	}
	if resp.Shaped.StoredID != "" {
		rec.ResultURI = resultstore.URIPrefix + resp.Shaped.StoredID
	}
	return rec
}

// view is the current catalogue as code mode sees it.
func (e *Engine) view() *view { return e.views.get(e.opts.Catalog, e.opts.Backends) }

// waitBackend waits for a configured backend that is still starting.
func (e *Engine) waitBackend(ctx context.Context, name string) error {
	if e.opts.Backends == nil {
		return nil
	}
	return e.opts.Backends.WaitReady(ctx, name)
}

// logRun writes the one INFO line of a call_tool_chain run; nothing of
// it is built when INFO is not logged. Its source is looked up once
// (logsite): a stack walk per line was a third of the line's cost.
func (e *Engine) logRun(resp *Response, d time.Duration, calls *callTracker) {
	ctx := context.Background()
	if !e.logger.Enabled(ctx, slog.LevelInfo) {
		return
	}
	outcome := "ok"
	if resp.IsError {
		outcome = string(resp.Code)
	}
	runLine.Log(ctx, e.logger, slog.LevelInfo, "call_tool_chain",
		slog.String("tier", string(resp.Tier)),
		slog.Duration("duration", d),
		slog.Int("tool_calls", resp.ToolCalls),
		slog.Int("unawaited_calls", resp.UnawaitedCalls),
		slog.String("tools", calls.names()),
		slog.String("outcome", outcome))
}

// runLine is where logRun logs.
var runLine logsite.Site

// fast serves tiers 1 and 2, or returns nil when the code needs V8. Only
// what it serves gets the run's timeout (a timer per run costs a wake-up
// of the runtime's poller; tier 3 has its own deadline).
func (e *Engine) fast(ctx context.Context, req Request, v *view, calls *callTracker, timeout time.Duration) *Response {
	plan := fastpath.Classify(req.Code)
	if plan.Kind == fastpath.KindDirect || plan.Kind == fastpath.KindSimpleCall {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	switch plan.Kind {
	case fastpath.KindInterfaces:
		return &Response{Tier: TierSimpleCall, Value: v.interfacesJSON()}
	case fastpath.KindToolInterface:
		val, err := e.toolInterface(v, plan.InterfaceName, true)
		if err != nil {
			return e.failure(TierSimpleCall, nameCode(err), nameFailure(err), req, v, calls, nil)
		}
		return &Response{Tier: TierSimpleCall, Value: mustCanonical(val)}
	case fastpath.KindDirect:
		t, err := e.findTool(v, plan.Name, true)
		if err != nil && e.opts.Backends != nil {
			// The backend may be configured but still starting.
			if b, _, ok := strings.Cut(plan.Name, "."); ok && v.backend(b) != nil && len(v.backend(b).tools) == 0 {
				if werr := e.waitBackend(ctx, v.backend(b).Name); werr != nil {
					calls.failed(v.backend(b).Name, werr)
					return e.failure(TierDirect, rootCode(v8sandbox.CodeEval, v8sandbox.CodeOf(werr)), "Error: "+werr.Error(), req, v, calls, nil)
				}
				v = e.view()
				t, err = e.findTool(v, plan.Name, true)
			}
		}
		if err != nil {
			return e.failure(TierDirect, nameCode(err), nameFailure(err), req, v, calls, nil)
		}
		return e.dispatch(ctx, TierDirect, t, plan, req, v, calls, timeout)
	case fastpath.KindSimpleCall:
		if t, _ := v.backend(plan.Backend).resolve(plan.Tool); t != nil {
			// A bare call's value is the program's result, as in V8.
			return e.dispatch(ctx, TierSimpleCall, *t, plan, req, v, calls, timeout)
		}
	}
	return nil // unknown names fall through: V8 waits for backends and reports errors with hints
}

// dispatch makes the one call of a tier-1 or tier-2 program.
func (e *Engine) dispatch(ctx context.Context, tier Tier, t Tool, plan fastpath.Plan, req Request, v *view, calls *callTracker, timeout time.Duration) *Response {
	args := plan.Arguments
	full := t.Backend + "." + t.Name
	calls.start(full)
	var value json.RawMessage
	var err error
	if req.Durable != nil {
		value, err = req.Durable.call(ctx, 1, t.Backend, t.Name, args, nil, t.Idempotent, func(ctx context.Context) (json.RawMessage, error) {
			return e.callTool(ctx, t.Backend, t.Name, args)
		})
	} else {
		value, err = e.callTool(ctx, t.Backend, t.Name, args)
	}
	calls.done(full, len(value), err)
	if req.OnToolCall != nil {
		req.OnToolCall(1, full)
	}
	if err != nil {
		if ctx.Err() != nil {
			if errors.Is(ctx.Err(), context.Canceled) {
				return e.failure(tier, v8sandbox.CodeCancelled, "CANCELLED: execution cancelled by the caller", req, v, calls, nil)
			}
			return e.failure(tier, v8sandbox.CodeTimeout, fmt.Sprintf("TIMEOUT: execution exceeded %d ms while waiting for %s",
				timeout.Milliseconds(), full), req, v, calls, nil)
		}
		code := rootCode(v8sandbox.CodeEval, v8sandbox.CodeOf(coded(err)))
		if code == pipeline.CodeInvalidArguments {
			return e.argumentsFailure(tier, err, plan, req, v, calls)
		}
		resp := e.failure(tier, v8sandbox.CodeEval, "Error: "+err.Error(), req, v, calls, nil)
		resp.Code = code
		return resp
	}
	return &Response{Tier: tier, Value: value}
}

// argumentsFailure is the response of a tier-1 or tier-2 program whose one
// call was refused for its arguments (INVALID_ARGUMENTS), with the call's
// line and column as V8 would name them. In strict mode it is
// TYPECHECK_FAILED, as the same mistake in a tier-3 program is: strict
// promises that a program with a certain mistake in a tool call is refused
// before any call, whatever its tier, and here no call was made.
func (e *Engine) argumentsFailure(tier Tier, err error, plan fastpath.Plan, req Request, v *view, calls *callTracker) *Response {
	line, col := lineColumn(req.Code, plan.At)
	// The refusal's own words: a durable run's journalled error (a
	// HostError made of the refusal) repeats the code.
	item := err.Error()
	for prefix := string(pipeline.CodeInvalidArguments) + ": "; strings.HasPrefix(item, prefix); {
		item = item[len(prefix):]
	}
	if e.opts.TypecheckMode != TypecheckStrict {
		msg := "Error: " + string(pipeline.CodeInvalidArguments) + ": " + item
		if line > 0 {
			msg += fmt.Sprintf(" (line %d, column %d)", line, col)
		}
		return e.failure(tier, pipeline.CodeInvalidArguments, msg, req, v, calls, nil)
	}
	if line > 0 {
		item = fmt.Sprintf("line %d, column %d: %s", line, col, item)
	}
	msg := "TYPECHECK_FAILED: the program was not run (no tool was called): its tool call has 1 certain mistake. Fix it and run it again:\n- " +
		item + " (" + string(pipeline.CodeInvalidArguments) + ": the tool's input schema)"
	return e.failure(tier, CodeTypecheckFailed, msg, req, v, calls, nil)
}

// lineColumn is the 1-based line and column (in UTF-16 code units, as V8
// counts) of the byte offset at in code; 0, 0 for offset 0 (no position).
func lineColumn(code string, at int) (line, column int) {
	if at <= 0 || at > len(code) {
		return 0, 0
	}
	start := strings.LastIndexByte(code[:at], '\n') + 1
	line = strings.Count(code[:start], "\n") + 1
	for _, r := range code[start:at] {
		column += utf16.RuneLen(r)
	}
	return line, column + 1
}

// rootCode is the code a failed run reports: an uncaught exception that is
// a refused or failed tool call (TOOL_DENIED, APPROVAL_DENIED,
// BACKEND_CONNECTION_LOST, TOOL_ERROR, …) ends the run with that call's
// code, as the agent, the audit and the metrics then name the cause; any
// other exception is EVAL_ERROR. The hints are those of the exception's
// text either way.
func rootCode(code, host v8sandbox.Code) v8sandbox.Code {
	if code == v8sandbox.CodeEval && host != "" {
		return host
	}
	return code
}

// principalKey is the fair-share key of the caller: its principal's owner
// key, "" without authentication (everything is then one principal).
func principalKey(ctx context.Context) string {
	if p := authn.FromContext(ctx); p != nil {
		return p.Owner()
	}
	return ""
}

// slotFailure is the response of a run that got no V8 slot.
func (e *Engine) slotFailure(ctx context.Context, err error, req Request, v *view, calls *callTracker, timeout time.Duration) *Response {
	var share *fairshare.ShareError
	switch {
	case ctx.Err() != nil:
		return e.failure(TierV8, v8sandbox.CodeCancelled, "cancelled while waiting for a free sandbox", req, v, calls, nil)
	case errors.As(err, &share) && share.Cause == nil:
		return e.failure(TierV8, fairshare.CodePrincipalBusy, fmt.Sprintf(
			"PRINCIPAL_BUSY: your programs hold your share of the sandbox (%d of %d runs) and %d more are waiting; try again when one finishes",
			share.Held, share.Capacity, share.Waiting), req, v, calls, nil)
	case errors.As(err, &share):
		return e.failure(TierV8, fairshare.CodePrincipalBusy, fmt.Sprintf(
			"PRINCIPAL_BUSY: your programs hold your share of the sandbox (%d of %d runs) and none finished within the run's timeout (%v); try again",
			share.Held, share.Capacity, timeout), req, v, calls, nil)
	}
	return e.failure(TierV8, v8sandbox.CodeTimeout, fmt.Sprintf(
		"sandbox concurrency limit reached: %d programs are running and none finished within the run's timeout (%v); try again",
		e.opts.MaxConcurrent, timeout), req, v, calls, nil)
}

// acquireSlot takes a V8 slot for the caller's principal, waiting at most
// timeout; a free slot is taken without arming a timer.
func (e *Engine) acquireSlot(ctx context.Context, timeout time.Duration) (func(), error) {
	key := principalKey(ctx)
	if release, ok := e.slots.TryAcquire(key); ok {
		return release, nil
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return e.slots.Acquire(wctx, key)
}

// runV8 serves tier 3.
func (e *Engine) runV8(ctx context.Context, req Request, v *view, calls *callTracker, timeout time.Duration) *Response {
	prog, err := compile(req.Code)
	if err != nil {
		return e.failure(TierV8, v8sandbox.CodeEval, err.Error(), req, v, calls, nil)
	}
	release, err := e.acquireSlot(ctx, timeout)
	if err != nil {
		return e.slotFailure(ctx, err, req, v, calls, timeout)
	}
	defer release()
	deadline := time.Now().Add(timeout)
	console := &consoleBuffer{max: e.opts.ConsoleLines, maxLine: 4000}
	res, report, waiting, err := e.runProgram(ctx, prog, v, calls, console, req, deadline, timeout)
	var se *v8sandbox.Error
	if err != nil && errors.As(err, &se) && se.Compile && prog.plain {
		// Not plain JavaScript: strip TypeScript and run again (nothing ran).
		ts, terr := prog.typescript()
		if terr != nil {
			return e.failure(TierV8, v8sandbox.CodeEval, terr.Error(), req, v, calls, console.snapshot())
		}
		prog = ts
		res, report, waiting, err = e.runProgram(ctx, prog, v, calls, console, req, deadline, timeout)
	}
	lines := console.snapshot()
	notices := report.notices(v)
	if err == nil && report.count() > 0 && len(report.Reads) == 0 && bytes.Contains(res.Value, []byte(`"[Promise]"`)) {
		notices = append(notices, "missing await? The result contains a Promise (\"[Promise]\"): await tool calls before returning their results.")
	}
	if err != nil {
		if !errors.As(err, &se) {
			se = v8sandbox.Errorf(v8sandbox.CodeInternal, "%v", err)
		}
		msg := describeError(se, prog, req.Programs)
		if se.Code == v8sandbox.CodeTimeout {
			msg = fmt.Sprintf("TIMEOUT: execution exceeded %d ms", timeout.Milliseconds())
			if waiting != "" {
				msg += " while waiting for " + waiting
			}
		}
		if code := rootCode(se.Code, se.HostCode); code == pipeline.CodeInvalidArguments && se.Line == 0 {
			if t, args := calls.invalidCall(); t != nil {
				msg += sitesText(callSites(req.Code, t, args))
			}
		}
		resp := e.failure(TierV8, se.Code, msg, req, v, calls, lines)
		resp.Code = rootCode(se.Code, se.HostCode)
		hs := runHints(se, waiting)
		if se.Code == v8sandbox.CodeTimeout && waiting == "" && req.Durable != nil {
			hs = append(hs, durableClockHint)
		}
		resp.Text = withHints(resp.Text, hs)
		resp.Notices, resp.UnawaitedCalls = notices, report.count()
		return resp
	}
	return &Response{Tier: TierV8, Value: res.Value, Console: lines, Notices: notices, UnawaitedCalls: report.count()}
}

// runProgram runs one compiled program in the sandbox. The program's value
// waits for the tool calls it did not await (until shortly before the
// deadline; see bridge.js), which the returned report describes. Its tool
// calls end with the run: when Run returns (result, error, timeout), calls
// still in flight are cancelled and no new one starts; waiting names them,
// as they were when Run returned (before their cancellation ends them).
func (e *Engine) runProgram(ctx context.Context, prog *program, v *view, calls *callTracker, console *consoleBuffer,
	req Request, deadline time.Time, timeout time.Duration) (res v8sandbox.Result, report *settledReport, waiting string, err error) {
	remaining := time.Until(deadline)
	if remaining <= 0 {
		return v8sandbox.Result{}, nil, calls.inFlight(), v8sandbox.Errorf(v8sandbox.CodeTimeout, "execution exceeded its deadline")
	}
	// The sandbox enforces the deadline (and reports TIMEOUT); the host side
	// ends the run's calls when Run returns.
	runCtx, end := context.WithCancel(ctx)
	defer end()
	host := &bridgeHost{engine: e, view: v, console: console, onCall: newCallCounter(req.OnToolCall),
		tracker: calls, runCtx: runCtx, deadline: deadline, grace: unawaitedGrace(timeout), durable: req.Durable}
	js, err := withLibrary(prog.js, req.Programs)
	if err != nil {
		return v8sandbox.Result{}, nil, "", err
	}
	js = withStart(js, req.Durable)
	job := v8sandbox.Job{
		Source:      js,
		Origin:      origin,
		Prelude:     v.preludeFor(e.opts.Durable),
		Functions:   bridgeFunctions,
		AwaitResult: true,
		Limits:      v8sandbox.Limits{Timeout: remaining, HeapMB: e.opts.HeapMB, MaxResultBytes: e.opts.MaxResultBytes},
		Principal:   authn.NameFromContext(ctx), // a worker process never serves two principals
	}
	res, err = e.opts.Runner.Run(ctx, job, host)
	if err == nil && req.Durable != nil {
		if call := req.Durable.unused(); call != "" {
			err = v8sandbox.Errorf(CodeReplayDiverged, "replay diverged: the program ended without making journalled call %s; nothing was repeated", call)
		}
	}
	return res, host.report(), calls.inFlight(), err
}

// durableClockHint explains a durable run's TIMEOUT while its own code
// was running: its clock stands still between tool calls (durable.go).
const durableClockHint = "In a durable run (sandbox.durable) the clock advances only at tool calls: Date.now() and new Date() " +
	"return the same value until the program's next call or reply, so a busy wait on the clock never ends. Wait by awaiting a tool call instead."

// describeError renders an engine error with the user's line numbers.
func describeError(se *v8sandbox.Error, prog *program, lib *Library) string {
	var b strings.Builder
	switch se.Code {
	case v8sandbox.CodeEval:
		b.WriteString(se.Message)
		if se.Line > 0 {
			if l, c, ok := prog.position(se.Line, se.Column); ok {
				l, c = prog.referenceAt(se.Message, l, c)
				fmt.Fprintf(&b, " (line %d, column %d)", l, c)
			} else if ref, l, c, ok := lib.locate(prog.js, se.Line, se.Column); ok {
				fmt.Fprintf(&b, " (saved program %s, line %d, column %d)", ref, l, c)
			}
		}
		if stack := prog.mapStack(se.Stack, lib); strings.Contains(stack, "\n") {
			if _, frames, ok := strings.Cut(stack, "\n"); ok && strings.TrimSpace(frames) != "" {
				b.WriteString("\nStack:\n" + frames)
			}
		}
	default:
		fmt.Fprintf(&b, "%s: %s", se.Code, se.Message)
	}
	return b.String()
}

func (e *Engine) failure(tier Tier, code v8sandbox.Code, message string, req Request, v *view, calls *callTracker, console []string) *Response {
	text := withHints(message, hints(code, message, req, v, calls))
	return &Response{Tier: tier, IsError: true, Code: code, Text: text, Console: console}
}

// finish renders a successful value through the output pipeline, bounds
// errors and console lines, and sums the run up for the observer.
func (e *Engine) finish(ctx context.Context, req Request, resp *Response) RunSummary {
	processed := len(resp.Text)
	limit := req.MaxOutputSize // validated by Execute
	if !resp.IsError {
		raw, isJSON := renderValue(resp.Value)
		if isNull(resp.Value) && !reReturn.MatchString(req.Code) {
			const nothing = "The program returned nothing: end it with `return <value>` or an expression to get a result."
			if req.Detached { // the output stays the value alone
				resp.Notices = append(resp.Notices, nothing)
			} else {
				raw += "\n(" + nothing + ")"
				isJSON = false
			}
		}
		opts := e.opts.Output
		opts.ValidJSON = isJSON
		if isJSON {
			// raw is its rendering: shaping parses the shorter form, in
			// place (resp.Value is not written to while Shape reads it).
			opts.Compact = unsafe.String(unsafe.SliceData(resp.Value), len(resp.Value))
		}
		opts.MaxOutputSize = limit
		opts.Owner = req.Owner
		store := e.opts.Store
		if req.Detached { // printed whole: nothing refers to a store that ends with the process
			opts.AutoChunk, opts.Truncate, opts.Footer, store = false, false, false, nil
		}
		resp.Shaped = output.Shape(ctx, raw, req.Intent, opts, store)
		resp.Text = resp.Shaped.Text
		processed = resp.Shaped.ProcessedBytes
	} else if !req.Detached {
		// Error text (message, stack, hints) is bounded like a result.
		resp.Text = output.Bound(ctx, resp.Text, limit, req.Owner, e.opts.Store)
	}
	// Console output gets what the text left, and at least a quarter.
	if console := strings.Join(resp.Console, "\n"); !req.Detached && len(console) > max(limit-len(resp.Text), limit/4) {
		resp.Console = []string{output.Bound(ctx, console, max(limit-len(resp.Text), limit/4), req.Owner, e.opts.Store)}
	}
	sum := RunSummary{Tier: string(resp.Tier), Outcome: "ok", Processed: processed, Returned: len(resp.Render()), Failed: resp.IsError}
	if resp.IsError {
		sum.Outcome = cmp.Or(string(resp.Code), "error")
	}
	return sum
}

// Render is the text an agent receives: the result (or error) followed by
// the captured console lines.
func (r Response) Render() string {
	text := r.Text
	for _, w := range r.Warnings {
		text += "\n\n[warning] " + w
	}
	for _, n := range r.Notices {
		text += "\n\n[notice] " + n
	}
	if len(r.Console) == 0 {
		return text
	}
	return text + "\n\n[console]\n" + strings.Join(r.Console, "\n")
}

// renderValue renders a program's JSON value for the agent: a string as
// its text (file contents stay readable, not JSON-escaped), anything else
// as indented JSON, which the indenter has checked (isJSON).
func renderValue(v json.RawMessage) (text string, isJSON bool) {
	if len(v) == 0 {
		return "null", false
	}
	if v[0] == '"' {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s, false
		}
	}
	// Records indented grow to about twice their size, often a little
	// more: room for 2.5 times spares copying the whole text once more.
	b, err := jsonscan.AppendIndent(make([]byte, 0, len(v)*5/2+64), v, "  ")
	if err != nil {
		return string(v), false
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), true // b is never written again: no copy
}

// isNull reports whether a program's value is null or undefined.
func isNull(v json.RawMessage) bool {
	return len(v) == 0 || string(bytes.TrimSpace(v)) == "null"
}

var reReturn = regexp.MustCompile(`\breturn\b|\bexport\b`)

func mustCanonical(raw []byte) json.RawMessage {
	v, err := canonicalJSON(raw)
	if err != nil {
		panic(err)
	}
	return v
}
