package v8sandbox

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	v8 "rogchap.com/v8go"
)

//go:embed bootstrap.js
var bootstrapJS string

// terminateEvery is how often an expired run's termination is re-issued:
// TerminateExecution sent while no JavaScript runs is lost.
const terminateEvery = 2 * time.Millisecond

// run is one job's execution on a worker.
type run struct {
	w      *worker
	req    *request
	job    Job
	ctx    context.Context // ends at the deadline or when the caller cancels
	cancel context.CancelFunc
	done   chan struct{}

	lock      isolateLock // held while the run uses the isolate
	v8ctx     *v8.Context
	serialize *v8.Function
	describe  *v8.Function

	completions chan completion
	direct      *directCall // an async call the worker's thread may wait for itself, or nil
	callers     chan func() // idle host-call goroutines take calls here (spawn)
	inflight    int
	hostCalls   int
	fatal       *Error // set by a host function that ends the run
	stopped     bool   // the run ended by termination of any kind
}

// directCall is an async host call the worker's thread makes, or waits
// for, itself when it is the only call in flight once the script waits:
// either started through [Starter] (wait then waits for its reply), or
// held, not started yet (wait then makes it through [Dispatch]). Should
// another call come first, it goes to a goroutine of the run's instead.
//
// A held call is what spares an awaited call to an ordinary [Host] two
// hand-offs between goroutines (the call to a goroutine, its reply back to
// the thread): the thread makes it when the script next waits, at once for
// `await f()`. It starts no later than before for `Promise.all([f(),
// g()])` either (the second call starts the first). Only a call the script
// does not await at once starts when the script next waits rather than when
// it was made.
type directCall struct {
	name     string
	wait     func() HostReply // the call's checked reply
	held     bool             // not started yet: wait makes the call
	resolver *v8.PromiseResolver
	promise  *v8.Value
}

// completion is an async host call's outcome, delivered to the worker.
type completion struct {
	resolver *v8.PromiseResolver
	promise  *v8.Value // the handle returned to the script
	envelope string
	fatal    *Error
}

func newRun(w *worker, req *request) *run {
	ctx, cancel := context.WithTimeout(req.ctx, req.job.Limits.Timeout)
	return &run{
		w: w, req: req, job: req.job, ctx: ctx, cancel: cancel,
		done:        make(chan struct{}),
		completions: make(chan completion),
		callers:     make(chan func()),
	}
}

// terminated reports whether the run was cut short, leaving the isolate in
// a state that is not worth reusing.
func (r *run) terminated() bool { return r.stopped || r.w.heap.hit() }

// execute runs the job and always leaves the isolate idle: the deadline's
// terminator has stopped and the context is closed when it returns.
func (r *run) execute() (Result, error) {
	start := time.Now()
	terminated := make(chan struct{})
	stop := context.AfterFunc(r.ctx, func() {
		defer close(terminated)
		r.terminateUntilDone()
	})
	stopHeapWatch := r.w.heap.watch()
	r.w.current = r
	r.lock = lockIsolate(r.w.iso)
	defer func() {
		r.lock.release()
		stopHeapWatch()
		r.w.current = nil
		if d := r.direct; d != nil {
			// Never awaited: a started call's reply still comes (the host's
			// work ends with the run) and frees what carried the call; a
			// held one is made, as a call on a goroutine would have been.
			r.direct = nil
			go d.wait()
		}
		close(r.done)
		if !stop() {
			<-terminated // the terminator started: wait until it has seen done
		}
		r.cancel()
	}()

	value, err := r.evaluate()
	// The context is closed by the worker after the reply went out.
	r.w.used = r.v8ctx
	if err != nil {
		return Result{}, err
	}
	return Result{Value: value, HostCalls: r.hostCalls, Duration: time.Since(start)}, nil
}

// terminateUntilDone runs once the run's context ends: it terminates the
// script and keeps re-issuing the termination until the run returns.
func (r *run) terminateUntilDone() {
	ticker := time.NewTicker(terminateEvery)
	defer ticker.Stop()
	for {
		r.w.iso.TerminateExecution()
		select {
		case <-r.done:
			return
		case <-ticker.C:
		}
	}
}

// stopError reports why the run must stop, or nil. It is checked after
// every call into V8 because termination can be silent (for example inside
// a microtask checkpoint).
func (r *run) stopError() *Error {
	var e *Error
	switch {
	case r.w.heap.hit():
		e = Errorf(CodeHeapLimit, "JavaScript heap limit of %d MB exceeded", r.job.Limits.HeapMB)
	case r.fatal != nil:
		e = r.fatal
	case r.ctx.Err() != nil:
		e = StopReason(r.req.ctx, true, r.job.Limits.Timeout)
	default:
		return nil
	}
	r.stopped = true
	return e
}

// check turns a V8 error into the run's error, preferring a stop reason.
func (r *run) check(err error, what string) error {
	if stop := r.stopError(); stop != nil {
		return stop
	}
	if err == nil {
		return nil
	}
	return r.scriptError(err, what)
}

func (r *run) evaluate() (json.RawMessage, error) {
	c := r.w.takeWarm(r.job)
	if c == nil {
		var err error
		if c, err = r.w.prepare(r.job.Functions, r.job.Prelude); err != nil {
			if stop := r.stopError(); stop != nil {
				return nil, stop // the deadline fired while preparing
			}
			return nil, err
		}
	}
	r.v8ctx, r.serialize, r.describe = c.ctx, c.serialize, c.describe
	// Compiled apart from running, so a syntax error is known to have run
	// nothing of the script (Error.Compile): a caller may then rewrite the
	// source (for example strip TypeScript) and run it again.
	script, err := r.w.compile(r.job.Source, r.job.Origin)
	if err != nil {
		err := r.check(err, "script")
		if e, ok := err.(*Error); ok && e.Code == CodeEval {
			e.Compile = true
		}
		return nil, err
	}
	value, err := script.Run(r.v8ctx)
	if err := r.check(err, "script"); err != nil {
		return nil, err
	}
	if r.job.AwaitResult && value.IsPromise() {
		promise, err := value.AsPromise()
		if err != nil {
			return nil, Errorf(CodeInternal, "completion value: %v", err)
		}
		if value, err = r.await(promise); err != nil {
			return nil, err
		}
	} else if err := r.drain(); err != nil {
		return nil, err
	}
	if r.w.heap.checkNow() {
		return nil, r.stopError()
	}
	if !r.job.AwaitResult {
		return nil, nil
	}
	return r.serializeResult(value)
}

func helperAt(obj *v8.Object, i uint32) (*v8.Function, error) {
	v, err := obj.GetIdx(i)
	if err != nil {
		return nil, Errorf(CodeInternal, "bootstrap helper %d: %v", i, err)
	}
	fn, err := v.AsFunction()
	if err != nil {
		return nil, Errorf(CodeInternal, "bootstrap helper %d: %v", i, err)
	}
	return fn, nil
}

// await runs the event loop until promise settles.
func (r *run) await(promise *v8.Promise) (*v8.Value, error) {
	for {
		r.v8ctx.PerformMicrotaskCheckpoint()
		if err := r.check(nil, ""); err != nil {
			return nil, err
		}
		switch promise.State() {
		case v8.Fulfilled:
			return promise.Result(), nil
		case v8.Rejected:
			return nil, r.rejection(promise.Result())
		}
		if r.inflight == 0 {
			return nil, &Error{Code: CodeEval, Message: "the main promise can never settle: " +
				"it waits for something that will never happen (no host call is in flight)"}
		}
		if err := r.waitCompletion(); err != nil {
			return nil, err
		}
	}
}

// drain runs the event loop until no host call is in flight.
func (r *run) drain() error {
	for {
		r.v8ctx.PerformMicrotaskCheckpoint()
		if err := r.check(nil, ""); err != nil {
			return err
		}
		if r.inflight == 0 {
			return nil
		}
		if err := r.waitCompletion(); err != nil {
			return err
		}
	}
}

// waitCompletion settles the next finished async host call.
//
// A direct call ([directCall]) that is the only one in flight is made or
// waited for here, holding the isolate. Otherwise the goroutine
// lets go of the isolate's lock and of its thread while it waits: waking a
// locked goroutine means waking that very thread, which costs far more
// than resuming on whichever thread is free; the lock is taken again on
// the resuming thread, and the ArrayBuffer budget, charged per thread, is
// bound again.
func (r *run) waitCompletion() error {
	if d := r.direct; d != nil {
		r.direct = nil
		if r.inflight == 1 { // the only call in flight: make or wait for it here
			var reply HostReply
			if d.held {
				reply = r.unlocked(d.wait)
			} else {
				reply = d.wait()
			}
			r.inflight--
			envelope, fatal := r.envelope(d.name, reply)
			return r.settle(completion{resolver: d.resolver, promise: d.promise, envelope: envelope, fatal: fatal})
		}
		r.inflight--
		r.startCall(d.name, d.resolver, d.promise, d.wait)
	}
	var c completion
	done := false
	r.unlocked(func() HostReply {
		select {
		case c = <-r.completions:
			done = true
		case <-r.ctx.Done():
		}
		return HostReply{}
	})
	if !done {
		return r.stopError()
	}
	r.inflight--
	return r.settle(c)
}

// unlocked calls f with the isolate's lock and the goroutine's thread let
// go: f may wait, and a goroutine waiting unlocked resumes on whichever
// thread is free (see waitCompletion). The lock is taken again, and the
// ArrayBuffer budget bound again, on the thread it resumes on.
func (r *run) unlocked(f func() HostReply) HostReply {
	r.lock.release()
	runtime.UnlockOSThread()
	defer func() {
		runtime.LockOSThread()
		r.w.budget.bind()
		r.lock = lockIsolate(r.w.iso)
	}()
	return f()
}

// settle resolves a finished call's promise, or ends the run on a fatal
// reply.
func (r *run) settle(c completion) error {
	if r.lock.l == nil {
		return Errorf(CodeInternal, "a host call's reply settled without the isolate's lock")
	}
	if c.fatal != nil {
		r.fatal = c.fatal
		return r.stopError()
	}
	// The handles are released once the promise settled, so a value the
	// script drops can be collected before the run ends.
	defer c.resolver.Release()
	defer c.promise.Release()
	value, err := v8.JSONParse(r.v8ctx, c.envelope)
	if err != nil {
		return Errorf(CodeInternal, "host result is not JSON: %v", err)
	}
	defer value.Release()
	c.resolver.Resolve(value)
	return nil
}

func (r *run) serializeResult(value *v8.Value) (json.RawMessage, error) {
	out, err := r.serialize.Call(v8.Undefined(r.w.iso), value)
	if err := r.check(err, "serializing the result"); err != nil {
		return nil, err
	}
	defer out.Release()
	if !out.IsString() {
		return nil, Errorf(CodeInternal, "serializing the result gave no string")
	}
	s := stringBytes(r.w.iso, out)
	if len(s) > r.job.Limits.MaxResultBytes {
		return nil, Errorf(CodeOutputLimit, "result of %d bytes exceeds the limit of %d bytes",
			len(s), r.job.Limits.MaxResultBytes)
	}
	return json.RawMessage(s), nil
}

// rejection describes a rejected main promise as an EVAL_ERROR.
func (r *run) rejection(reason *v8.Value) error {
	out, err := r.describe.Call(v8.Undefined(r.w.iso), reason)
	if err := r.check(err, "describing the error"); err != nil {
		return err
	}
	var d struct{ Name, Message, Stack, Code string }
	if err := json.Unmarshal([]byte(out.String()), &d); err != nil {
		return Errorf(CodeInternal, "describing the error: %v", err)
	}
	e := &Error{Code: CodeEval, Message: d.Message, Stack: d.Stack, HostCode: Code(d.Code)}
	if d.Name != "" {
		e.Message = d.Name + ": " + d.Message
	}
	e.Line, e.Column = r.locate(d.Stack)
	return e
}

// scriptError turns an exception thrown out of V8 into an EVAL_ERROR.
func (r *run) scriptError(err error, what string) error {
	var jsErr *v8.JSError
	if !errors.As(err, &jsErr) {
		return Errorf(CodeInternal, "%s: %v", what, err)
	}
	e := &Error{Code: CodeEval, Message: jsErr.Message, Stack: jsErr.StackTrace}
	e.Line, e.Column = r.locate(jsErr.Location + "\n" + jsErr.StackTrace)
	return e
}

// locate finds the first "origin:line:column" in text.
func (r *run) locate(text string) (line, column int) {
	re := regexp.MustCompile(regexp.QuoteMeta(r.job.Origin) + `:(\d+):(\d+)`)
	m := re.FindStringSubmatch(text)
	if m == nil {
		return 0, 0
	}
	line, _ = strconv.Atoi(m[1])
	column, _ = strconv.Atoi(m[2])
	return line, column
}

// callSync serves a sync host function on the worker thread.
func (r *run) callSync(info *v8.FunctionCallbackInfo) *v8.Value {
	name, args := callArgs(info)
	r.hostCalls++
	if r.ctx.Err() != nil || r.fatal != nil {
		r.w.iso.TerminateExecution()
		return nil
	}
	envelope, fatal := r.invoke(name, args)
	if fatal != nil {
		r.fatal = fatal
		r.w.iso.TerminateExecution()
		return nil
	}
	value, err := v8.JSONParse(info.Context(), envelope)
	if err != nil {
		if r.ctx.Err() == nil && !r.w.heap.hit() { // else parsing was cut short by the deadline or heap cap
			r.fatal = Errorf(CodeInternal, "host function %q returned invalid JSON: %v", name, err)
		}
		r.w.iso.TerminateExecution()
		return nil
	}
	return value
}

// callAsync starts an async host call and returns its promise.
func (r *run) callAsync(info *v8.FunctionCallbackInfo) *v8.Value {
	name, args := callArgs(info)
	r.hostCalls++
	resolver, err := v8.NewPromiseResolver(info.Context())
	if err != nil {
		r.fatal = Errorf(CodeInternal, "creating a promise: %v", err)
		r.w.iso.TerminateExecution()
		return nil
	}
	promise := resolver.GetPromise().Value
	call := HostCall{Name: name, Args: json.RawMessage(args)}
	dispatch := func() HostReply { return Dispatch(r.ctx, r.req.host, call) }
	if d := r.direct; d != nil && d.held {
		// A second call before the script waited: the held one starts
		// first, on a goroutine, as this one will.
		r.direct = nil
		r.inflight--
		r.startCall(d.name, d.resolver, d.promise, d.wait)
	}
	if r.inflight == 0 {
		if s, ok := r.req.host.(Starter); ok {
			if wait := s.Start(r.ctx, call); wait != nil {
				r.inflight++
				r.direct = &directCall{name: name, resolver: resolver, promise: promise,
					wait: func() HostReply { return DispatchWait(name, wait) }}
				return promise
			}
		} else {
			r.inflight++
			r.direct = &directCall{name: name, wait: dispatch, held: true, resolver: resolver, promise: promise}
			return promise
		}
	}
	r.startCall(name, resolver, promise, dispatch)
	return promise
}

// startCall makes an async call on a goroutine of the run's (spawn), which
// hands its outcome to the worker's thread.
func (r *run) startCall(name string, resolver *v8.PromiseResolver, promise *v8.Value, call func() HostReply) {
	r.inflight++
	r.spawn(func() {
		envelope, fatal := r.envelope(name, call())
		select {
		case r.completions <- completion{resolver: resolver, promise: promise, envelope: envelope, fatal: fatal}:
		case <-r.done:
		}
	})
}

// spawn runs an async host call on a goroutine of the run's: an idle one
// that served an earlier call takes it (its stack is already grown, and no
// goroutine is created), else a new one, which then stays for the next
// call until the run ends. Sequential awaited calls thus reuse one
// goroutine; concurrent calls get as many as they need.
func (r *run) spawn(call func()) {
	select {
	case r.callers <- call:
	default:
		go func() {
			for {
				call()
				select {
				case call = <-r.callers:
				case <-r.done:
					return
				}
			}
		}()
	}
}

// callArgs reads a host call's name and JSON arguments and releases their
// handles: a long run makes many calls.
func callArgs(info *v8.FunctionCallbackInfo) (name, args string) {
	a := info.Args()
	defer func() {
		for _, v := range a {
			v.Release()
		}
	}()
	if len(a) < 2 {
		return "", "[]"
	}
	return a[0].String(), a[1].String()
}

// invoke serves a call through [Dispatch] and wraps the reply in the
// envelope the bootstrap unwraps: {"ok":true,"value":…} or
// {"ok":false,"error":{name, code, message, data}}. A fatal reply ends the
// run instead.
func (r *run) invoke(name, args string) (envelope string, fatal *Error) {
	return r.envelope(name, Dispatch(r.ctx, r.req.host, HostCall{Name: name, Args: json.RawMessage(args)}))
}

// envelope wraps a reply as [run.invoke] does.
func (r *run) envelope(name string, reply HostReply) (envelope string, fatal *Error) {
	switch {
	case reply.Fatal != nil:
		return "", reply.Fatal
	case reply.Error != nil:
		b, err := json.Marshal(struct {
			OK    bool       `json:"ok"`
			Error *HostError `json:"error"`
		}{false, reply.Error})
		if err != nil { // Dispatch checked the data already
			return "", Errorf(CodeInternal, "host function %q: encoding its error: %v", name, err)
		}
		return string(b), nil
	case len(reply.Value) == 0:
		return `{"ok":true}`, nil
	}
	var b strings.Builder
	b.Grow(len(reply.Value) + 20)
	b.WriteString(`{"ok":true,"value":`)
	b.Write(reply.Value)
	b.WriteByte('}')
	return b.String(), nil
}
