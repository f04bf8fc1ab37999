package v8sandbox

import (
	"context"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
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
// new one (its setup runs again, with V8's code cache made after the
// first setup). The isolate lives on one OS thread of its own. Safe for
// concurrent use: calls are served one at a time.
type Resident struct {
	opts  ResidentOptions
	calls chan residentCall
	quit  chan struct{}
	done  chan struct{}
	once  sync.Once

	// heapUsed is the isolate's used heap after its last call or build;
	// builds counts the isolates built (ResidentStats).
	heapUsed atomic.Int64
	builds   atomic.Uint64
}

// ResidentStats describe a [Resident] for operators.
type ResidentStats struct {
	// HeapUsedBytes is the isolate's used heap after its last call (or
	// its build); 0 before the first.
	HeapUsedBytes int64
	// Builds counts the isolates built: the first, then one after each
	// call cut short (deadline, heap cap).
	Builds uint64
}

// Stats reports the resident's heap and builds without waiting for a call
// in progress.
func (r *Resident) Stats() ResidentStats {
	return ResidentStats{HeapUsedBytes: r.heapUsed.Load(), Builds: r.builds.Load()}
}

// ResidentScript is one setup script of a [Resident].
type ResidentScript struct {
	Origin string
	// Source returns the script's text; it is called each time an isolate
	// is built (a caller may keep the text compressed in between).
	Source func() (string, error)
	// CodeCache, when set, keeps V8's code cache of the script beyond the
	// process, so that a new process's first isolate compiles the script
	// from it instead of from source.
	CodeCache ResidentCodeCache
}

// ResidentCodeCache keeps V8's code cache of one setup script of a
// [Resident] beyond the process (on disk, say). V8 checks what it is
// given only for its version, its flags and the script's length (the
// checksum of the data is not verified in release builds: bytes altered
// after V8 made them can crash the process), so Load must return only
// bytes a Store of this program received, intact.
type ResidentCodeCache interface {
	// Load returns the data of an earlier Store, nil when there is none;
	// it is called when the Resident's first isolate is built.
	Load() []byte
	// Loaded reports whether V8 took the data Load returned (false: V8
	// rejected it, another V8 version or flags, another script).
	Loaded(accepted bool)
	// Store receives a code cache made once the whole setup has run (so it
	// holds the functions the setup compiled, not only the eager ones),
	// when Load returned nothing or V8 rejected it.
	Store(data []byte)
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
	caches map[string]*v8.CompilerCachedData // origin → code cache V8 took or made, kept across isolates
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
		r.builds.Add(1)
		if err := r.build(s); err != nil {
			s.dispose()
			r.heapUsed.Store(0)
			return "", err
		}
		r.heapUsed.Store(int64(s.iso.GetHeapStatistics().UsedHeapSize))
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
		r.heapUsed.Store(0)
	} else {
		r.heapUsed.Store(int64(s.iso.GetHeapStatistics().UsedHeapSize))
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
	uncached := map[string]*v8.UnboundScript{} // origin → a script compiled without a code cache
	for _, script := range r.opts.Setup {
		src, err := script.Source()
		if err != nil {
			return Errorf(CodeInternal, "resident setup %s: %v", script.Origin, err)
		}
		_, stopped, err := s.guarded(ctx, r.opts.SetupTimeout, func() (string, error) {
			us, cached, err := s.compile(src, script)
			if err != nil {
				return "", err
			}
			if !cached {
				uncached[script.Origin] = us
			}
			_, err = us.Run(s.ctx)
			return "", err
		})
		if stopped || err != nil {
			return Errorf(CodeInternal, "resident setup %s: %v", script.Origin, err)
		}
	}
	// The code caches are made now that the setup has run: V8 then puts
	// in them the functions the setup compiled lazily, most of what a
	// check runs, where a cache made at compilation holds the eager ones.
	for _, script := range r.opts.Setup {
		us := uncached[script.Origin]
		if us == nil {
			continue
		}
		var cache *v8.CompilerCachedData
		s.guarded(ctx, r.opts.SetupTimeout, func() (string, error) { //nolint:errcheck // nothing runs: it cannot fail
			cache = us.CreateCodeCache()
			return "", nil
		})
		if cache == nil || len(cache.Bytes) == 0 {
			continue
		}
		s.caches[script.Origin] = cache
		if script.CodeCache != nil {
			script.CodeCache.Store(cache.Bytes)
		}
	}
	return nil
}

// compile compiles a setup script with the code cache of an earlier
// isolate of this process, else with the one script.CodeCache keeps (the
// process's first isolate); cached reports that V8 took a cache.
func (s *residentIsolate) compile(source string, script ResidentScript) (us *v8.UnboundScript, cached bool, err error) {
	opts := v8.CompileOptions{}
	fromStore := false
	if c := s.caches[script.Origin]; c != nil {
		opts.CachedData = c
	} else if script.CodeCache != nil {
		if data := script.CodeCache.Load(); len(data) > 0 {
			opts.CachedData = &v8.CompilerCachedData{Bytes: data}
			fromStore = true
		}
	}
	us, err = s.iso.CompileUnboundScript(source, script.Origin, opts)
	if err != nil {
		return nil, false, err
	}
	cached = opts.CachedData != nil && !opts.CachedData.Rejected
	if fromStore {
		script.CodeCache.Loaded(cached)
		if cached {
			s.caches[script.Origin] = opts.CachedData
		}
	}
	return us, cached, nil
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
