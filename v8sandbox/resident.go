package v8sandbox

import (
	"context"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
	"time"

	v8 "rogchap.com/v8go"
)

// Resident is one isolate with one long-lived context for trusted code
// that keeps state from one call to the next: a compiler whose libraries
// are parsed once, for example. Unlike a [Pool], whose every run gets a
// fresh context, a Resident's setup scripts run once and its global
// functions are then called many times, each call with plain string data
// in and out.
//
// The code is trusted, its input is not: each call runs under a deadline
// (TerminateExecution) and the isolate under a heap cap (the same guard a
// pool's workers have). A call cut short by either leaves an isolate that
// is not worth reasoning about: it is disposed, and the next call builds a
// new one (its setup runs again, with V8's code cache of the first
// compilation). The isolate lives on one OS thread of its own. Safe for
// concurrent use: calls are served one at a time.
type Resident struct {
	opts  ResidentOptions
	calls chan residentCall
	quit  chan struct{}
	done  chan struct{}
	once  sync.Once
}

// ResidentScript is one setup script of a [Resident].
type ResidentScript struct {
	Origin string
	// Source returns the script's text; it is called each time an isolate
	// is built (a caller may keep the text compressed in between).
	Source func() (string, error)
}

// ResidentOptions configure a [Resident].
type ResidentOptions struct {
	// Setup runs in order in each new isolate's context.
	Setup []ResidentScript
	// HeapMB caps the isolate's heap; default DefaultHeapMB.
	HeapMB int
	// SetupTimeout bounds building an isolate and running Setup; default
	// DefaultTimeout.
	SetupTimeout time.Duration
}

type residentCall struct {
	ctx     context.Context
	fn, arg string
	timeout time.Duration
	reply   chan residentReply
}

type residentReply struct {
	out string
	err error
}

// NewResident starts a resident isolate's thread; the isolate itself is
// built on the first call (or [Resident.Warm]).
func NewResident(opts ResidentOptions) *Resident {
	initV8()
	if opts.HeapMB <= 0 {
		opts.HeapMB = DefaultHeapMB
	}
	if opts.SetupTimeout <= 0 {
		opts.SetupTimeout = DefaultTimeout
	}
	r := &Resident{opts: opts, calls: make(chan residentCall), quit: make(chan struct{}), done: make(chan struct{})}
	go r.serve()
	return r
}

// Warm builds the isolate now, so that the first call finds it ready.
func (r *Resident) Warm(ctx context.Context) error {
	_, err := r.Call(ctx, "", "", 0)
	return err
}

// Call calls the global function fn of the resident context with arg and
// returns the string it returns (a returned promise is awaited). The call
// waits for the isolate while ctx allows; timeout (0: none beyond ctx)
// bounds the call itself, not the wait nor the building of an isolate. The
// error, when not nil, is an *Error: CodeTimeout or CodeCancelled when the
// call was cut short, CodeHeapLimit, CodeEval for an exception (its
// message), CodeInternal when the setup failed.
func (r *Resident) Call(ctx context.Context, fn, arg string, timeout time.Duration) (string, error) {
	if ctx.Err() != nil {
		return "", WaitError(ctx, "waiting for the resident isolate")
	}
	c := residentCall{ctx: ctx, fn: fn, arg: arg, timeout: timeout, reply: make(chan residentReply, 1)}
	select {
	case r.calls <- c:
	case <-ctx.Done():
		return "", WaitError(ctx, "waiting for the resident isolate")
	case <-r.quit:
		return "", Errorf(CodeInternal, "resident isolate is closed")
	}
	rep := <-c.reply
	return rep.out, rep.err
}

// Close disposes the isolate once the call in progress has returned.
func (r *Resident) Close() {
	r.once.Do(func() { close(r.quit) })
	<-r.done
}

// residentIsolate is the state the resident's thread owns.
type residentIsolate struct {
	iso    *v8.Isolate
	heap   heapGuard
	ctx    *v8.Context
	caches map[string]*v8.CompilerCachedData // origin → code cache, kept across isolates
}

func (r *Resident) serve() {
	runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
	defer close(r.done)
	s := &residentIsolate{caches: map[string]*v8.CompilerCachedData{}}
	defer s.dispose()
	for {
		select {
		case <-r.quit:
			return
		case c := <-r.calls:
			out, err := r.serveCall(s, c)
			c.reply <- residentReply{out, err}
		}
	}
}

func (r *Resident) serveCall(s *residentIsolate, c residentCall) (string, error) {
	if s.iso == nil {
		if err := r.build(s); err != nil {
			s.dispose()
			return "", err
		}
	}
	if c.fn == "" {
		return "", nil
	}
	ctx, cancel := c.ctx, context.CancelFunc(func() {})
	if c.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
	}
	defer cancel()
	if c.fn == residentHeapQuery {
		return strconv.FormatUint(s.iso.GetHeapStatistics().UsedHeapSize, 10), nil
	}
	out, stopped, err := s.guarded(ctx, c.timeout, func() (string, error) { return s.callGlobal(c.fn, c.arg) })
	if stopped {
		s.dispose()
	}
	return out, err
}

// residentHeapQuery is the call [Resident.HeapUsed] makes.
const residentHeapQuery = "\x00heap"

// build makes a fresh isolate and runs the setup scripts in its context.
func (r *Resident) build(s *residentIsolate) error {
	// From the process's startup snapshot when there is one, as every
	// sandbox isolate is: V8 shares one read-only heap between the
	// isolates of a process, and an isolate made from another blob (v8go's
	// built-in one) corrupts what the others read from it (single-character
	// strings came out wrong in sandbox runs once the checker was loaded).
	if snap := sharedSnapshot(slog.Default()); snap != nil {
		s.iso = snap.newIsolate()
	} else {
		s.iso = v8.NewIsolate()
	}
	s.heap = installHeapGuard(s.iso, r.opts.HeapMB)
	disallowAtomicsWait(s.iso)
	s.ctx = v8.NewContext(s.iso)
	ctx, cancel := context.WithTimeout(context.Background(), r.opts.SetupTimeout)
	defer cancel()
	for _, script := range r.opts.Setup {
		src, err := script.Source()
		if err != nil {
			return Errorf(CodeInternal, "resident setup %s: %v", script.Origin, err)
		}
		_, stopped, err := s.guarded(ctx, r.opts.SetupTimeout, func() (string, error) { return "", s.runCached(src, script.Origin) })
		if stopped || err != nil {
			return Errorf(CodeInternal, "resident setup %s: %v", script.Origin, err)
		}
	}
	return nil
}

// runCached compiles source with the code cache of an earlier compilation
// when there is one (and makes one otherwise), then runs it.
func (s *residentIsolate) runCached(source, origin string) error {
	opts := v8.CompileOptions{}
	cached := s.caches[origin]
	if cached != nil {
		opts.CachedData = cached
	}
	script, err := s.iso.CompileUnboundScript(source, origin, opts)
	if err != nil {
		return err
	}
	if cached == nil || cached.Rejected {
		s.caches[origin] = script.CreateCodeCache()
	}
	_, err = script.Run(s.ctx)
	return err
}

func (s *residentIsolate) callGlobal(fn, arg string) (string, error) {
	f, err := s.ctx.Global().Get(fn)
	if err != nil {
		return "", err
	}
	fun, err := f.AsFunction()
	if err != nil {
		return "", Errorf(CodeInternal, "resident function %s: %v", fn, err)
	}
	a, err := v8.NewValue(s.iso, arg)
	if err != nil {
		return "", Errorf(CodeInternal, "resident argument: %v", err)
	}
	v, err := fun.Call(v8.Undefined(s.iso), a)
	if err != nil {
		return "", err
	}
	return v.String(), nil
}

// guarded runs f (which calls into V8) under ctx's deadline and the heap
// guard. stopped reports that the call was cut short; err is then the
// reason.
func (s *residentIsolate) guarded(ctx context.Context, timeout time.Duration, f func() (string, error)) (out string, stopped bool, err error) {
	done := make(chan struct{})
	terminated := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(terminated)
		ticker := time.NewTicker(terminateEvery)
		defer ticker.Stop()
		for {
			s.iso.TerminateExecution()
			select {
			case <-done:
				return
			case <-ticker.C:
			}
		}
	})
	stopWatch := s.heap.watch()
	lock := lockIsolate(s.iso)
	out, err = f()
	lock.release()
	stopWatch()
	close(done)
	if !stop() {
		<-terminated
	}
	switch {
	case s.heap.hit() || s.heap.checkNow():
		return "", true, Errorf(CodeHeapLimit, "resident isolate: heap limit exceeded")
	case ctx.Err() != nil:
		return "", true, StopReason(ctx, true, timeout)
	case err != nil:
		return "", false, Errorf(CodeEval, "%v", err)
	}
	return out, false, nil
}

func (s *residentIsolate) dispose() {
	if s.iso == nil {
		return
	}
	if s.ctx != nil {
		s.ctx.Close()
	}
	s.iso.Dispose()
	s.heap.free()
	s.iso, s.ctx, s.heap = nil, nil, heapGuard{}
}

// HeapUsed reports the resident isolate's used heap in bytes (0 when it
// has none yet); it waits for the call in progress.
func (r *Resident) HeapUsed(ctx context.Context) (int64, error) {
	out, err := r.Call(ctx, residentHeapQuery, "", 0)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(out, 10, 64)
	if err != nil {
		return 0, Errorf(CodeInternal, "resident heap: %v", err)
	}
	return n, nil
}
