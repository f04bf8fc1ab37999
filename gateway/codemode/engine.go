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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/gateway/codemode/fastpath"
	"github.com/isogate/isogate/gateway/codemode/output"
	"github.com/isogate/isogate/gateway/pipeline"
	"github.com/isogate/isogate/gateway/stats"
	"github.com/isogate/isogate/v8sandbox"
)

// Tool is one backend tool as code mode sees it.
type Tool struct {
	Backend, Name           string // original names
	BackendIdent, NameIdent string // sanitized JavaScript identifiers
	Description             string
	InputSchema             json.RawMessage
}

// Catalog lists the tools programs can call.
type Catalog interface {
	CodeModeTools() []Tool
}

// Caller calls backend tools.
type Caller interface {
	CallTool(ctx context.Context, backend, tool string, args json.RawMessage) (*mcp.CallToolResult, error)
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

	Timeout       time.Duration // default run timeout; 30s
	HeapMB        int           // heap cap of a run; 50
	MaxConcurrent int           // concurrent V8 runs; 8
	MaxOutputSize int           // default max_output_size; 200 000 bytes
	Output        output.Options
	Store         *output.Store // keeps full results retrievable; nil disables chunking
	ConsoleLines  int           // console lines kept per run; 200
	MaxToolCalls  int           // backend calls per run; 0: no limit

	Stats  *stats.Counters
	Logger *slog.Logger
}

// Engine executes call_tool_chain requests. It is safe for concurrent use.
type Engine struct {
	opts   Options
	slots  chan struct{}
	logger *slog.Logger
}

// New returns an engine.
func New(opts Options) (*Engine, error) {
	if opts.Runner == nil || opts.Catalog == nil || opts.Caller == nil {
		return nil, errors.New("codemode: Runner, Catalog and Caller are required")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.HeapMB <= 0 {
		opts.HeapMB = 50
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = 8
	}
	if opts.MaxOutputSize <= 0 {
		opts.MaxOutputSize = 200_000
	}
	if opts.ConsoleLines <= 0 {
		opts.ConsoleLines = 200
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Engine{opts: opts, slots: make(chan struct{}, opts.MaxConcurrent), logger: opts.Logger}, nil
}

// Request is one call_tool_chain invocation.
type Request struct {
	Code          string
	Timeout       time.Duration // 0: the engine default
	MaxOutputSize int           // 0: the engine default
	Intent        string
	// Owner scopes stored full results (e.g. the MCP session id).
	Owner string
	// OnToolCall is called after each backend call completes.
	OnToolCall func(done int, tool string)
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
}

// MaxResultBytes caps the JSON a program may return: far more than an agent
// reads (output is cut to max_output_size), enough for the full result to
// stay retrievable as isogate://result/{id}.
const MaxResultBytes = 4 << 20

// deadlineGrace lets the sandbox report its own TIMEOUT before the request
// context (which bounds host calls made by the parent) expires.
const deadlineGrace = time.Second

// Execute runs one request in the cheapest tier that can serve it.
func (e *Engine) Execute(ctx context.Context, req Request) Response {
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = e.opts.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout+deadlineGrace)
	defer cancel()
	run := pipeline.NewRun(e.opts.MaxToolCalls)
	ctx = pipeline.WithRun(ctx, run)
	tools := e.opts.Catalog.CodeModeTools()

	fastCtx, cancelFast := context.WithTimeout(ctx, timeout)
	defer cancelFast()
	resp := e.fast(fastCtx, req, tools)
	if resp == nil {
		resp = e.runV8(ctx, req, tools, timeout)
	}
	e.finish(req, resp)
	resp.Record = record(run, req, resp)
	return *resp
}

// record describes a finished run.
func record(run *pipeline.Run, req Request, resp *Response) *pipeline.RunRecord {
	rec := &pipeline.RunRecord{
		ID: run.ID, Code: req.Code, Tier: string(resp.Tier), Started: run.Started,
		DurationMS: time.Since(run.Started).Milliseconds(), Outcome: pipeline.OutcomeOK,
		Console: resp.Console, ResultBytes: len(resp.Value), Calls: run.Calls(),
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
	return rec
}

// fast serves tiers 1 and 2, or returns nil when the code needs V8.
func (e *Engine) fast(ctx context.Context, req Request, tools []Tool) *Response {
	plan := fastpath.Classify(req.Code)
	if !plan.Returns && (plan.Kind == fastpath.KindInterfaces || plan.Kind == fastpath.KindToolInterface) {
		return &Response{Tier: TierSimpleCall, Value: json.RawMessage("null")} // evaluated, not returned
	}
	switch plan.Kind {
	case fastpath.KindInterfaces:
		return &Response{Tier: TierSimpleCall, Value: mustCanonical(mustMarshal(interfaces(tools)))}
	case fastpath.KindToolInterface:
		v, err := toolInterface(tools, plan.InterfaceName)
		if err != nil {
			return e.failure(TierSimpleCall, v8sandbox.CodeEval, "Error: "+err.Error(), tools, nil)
		}
		return &Response{Tier: TierSimpleCall, Value: mustCanonical(v)}
	case fastpath.KindDirect:
		t, err := findTool(tools, plan.Name)
		if err != nil {
			return e.failure(TierDirect, v8sandbox.CodeEval, "Error: "+err.Error(), tools, nil)
		}
		return e.dispatch(ctx, TierDirect, t, plan.Arguments, req, tools)
	case fastpath.KindSimpleCall:
		for _, t := range tools {
			if (plan.Backend == t.BackendIdent || plan.Backend == t.Backend) && (plan.Tool == t.NameIdent || plan.Tool == t.Name) {
				resp := e.dispatch(ctx, TierSimpleCall, t, plan.Arguments, req, tools)
				if !plan.Returns && !resp.IsError {
					resp.Value = json.RawMessage("null") // the call ran; the program returns undefined
				}
				return resp
			}
		}
	}
	return nil // unknown names fall through: V8 reports them with hints
}

func (e *Engine) dispatch(ctx context.Context, tier Tier, t Tool, args json.RawMessage, req Request, tools []Tool) *Response {
	value, err := e.callTool(ctx, t.Backend, t.Name, args)
	if req.OnToolCall != nil {
		req.OnToolCall(1, t.Backend+"."+t.Name)
	}
	if err != nil {
		code := v8sandbox.CodeEval
		if ctx.Err() != nil {
			code = v8sandbox.CodeTimeout
			if errors.Is(ctx.Err(), context.Canceled) {
				code = v8sandbox.CodeCancelled
			}
		}
		return e.failure(tier, code, "Error: "+err.Error(), tools, nil)
	}
	return &Response{Tier: tier, Value: value}
}

// runV8 serves tier 3.
func (e *Engine) runV8(ctx context.Context, req Request, tools []Tool, timeout time.Duration) *Response {
	prog, err := compile(req.Code)
	if err != nil {
		return e.failure(TierV8, v8sandbox.CodeEval, err.Error(), tools, nil)
	}
	wait := time.NewTimer(timeout)
	defer wait.Stop()
	select {
	case e.slots <- struct{}{}:
		defer func() { <-e.slots }()
	case <-ctx.Done():
		return e.failure(TierV8, v8sandbox.CodeCancelled, "cancelled while waiting for a free sandbox", tools, nil)
	case <-wait.C:
		return e.failure(TierV8, v8sandbox.CodeTimeout, fmt.Sprintf(
			"sandbox concurrency limit reached: %d programs are running and none finished within the run's timeout (%v); try again",
			e.opts.MaxConcurrent, timeout), tools, nil)
	}
	console := &consoleBuffer{max: e.opts.ConsoleLines, maxLine: 4000}
	host := &bridgeHost{engine: e, tools: tools, console: console, onCall: newCallCounter(req.OnToolCall)}
	job := v8sandbox.Job{
		Source:      prog.js,
		Origin:      origin,
		Prelude:     prelude(tools),
		Functions:   bridgeFunctions,
		AwaitResult: true,
		Limits:      v8sandbox.Limits{Timeout: timeout, HeapMB: e.opts.HeapMB, MaxResultBytes: MaxResultBytes},
	}
	res, err := e.opts.Runner.Run(ctx, job, host)
	lines := console.snapshot()
	if err != nil {
		var se *v8sandbox.Error
		if !errors.As(err, &se) {
			se = v8sandbox.Errorf(v8sandbox.CodeInternal, "%v", err)
		}
		return e.failure(TierV8, se.Code, describeError(se, prog), tools, lines)
	}
	return &Response{Tier: TierV8, Value: res.Value, Console: lines}
}

// describeError renders an engine error with the user's line numbers.
func describeError(se *v8sandbox.Error, prog *program) string {
	var b strings.Builder
	switch se.Code {
	case v8sandbox.CodeEval:
		b.WriteString(se.Message)
		if se.Line > 0 {
			if l, c, ok := prog.position(se.Line, se.Column); ok {
				fmt.Fprintf(&b, " (line %d, column %d)", l, c)
			}
		}
		if stack := prog.mapStack(se.Stack); strings.Contains(stack, "\n") {
			if _, frames, ok := strings.Cut(stack, "\n"); ok && strings.TrimSpace(frames) != "" {
				b.WriteString("\nStack:\n" + frames)
			}
		}
	default:
		fmt.Fprintf(&b, "%s: %s", se.Code, se.Message)
	}
	return b.String()
}

func (e *Engine) failure(tier Tier, code v8sandbox.Code, message string, tools []Tool, console []string) *Response {
	text := message
	if hs := hints(message, tools); len(hs) > 0 {
		text += "\n\nHint: " + strings.Join(hs, "\nHint: ")
	}
	return &Response{Tier: tier, IsError: true, Code: code, Text: text, Console: console}
}

// finish renders a successful value through the output pipeline, appends
// console lines, and records statistics.
func (e *Engine) finish(req Request, resp *Response) {
	processed := len(resp.Text)
	if !resp.IsError {
		raw := renderValue(resp.Value)
		if raw == "null" && !reReturn.MatchString(req.Code) {
			raw += "\n(The program returned nothing: end it with `return <value>` to get a result.)"
		}
		opts := e.opts.Output
		opts.MaxOutputSize = e.opts.MaxOutputSize
		if req.MaxOutputSize > 0 {
			opts.MaxOutputSize = req.MaxOutputSize
		}
		opts.Owner = req.Owner
		resp.Shaped = output.Shape(raw, req.Intent, opts, e.opts.Store)
		resp.Text = resp.Shaped.Text
		processed = resp.Shaped.ProcessedBytes
	}
	if e.opts.Stats != nil {
		e.opts.Stats.Run(string(resp.Tier), processed, len(resp.Render()), resp.IsError)
	}
}

// Render is the text an agent receives: the result (or error) followed by
// the captured console lines.
func (r Response) Render() string {
	if len(r.Console) == 0 {
		return r.Text
	}
	return r.Text + "\n\n[console]\n" + strings.Join(r.Console, "\n")
}

// renderValue pretty-prints a JSON value for the agent.
func renderValue(v json.RawMessage) string {
	if len(v) == 0 {
		return "null"
	}
	var b bytes.Buffer
	if err := json.Indent(&b, v, "", "  "); err != nil {
		return string(v)
	}
	return b.String()
}

var reReturn = regexp.MustCompile(`\breturn\b|\bexport\b`)

func mustCanonical(raw []byte) json.RawMessage {
	v, err := canonicalJSON(raw)
	if err != nil {
		panic(err)
	}
	return v
}
