package bench

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dop251/goja"
	"github.com/dop251/goja_nodejs/eventloop"
)

//go:embed goja_bootstrap.js
var gojaBootstrapJS string

// GojaMaxCallStack bounds goja's call depth (its default is unbounded: deep
// recursion grows the Go heap until the process dies). V8's stack allows
// about ten thousand frames.
const GojaMaxCallStack = 10_000

// gojaBootstrap is compiled once, on first use: a *goja.Program is
// shareable between runtimes. Not at package initialisation: every sandbox
// worker this binary starts (`bench.test sandbox-worker`) initialises the
// package and never runs goja (the compile cost 156 ms of each worker's
// start under -race).
var gojaBootstrap = sync.OnceValue(func() *goja.Program {
	return goja.MustCompile("bench:goja_bootstrap.js", gojaBootstrapJS, true)
})

// gojaPrograms caches compiled workload scripts. V8 keeps a compilation
// cache per isolate, so repeated runs of one source skip most parsing; this
// gives goja the same advantage.
type gojaPrograms struct {
	mu    sync.Mutex
	progs map[*Workload]*goja.Program
}

func (c *gojaPrograms) get(w *Workload) (*goja.Program, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.progs[w]; ok {
		return p, nil
	}
	js, err := script(w, GojaTarget)
	if err != nil {
		return nil, err
	}
	p, err := goja.Compile("program.js", js, false)
	if err != nil {
		return nil, &ScriptError{Message: err.Error()}
	}
	if c.progs == nil {
		c.progs = map[*Workload]*goja.Program{}
	}
	c.progs[w] = p
	return p, nil
}

// ScriptError is a script's own failure (syntax error, uncaught exception,
// rejected main promise, or a main promise that can never settle) in a goja
// variant.
type ScriptError struct {
	Message string
	Stack   string
}

func (e *ScriptError) Error() string { return e.Message }

// gojaHelpers are the bootstrap's helpers, captured before user code runs.
type gojaHelpers struct {
	serialize, describe, settle goja.Callable
}

// installBridge runs the bootstrap: it defines one global per tool, calling
// hostSync (blocking) or hostAsync (returning a promise) with the tool's
// name and its arguments as a JSON string, and unwrapping the JSON envelope
// the host returns. Exactly one of hostSync and hostAsync is non-nil.
func installBridge(vm *goja.Runtime, w *Workload, hostSync, hostAsync func(goja.FunctionCall) goja.Value) (*gojaHelpers, error) {
	fnValue, err := vm.RunProgram(gojaBootstrap())
	if err != nil {
		return nil, fmt.Errorf("goja bootstrap: %w", err)
	}
	fn, ok := goja.AssertFunction(fnValue)
	if !ok {
		return nil, errors.New("goja bootstrap: not a function")
	}
	var syncV, asyncV goja.Value = goja.Null(), goja.Null()
	if hostSync != nil {
		syncV = vm.ToValue(hostSync)
	}
	if hostAsync != nil {
		asyncV = vm.ToValue(hostAsync)
	}
	names := w.toolNames()
	nameValues := make([]any, len(names))
	for i, n := range names {
		nameValues[i] = n
	}
	helpersV, err := fn(goja.Undefined(), syncV, asyncV, vm.NewArray(nameValues...))
	if err != nil {
		return nil, fmt.Errorf("goja bootstrap: %w", err)
	}
	obj := helpersV.ToObject(vm)
	h := &gojaHelpers{}
	for i, dst := range []*goja.Callable{&h.serialize, &h.describe, &h.settle} {
		f, ok := goja.AssertFunction(obj.Get(fmt.Sprint(i)))
		if !ok {
			return nil, fmt.Errorf("goja bootstrap: helper %d is not a function", i)
		}
		*dst = f
	}
	return h, nil
}

// envelope runs a tool and wraps its outcome as the bootstrap expects:
// {"ok":true,"value":…} or {"ok":false,"message":…}.
func envelope(ctx context.Context, w *Workload, name, args string) string {
	result, err := w.callTool(ctx, name, json.RawMessage(args))
	if err != nil {
		b, _ := json.Marshal(struct {
			OK      bool   `json:"ok"`
			Message string `json:"message"`
		}{false, err.Error()})
		return string(b)
	}
	if len(result) == 0 {
		return `{"ok":true}`
	}
	var b strings.Builder
	b.Grow(len(result) + 20)
	b.WriteString(`{"ok":true,"value":`)
	b.Write(result)
	b.WriteByte('}')
	return b.String()
}

// describeError turns a rejection reason into a *ScriptError.
func describeError(h *gojaHelpers, reason goja.Value) error {
	out, err := h.describe(goja.Undefined(), reason)
	if err != nil {
		return &ScriptError{Message: "unprintable error: " + err.Error()}
	}
	var d struct{ Name, Message, Stack string }
	if err := json.Unmarshal([]byte(out.String()), &d); err != nil {
		return &ScriptError{Message: out.String()}
	}
	msg := d.Message
	if d.Name != "" {
		msg = d.Name + ": " + msg
	}
	return &ScriptError{Message: msg, Stack: d.Stack}
}

// runError maps an error returned by goja (exception, interrupt) to the
// run's error.
func runError(ctx context.Context, err error) error {
	var interrupted *goja.InterruptedError
	if errors.As(err, &interrupted) {
		if ctx.Err() != nil {
			return fmt.Errorf("goja: run interrupted: %w", ctx.Err())
		}
		return fmt.Errorf("goja: run interrupted: %v", interrupted.Value())
	}
	var overflow *goja.StackOverflowError
	if errors.As(err, &overflow) {
		return &ScriptError{Message: "goja: maximum call stack size exceeded (uncatchable in goja): " + overflow.Error()}
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return &ScriptError{Message: ex.Value().String(), Stack: ex.String()}
	}
	var se *goja.CompilerSyntaxError
	if errors.As(err, &se) {
		return &ScriptError{Message: "SyntaxError: " + se.Error()}
	}
	return err
}

// GojaSync is variant 4: goja with a synchronous tool bridge, as goja-based
// gateways call tools. A host function blocks the script until the tool
// returns, so Promise.all over tool calls runs them one after another. A
// fresh runtime serves every run; the deadline interrupts it.
type GojaSync struct {
	progs gojaPrograms
}

// NewGojaSync returns variant 4.
func NewGojaSync() *GojaSync { return &GojaSync{} }

// Name implements [Variant].
func (g *GojaSync) Name() string { return "goja-sync" }

// Close implements [Variant].
func (g *GojaSync) Close() {}

// Run implements [Variant].
func (g *GojaSync) Run(ctx context.Context, w *Workload) (json.RawMessage, error) {
	prog, err := g.progs.get(w)
	if err != nil {
		return nil, err
	}
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	vm := goja.New()
	vm.SetMaxCallStackSize(GojaMaxCallStack)
	stop := context.AfterFunc(ctx, func() { vm.Interrupt(ctx.Err()) })
	defer stop()

	hostSync := func(call goja.FunctionCall) goja.Value {
		return vm.ToValue(envelope(ctx, w, call.Argument(0).String(), call.Argument(1).String()))
	}
	h, err := installBridge(vm, w, hostSync, nil)
	if err != nil {
		return nil, runError(ctx, err)
	}
	v, err := vm.RunProgram(prog)
	if err != nil {
		return nil, runError(ctx, err)
	}
	// The job queue (microtasks) has run when RunProgram returns: with only
	// sync host functions the main promise is settled unless it waits for
	// something that never comes.
	p, ok := v.Export().(*goja.Promise)
	if !ok {
		return serializeGoja(ctx, h, v)
	}
	switch p.State() {
	case goja.PromiseStateFulfilled:
		return serializeGoja(ctx, h, p.Result())
	case goja.PromiseStateRejected:
		return nil, describeError(h, p.Result())
	default:
		return nil, &ScriptError{Message: "the main promise can never settle"}
	}
}

func serializeGoja(ctx context.Context, h *gojaHelpers, v goja.Value) (json.RawMessage, error) {
	out, err := h.serialize(goja.Undefined(), v)
	if err != nil {
		return nil, runError(ctx, err)
	}
	return json.RawMessage(out.String()), nil
}

// GojaLoop is variant 5: goja on goja_nodejs' event loop with a Promise
// bridge. A host function returns a promise at once; the tool runs on its
// own goroutine and the promise is settled on the loop (RunOnLoop), so
// Promise.all over tool calls runs them concurrently. A fresh loop and
// runtime serve every run; the deadline interrupts the runtime.
type GojaLoop struct {
	progs gojaPrograms
}

// NewGojaLoop returns variant 5.
func NewGojaLoop() *GojaLoop { return &GojaLoop{} }

// Name implements [Variant].
func (g *GojaLoop) Name() string { return "goja-loop" }

// Close implements [Variant].
func (g *GojaLoop) Close() {}

type outcome struct {
	value json.RawMessage
	err   error
}

// Run implements [Variant].
func (g *GojaLoop) Run(ctx context.Context, w *Workload) (json.RawMessage, error) {
	prog, err := g.progs.get(w)
	if err != nil {
		return nil, err
	}
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()

	loop := eventloop.NewEventLoop(eventloop.EnableConsole(false))
	loop.Start()
	var vmRef atomic.Pointer[goja.Runtime]
	defer func() {
		if vm := vmRef.Load(); vm != nil {
			vm.Interrupt("run ended")
		}
		cancel() // ends in-flight tool calls
		loop.Terminate()
	}()

	done := make(chan outcome, 1)
	// Loop-only state.
	var (
		settled  bool
		inflight int
	)
	finish := func(o outcome) {
		if !settled {
			settled = true
			done <- o
		}
	}
	loop.RunOnLoop(func(vm *goja.Runtime) {
		vmRef.Store(vm)
		vm.SetMaxCallStackSize(GojaMaxCallStack)
		if ctx.Err() != nil {
			finish(outcome{err: ctx.Err()})
			return
		}
		var h *gojaHelpers
		hostAsync := func(call goja.FunctionCall) goja.Value {
			name, args := call.Argument(0).String(), call.Argument(1).String()
			p, resolve, _ := vm.NewPromise()
			inflight++
			go func() {
				env := envelope(ctx, w, name, args)
				loop.RunOnLoop(func(vm *goja.Runtime) {
					inflight--
					if err := resolve(env); err != nil {
						finish(outcome{err: runError(ctx, err)})
						return
					}
					if !settled && inflight == 0 {
						finish(outcome{err: &ScriptError{Message: "the main promise can never settle"}})
					}
				})
			}()
			return vm.ToValue(p)
		}
		var err error
		if h, err = installBridge(vm, w, nil, hostAsync); err != nil {
			finish(outcome{err: runError(ctx, err)})
			return
		}
		v, err := vm.RunProgram(prog)
		if err != nil {
			finish(outcome{err: runError(ctx, err)})
			return
		}
		ok := vm.ToValue(func(call goja.FunctionCall) goja.Value {
			finish(outcome{value: json.RawMessage(call.Argument(0).String())})
			return goja.Undefined()
		})
		fail := vm.ToValue(func(call goja.FunctionCall) goja.Value {
			finish(outcome{err: describeError(h, call.Argument(0))})
			return goja.Undefined()
		})
		if _, err := h.settle(goja.Undefined(), v, ok, fail); err != nil {
			finish(outcome{err: runError(ctx, err)})
			return
		}
		if !settled && inflight == 0 {
			finish(outcome{err: &ScriptError{Message: "the main promise can never settle"}})
		}
	})

	select {
	case o := <-done:
		return o.value, o.err
	case <-ctx.Done():
		return nil, fmt.Errorf("goja: run interrupted: %w", ctx.Err())
	}
}
