package v8sandbox

import (
	"context"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Default limits applied to zero fields of a job's [Limits].
const (
	DefaultWorkers        = 8
	DefaultRecycleAfter   = 500
	DefaultTimeout        = 30 * time.Second
	DefaultHeapMB         = 50
	DefaultArrayBufferMB  = 64
	DefaultMaxResultBytes = 16 << 20
)

// Options configure a [Pool].
type Options struct {
	// Workers is the number of pinned workers (isolates); default 8.
	Workers int
	// RecycleAfter is how many runs an isolate serves before it is
	// replaced; default 500.
	RecycleAfter int
	// Defaults fill the zero fields of each job's limits.
	Defaults Limits
	// Logger receives worker lifecycle events; default slog.Default().
	Logger *slog.Logger
}

// Pool runs jobs on a fixed set of V8 workers. It is safe for concurrent
// use.
//
// A run executes on the caller's own goroutine, locked to its OS thread for
// the run: handing a job to a thread parked on a channel (and the result
// back) costs two wake-ups of a locked thread, which dominated a short run.
// Between runs a worker is tidied up and its next context prepared on a
// goroutine of its own, before it is offered to the next caller.
type Pool struct {
	opts   Options
	logger *slog.Logger
	idle   *idleWorkers // workers ready for a run (idle.go)
	busy   atomic.Int32 // runs in progress
	quit   chan struct{}
	closed sync.Once
}

type request struct {
	ctx  context.Context
	job  Job
	host Host
}

type response struct {
	result Result
	err    error
}

// NewPool starts a pool of pinned workers. Isolates are created lazily, on
// each worker's first job.
func NewPool(opts Options) *Pool {
	initV8()
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.RecycleAfter <= 0 {
		opts.RecycleAfter = DefaultRecycleAfter
	}
	opts.Defaults = opts.Defaults.WithDefaults(Limits{
		Timeout:        DefaultTimeout,
		HeapMB:         DefaultHeapMB,
		ArrayBufferMB:  DefaultArrayBufferMB,
		MaxResultBytes: DefaultMaxResultBytes,
	})
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	p := &Pool{
		opts:   opts,
		logger: logger.With("component", "v8sandbox"),
		idle:   newIdleWorkers(opts.Workers),
		quit:   make(chan struct{}),
	}
	for i := range opts.Workers {
		p.idle.put(newWorker(p, i))
	}
	return p
}

// Workers reports the number of workers in the pool.
func (p *Pool) Workers() int { return p.opts.Workers }

// Busy reports the number of workers running a job.
func (p *Pool) Busy() int { return int(p.busy.Load()) }

// Run runs job on a free worker, waiting for one while ctx allows. Host
// function calls are served by host (nil when the job declares none).
//
// The error, when not nil, is always an *Error.
func (p *Pool) Run(ctx context.Context, job Job, host Host) (Result, error) {
	var (
		res Result
		err error
	)
	p.RunThen(ctx, job, host, func(r Result, e error) { res, err = r, e })
	return res, err
}

// RunThen is [Pool.Run] handing the outcome to deliver, on the caller's
// goroutine, before the worker is tidied up for its next run. A caller that
// forwards the outcome (a worker process writing it to its parent) sends it
// before the between-runs preparation competes for the CPU with whoever
// receives it. deliver must not wait for another run of the pool: that run
// may be waiting for this worker (idle.go).
func (p *Pool) RunThen(ctx context.Context, job Job, host Host, deliver func(Result, error)) {
	o := p.run(ctx, job, host)
	if o.w != nil {
		p.idle.finish(o.w) // before the outcome goes out: the next run may come at once
	}
	deliver(o.result, o.err)
	if o.w != nil {
		p.busy.Add(-1) // the worker counts as busy until its outcome is delivered
		go o.w.tidy()
	}
}

// outcome is a run's response and the worker that served it (nil when
// none did), to be tidied once the response is delivered.
type outcome struct {
	response
	w *worker
}

func (p *Pool) run(ctx context.Context, job Job, host Host) outcome {
	job.Limits = job.Limits.WithDefaults(p.opts.Defaults)
	if job.Origin == "" {
		job.Origin = "main.js"
	}
	select {
	case <-p.quit:
		return outcome{response: response{err: Errorf(CodeInternal, "sandbox pool is closed")}}
	default:
	}
	w, err := p.takeIdle(ctx)
	if err != nil {
		return outcome{response: response{err: err}}
	}
	if w.iso == nil {
		if warm := p.idle.claim(); warm != nil {
			// A warm worker is finishing its last run: wait for it
			// rather than create an isolate here (idle.go). Its put
			// comes without any run of its own, so the wait is short.
			p.idle.put(w)
			w = nil
			select {
			case <-warm:
			case <-p.quit:
			}
			if w, err = p.takeIdle(ctx); err != nil {
				return outcome{response: response{err: err}}
			}
		}
	}
	p.busy.Add(1)
	req := &request{ctx: ctx, job: job, host: host}
	resp := serveOffMainThread(func() response { return w.serve(req) })
	return outcome{response: resp, w: w}
}

// takeIdle waits for an idle worker thread, until ctx ends or the pool
// closes.
func (p *Pool) takeIdle(ctx context.Context) (*worker, error) {
	select {
	case <-p.idle.ready:
		return p.idle.pop(), nil
	case <-ctx.Done():
		return nil, WaitError(ctx, "waiting for a free sandbox worker")
	case <-p.quit:
		return nil, Errorf(CodeInternal, "sandbox pool is closed")
	}
}

// Close waits for the runs in progress, then disposes every isolate. Runs
// submitted afterwards fail with CodeInternal.
func (p *Pool) Close() {
	p.closed.Do(func() {
		close(p.quit)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for range p.opts.Workers {
			w := p.idle.take()
			w.budget.bind()
			w.disposeIsolate()
		}
	})
}

// Warm makes the isolate of one worker and prepares its context for a job
// with the pool's default limits and no host functions or prelude, so that
// the pool's first run starts as warm as its later ones (a sandbox worker
// process does this before it reports ready). It waits for a free worker.
func (p *Pool) Warm() {
	var w *worker
	select {
	case <-p.idle.ready:
		w = p.idle.pop()
	case <-p.quit:
		return
	}
	defer p.idle.put(w)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w.budget.bind()
	if w.last == nil {
		w.last = &Job{Limits: p.opts.Defaults}
	}
	w.prewarm()
}

// WithDefaults returns l with its zero fields taken from d.
func (l Limits) WithDefaults(d Limits) Limits {
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.HeapMB <= 0 {
		l.HeapMB = d.HeapMB
	}
	if l.ArrayBufferMB <= 0 {
		l.ArrayBufferMB = d.ArrayBufferMB
	}
	if l.MaxResultBytes <= 0 {
		l.MaxResultBytes = d.MaxResultBytes
	}
	return l
}

var _ Runner = (*Pool)(nil)
