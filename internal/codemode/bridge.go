package codemode

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/jsvalue"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/textcut"
	"github.com/isogate/isogate/v8sandbox"
)

//go:embed bridge.js
var bridgeJS string

// Host function names the bridge prelude consumes (and then deletes).
const (
	fnCall       = "__isogate_call"
	fnLookup     = "__isogate_lookup"
	fnKeys       = "__isogate_keys"
	fnConsole    = "__isogate_console"
	fnInterfaces = "__isogate_interfaces"
	fnInterface  = "__isogate_interface"
	fnSettled    = "__isogate_settled"
	fnGrace      = "__isogate_grace"
	fnTick       = "__isogate_tick"
	// fnDeterminism gives a durable run's Date, Math.random and delivery
	// of replies their journalled start (durable.go); null for other runs.
	fnDeterminism = "__isogate_determinism"
	// fnDiverged ends a replay whose program did not make the call the
	// journal has next (its argument, the call number) once the replies
	// the journal lists before it were delivered: REPLAY_DIVERGED.
	fnDiverged = "__isogate_diverged"
)

// prelude generates the bridge for a backend list. It does not depend on
// the tools, which the host looks up by name.
func prelude(backends []*backendView, durable bool) string {
	if backends == nil {
		backends = []*backendView{}
	}
	// JSON is a JavaScript expression: names cannot inject code. The bridge
	// runs in the scope of internal/jsvalue's kit, the captured built-ins and
	// the result serializer shared with run_code.
	js := strings.Replace(bridgeJS+stateJS, "SPEC;", string(mustMarshal(backends))+";", 1)
	js = strings.Replace(js, "DURABLE;", fmt.Sprint(durable)+";", 1)
	return jsvalue.Scope(js)
}

// bridgeHost serves one run's host functions: tool lookup and calls through
// the Caller, console capture, and interface introspection. Once the run
// has ended (end), no new backend call starts and those in flight are
// cancelled.
type bridgeHost struct {
	engine  *Engine
	view    *view
	console *consoleBuffer
	onCall  func(tool string)
	tracker *callTracker
	// durable journals the run's calls (nil: not a durable run).
	durable *DurableRun

	runCtx   context.Context // ends when Run returns
	deadline time.Time       // the run's deadline

	suggestions atomic.Int32 // "did you mean" searches made for this run

	// grace is how long before the deadline the run stops waiting for
	// calls the program did not await.
	grace time.Duration
	// settled is what the program left unawaited (fnSettled), if anything.
	settledMu sync.Mutex
	settled   *settledReport
}

// maxSuggestionsPerRun bounds the "did you mean" searches a program can
// trigger through __getToolInterface (each compares the name with every tool).
const maxSuggestionsPerRun = 8

// bridgeFunc is one bridge host function: its declaration and its
// handler, a method of the run's bridgeHost.
type bridgeFunc struct {
	v8sandbox.Function
	// checked: the handler returns only valid JSON (tool values are
	// canonical JSON, ToolValue), which Dispatch does not scan again.
	checked bool
	// endsWithRun: the handler's context ends when the run does.
	endsWithRun bool
	serve       func(h *bridgeHost, ctx context.Context, args json.RawMessage) (json.RawMessage, error)
}

// bridgeTable is every bridge host function, in the order they are
// declared to the sandbox: the same for every run, so a context prepared
// for one run fits the next, and built once, not per run.
var bridgeTable = []bridgeFunc{
	{Function: v8sandbox.Function{Name: fnCall, Async: true}, checked: true, endsWithRun: true, serve: (*bridgeHost).callHandler},
	{Function: v8sandbox.Function{Name: fnLookup}, endsWithRun: true, serve: (*bridgeHost).lookupHandler},
	{Function: v8sandbox.Function{Name: fnKeys}, endsWithRun: true, serve: (*bridgeHost).keysHandler},
	{Function: v8sandbox.Function{Name: fnConsole}, serve: (*bridgeHost).consoleHandler},
	{Function: v8sandbox.Function{Name: fnInterfaces}, serve: (*bridgeHost).interfacesHandler},
	{Function: v8sandbox.Function{Name: fnInterface}, serve: (*bridgeHost).interfaceHandler},
	{Function: v8sandbox.Function{Name: fnSettled}, serve: (*bridgeHost).settledHandler},
	{Function: v8sandbox.Function{Name: fnGrace, Async: true}, endsWithRun: true, serve: (*bridgeHost).graceHandler},
	{Function: v8sandbox.Function{Name: fnTick, Async: true}, serve: (*bridgeHost).tickHandler},
	{Function: v8sandbox.Function{Name: fnDeterminism}, serve: (*bridgeHost).determinismHandler},
	{Function: v8sandbox.Function{Name: fnDiverged}, serve: (*bridgeHost).divergedHandler},
}

// bridgeFunctions declares the bridge's host functions (Job.Functions).
var bridgeFunctions = func() []v8sandbox.Function {
	fs := make([]v8sandbox.Function, len(bridgeTable))
	for i, f := range bridgeTable {
		fs[i] = f.Function
	}
	return fs
}()

// bridgeByName finds a bridge host function by name.
var bridgeByName = func() map[string]*bridgeFunc {
	m := make(map[string]*bridgeFunc, len(bridgeTable))
	for i := range bridgeTable {
		if m[bridgeTable[i].Name] != nil {
			panic("codemode: bridge host function " + bridgeTable[i].Name + " declared twice")
		}
		m[bridgeTable[i].Name] = &bridgeTable[i]
	}
	return m
}()

// Call implements v8sandbox.Host: it serves one bridge host function for
// this run, as a v8sandbox.Table would, without a table built per run.
func (h *bridgeHost) Call(ctx context.Context, call v8sandbox.HostCall) v8sandbox.HostReply {
	f := bridgeByName[call.Name]
	if f == nil {
		return v8sandbox.HostReply{Error: &v8sandbox.HostError{Message: fmt.Sprintf("unknown host function %q", call.Name)}}
	}
	if f.endsWithRun {
		var stop context.CancelFunc
		ctx, stop = context.WithCancel(ctx)
		defer stop()
		defer context.AfterFunc(h.runCtx, stop)()
	}
	r := v8sandbox.Reply(f.serve(h, ctx, call.Args))
	r.Checked = f.checked && r.Error == nil && r.Fatal == nil
	return r
}

func (h *bridgeHost) interfacesHandler(context.Context, json.RawMessage) (json.RawMessage, error) {
	return h.view.interfacesJSON(), nil
}

func (h *bridgeHost) tickHandler(context.Context, json.RawMessage) (json.RawMessage, error) {
	return nil, nil
}

func (h *bridgeHost) determinismHandler(context.Context, json.RawMessage) (json.RawMessage, error) {
	if h.durable == nil {
		return nil, nil
	}
	return h.durable.determinism(), nil
}

func (h *bridgeHost) divergedHandler(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
	var a []int
	if h.durable == nil || json.Unmarshal(args, &a) != nil || len(a) != 1 {
		return nil, v8sandbox.Errorf(v8sandbox.CodeInternal, "bad replay divergence report")
	}
	return nil, h.durable.diverged(a[0])
}

// callHandler makes one tool call. A refusal or backend failure reaches the
// script as an Error whose code is the failure's code (e.code ===
// "TOOL_DENIED", "BACKEND_UNAVAILABLE", …).
func (h *bridgeHost) callHandler(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	backend, tool, callArgs, seq, note, err := callArguments(args)
	if err != nil {
		return nil, err
	}
	if backend == stateBackend {
		return h.stateCall(ctx, tool, callArgs, seq, note)
	}
	if h.durable != nil {
		h.durable.noteClock(note.Clock)
		sent := false
		value, err := h.durable.call(ctx, seq, backend, tool, callArgs, note.After, h.idempotent(backend, tool),
			func(ctx context.Context) (json.RawMessage, error) {
				sent = true
				return h.call(ctx, backend, tool, callArgs)
			})
		if !sent {
			h.replayed(ctx, backend, tool)
		}
		return value, err
	}
	value, err := h.call(ctx, backend, tool, callArgs)
	return value, coded(err)
}

// replayed counts a call answered from a durable run's journal against
// the run's approved plan, as the call was counted when first made: the
// approval of a plan asked again on replay covers no more calls than the
// plan announced in all (pipeline.Run.Replayed).
func (h *bridgeHost) replayed(ctx context.Context, backend, tool string) {
	run := pipeline.RunFrom(ctx)
	if run == nil {
		return
	}
	if b, err := h.backend(ctx, backend); err == nil {
		if t := b.tool(tool); t != nil {
			run.Replayed(&pipeline.Call{Backend: t.Backend, Tool: t.Name})
		}
	}
}

// idempotent reports whether a tool declares annotations.idempotentHint.
func (h *bridgeHost) idempotent(backend, tool string) bool {
	t := h.view.backend(backend).tool(tool)
	return t != nil && t.Idempotent
}

// coded gives an error with a code (a pipeline's or a backend's), or a
// tool's error result, its code as data (a tool error also names the tool
// in e.data.tool); the engine's own errors and code-less ones are returned
// as they are.
func coded(err error) error {
	if err == nil {
		return nil
	}
	var fatal *v8sandbox.Error
	var thrown *v8sandbox.HostError
	if errors.As(err, &fatal) || errors.As(err, &thrown) {
		return err
	}
	var toolErr *ToolError
	if errors.As(err, &toolErr) {
		return &v8sandbox.HostError{Code: CodeToolError, Message: err.Error(), Data: mustMarshal(struct {
			Tool string `json:"tool"`
		}{toolErr.Tool})}
	}
	code := v8sandbox.CodeOf(err)
	if code == "" {
		return err
	}
	return &v8sandbox.HostError{Code: code, Message: err.Error()}
}

func (h *bridgeHost) lookupHandler(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	var a []string
	if err := json.Unmarshal(args, &a); err != nil || len(a) != 2 {
		return nil, fmt.Errorf("bad tool lookup arguments")
	}
	b, err := h.backend(ctx, a[0])
	if err != nil {
		return nil, coded(err)
	}
	// A denied tool is a function too, whose calls the host refuses
	// (call): a program reads TOOL_DENIED naming the rule, not "not a
	// function".
	t, d := b.resolve(a[1])
	switch {
	case t != nil:
		return mustMarshal([2]string{t.Name, t.NameIdent}), nil
	case d != nil:
		return mustMarshal([2]string{d.Tool, catalog.JSIdent(d.Tool)}), nil
	}
	return nil, nil
}

func (h *bridgeHost) keysHandler(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	var a []string
	if err := json.Unmarshal(args, &a); err != nil || len(a) != 1 {
		return nil, fmt.Errorf("bad backend keys arguments")
	}
	b, err := h.backend(ctx, a[0])
	if err != nil {
		return nil, coded(err)
	}
	return b.keysJSON(), nil
}

func (h *bridgeHost) consoleHandler(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
	var a []string
	if err := json.Unmarshal(args, &a); err != nil || len(a) != 2 {
		return nil, fmt.Errorf("bad console arguments")
	}
	h.console.add(a[0], a[1])
	return nil, nil
}

func (h *bridgeHost) interfaceHandler(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
	var a []string
	if err := json.Unmarshal(args, &a); err != nil || len(a) != 1 {
		return nil, fmt.Errorf("__getToolInterface expects a tool name")
	}
	// Suggestions cost an edit distance per tool: a run gets a few.
	return h.engine.toolInterface(h.view, a[0], h.suggestions.Add(1) <= maxSuggestionsPerRun)
}

// backend returns the named backend of the run's view. A configured backend
// whose tools are not known yet (still starting) is waited for, and the
// view refreshed; one that is down fails with its error.
func (h *bridgeHost) backend(ctx context.Context, name string) (*backendView, error) {
	b := h.view.backend(name)
	if b == nil {
		return nil, fmt.Errorf("unknown backend %q", name)
	}
	if len(b.tools) > 0 || h.engine.opts.Backends == nil {
		return b, nil
	}
	// Bounded by the run's own deadline too: in process isolation a sync
	// lookup holds the worker's V8 thread while it waits.
	ctx, cancel := context.WithDeadline(ctx, h.deadline)
	defer cancel()
	h.tracker.waitStart(b.Name)
	err := h.engine.waitBackend(ctx, b.Name)
	if err != nil && errors.Is(err, context.DeadlineExceeded) && !time.Now().Before(h.deadline) {
		// The run's own deadline, not the backend: the run ends with
		// TIMEOUT naming the wait (left recorded as in flight), and the
		// script gets no backend error to catch.
		return nil, v8sandbox.Errorf(v8sandbox.CodeTimeout, "execution exceeded its deadline while waiting for backend %q", b.Name)
	}
	h.tracker.waitDone(b.Name)
	if err != nil {
		h.tracker.failed(b.Name, err)
		return nil, err
	}
	h.view = h.engine.views.get(h.engine.opts.Catalog, h.engine.opts.Backends)
	if nb := h.view.backend(name); nb != nil {
		return nb, nil
	}
	return b, nil
}

// call runs one tool call of the program, after checking on the host that
// the backend and tool exist in the catalogue.
func (h *bridgeHost) call(ctx context.Context, backend, tool string, args json.RawMessage) (json.RawMessage, error) {
	if ctx.Err() != nil {
		return nil, ctx.Err() // the run is over: nothing starts any more
	}
	b, err := h.backend(ctx, backend)
	if err != nil {
		return nil, err
	}
	t, d := b.resolve(tool)
	if d != nil {
		return nil, deniedError(d)
	}
	if t == nil {
		return nil, fmt.Errorf("backend %q has no tool %q", b.Name, tool)
	}
	full := t.Backend + "." + t.Name
	h.tracker.start(full)
	value, err := h.engine.callTool(ctx, t.Backend, t.Name, args)
	if err != nil && ctx.Err() != nil {
		h.tracker.cutShort(full) // named if the run timed out
	}
	h.tracker.done(full, len(value), err)
	if v8sandbox.CodeOf(err) == pipeline.CodeInvalidArguments {
		h.tracker.refusedArguments(t, args)
	}
	if h.onCall != nil {
		h.onCall(full)
	}
	return value, err
}

// deniedError is the refusal of a call to a tool policy denies: the
// program's error has code TOOL_DENIED and a message that starts with it
// and names the rule, as the pipeline's refusals do.
func deniedError(d *catalog.DeniedTool) error {
	return &v8sandbox.HostError{Code: pipeline.CodeToolDenied,
		Message: string(pipeline.CodeToolDenied) + ": " + (&catalog.DeniedError{Name: d.Name(), Tool: *d}).Error()}
}

// callTool runs one backend call and converts its result for the program.
func (e *Engine) callTool(ctx context.Context, backend, tool string, args json.RawMessage) (json.RawMessage, error) {
	if args == nil || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if len(args) == 0 || args[0] != '{' {
		return nil, fmt.Errorf("%s.%s expects one object argument, e.g. %s.%s({...})", backend, tool, backend, tool)
	}
	res, err := e.opts.Caller.CallTool(ctx, backend, tool, args)
	var value json.RawMessage
	if err == nil {
		value, err = ToolValue(backend+"."+tool, res)
	} else if ctx.Err() == nil && v8sandbox.CodeOf(err) == "" && !strings.HasPrefix(err.Error(), fmt.Sprintf("backend %q", backend)) {
		// Refusals and manager errors say what failed already, and so do
		// the backend's own call errors (`backend "x": tool "t": …`).
		err = fmt.Errorf("backend %q: %w", backend, err)
	}
	var toolErr *ToolError
	if errors.As(err, &toolErr) {
		return nil, toolErr
	}
	return value, err
}

// Interface describes one tool for __interfaces and __getToolInterface.
type Interface struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	// TS is the tool's TypeScript declarations: input and output
	// interfaces and the call signature.
	TS string `json:"ts,omitempty"`
}

func interfaceOf(t Tool) Interface {
	schema := t.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	i := Interface{Name: t.Backend + "." + t.Name, Description: t.Description, InputSchema: schema}
	if t.Declarations != nil {
		i.TS = t.Declarations()
	}
	return i
}

// interfaces maps backend → tool → interface.
func interfaces(tools []Tool) map[string]map[string]Interface {
	out := map[string]map[string]Interface{}
	for _, t := range tools {
		if out[t.Backend] == nil {
			out[t.Backend] = map[string]Interface{}
		}
		out[t.Backend][t.Name] = interfaceOf(t)
	}
	return out
}

// toolInterface describes the tool a name resolves to (see findTool).
func (e *Engine) toolInterface(v *view, name string, suggest bool) (json.RawMessage, error) {
	t, err := e.findTool(v, name, suggest)
	if err != nil {
		return nil, err
	}
	return mustMarshal(interfaceOf(t)), nil
}

// findTool resolves a name through the catalogue, the only authority on
// names, and returns the run's view of that tool (the catalogue may have
// moved on since the view was taken).
func (e *Engine) findTool(v *view, name string, suggest bool) (Tool, error) {
	t, err := e.opts.Catalog.Lookup(name, suggest)
	if err != nil {
		return Tool{}, err
	}
	if vt := v.backend(t.Backend).tool(t.Name); vt != nil {
		return *vt, nil
	}
	return t, nil
}

// nameCode is the code of a run that fails on a name (findTool's error):
// TOOL_DENIED for a tool policy denies, else EVAL_ERROR.
func nameCode(err error) v8sandbox.Code {
	if _, ok := errors.AsType[*catalog.DeniedError](err); ok {
		return pipeline.CodeToolDenied
	}
	return v8sandbox.CodeEval
}

// nameFailure is the text of a fast tier's failure to find a tool: its
// code first when it has one (TOOL_DENIED), as tier 3's message has it.
func nameFailure(err error) string {
	if c := nameCode(err); c != v8sandbox.CodeEval {
		return "Error: " + string(c) + ": " + err.Error()
	}
	return "Error: " + err.Error()
}

// consoleBuffer keeps the first lines a program logs.
type consoleBuffer struct {
	mu       sync.Mutex
	lines    []string
	max      int
	maxLine  int
	dropped  int
	warnings int
}

func (c *consoleBuffer) add(level, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.lines) >= c.max {
		c.dropped++
		return
	}
	text = textcut.Clip(text, c.maxLine, "… [line truncated]")
	prefix := ""
	if level != "log" && level != "info" {
		prefix = "[" + level + "] "
	}
	c.lines = append(c.lines, prefix+text)
}

// snapshot returns the captured lines, with a note when lines were dropped.
func (c *consoleBuffer) snapshot() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := append([]string(nil), c.lines...)
	if c.dropped > 0 {
		out = append(out, fmt.Sprintf("[console: %d more lines dropped after the first %d]", c.dropped, c.max))
	}
	return out
}
