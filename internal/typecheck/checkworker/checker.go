package checkworker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isogate/isogate/internal/fairshare"
	"github.com/isogate/isogate/internal/typecheck"
	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/procpool"
)

// checkerGrace is how long past a check's deadline the parent waits for
// the worker's answer before it kills the worker: the worker ends a check
// past its budget itself (TerminateExecution in its isolate), so a kill is
// for a worker that stopped answering, not for a slow check.
const checkerGrace = 5 * time.Second

// CheckerOptions configure a [Checker].
type CheckerOptions struct {
	// Command starts the worker; default as procpool.Options.Command.
	Command []string
	// Confinement is how hard the worker is confined, as for a procpool.Pool's.
	Confinement procpool.ConfinementMode
	// Timeout bounds one check, waiting for the worker included;
	// typecheck.DefaultTimeout when 0. Callers bound theirs with the
	// context they pass.
	Timeout time.Duration
	// Logger receives the worker's lifecycle events and stderr; default
	// slog.Default().
	Logger *slog.Logger
	// CacheDir keeps V8's code cache of the compiler, as
	// typecheck.Options.CacheDir: this process reads and writes the file
	// (the worker may not), sends it in the worker's init frame and keeps
	// the one a worker made before it parsed any program; "" keeps none.
	CacheDir string
}

// Checker type-checks programs (internal/typecheck) in a confined worker
// process of its own: the program text the TypeScript compiler parses is
// the attacker's, so in process isolation the compiler lives behind the
// same walls as the programs. It is a procpool.Pool of one checker worker (the
// same binary's sandbox-worker, told so in its init frame) serving
// typecheck.Lanes checks at a time, shared fairly between principals here
// and in the worker: supervised, restarted when it dies. A check past its
// budget is ended by the worker itself (typecheck.ErrTimeout), the worker
// going on; one it does not answer within checkerGrace more is killed with
// its worker. A check the worker does not answer (death, deadline) fails
// with typecheck.ErrUnchecked and why, as in process.
//
// A catalogue version's declarations are sent to the worker once (by ID),
// not with every check; a restarted worker asks for them again.
//
// The worker is started on [Checker.Warm], [Checker.WarmInBackground] or
// the first check; a start that failed is tried again, with backoff, when
// something next asks for the checker. Checker implements
// typecheck.Service and is safe for concurrent use.
type Checker struct {
	opts    procpool.Options
	timeout time.Duration
	share   *fairshare.Slots // the worker's lanes, shared between principals

	startMu   sync.Mutex
	launched  bool           // something asked for the worker (Status: not_started until then)
	starting  chan struct{}  // closed when the start in progress ends; nil when none is
	pool      *procpool.Pool // once a start succeeded
	err       error          // why the last start failed; nil once one succeeded
	failures  int            // starts failed in a row
	failedAt  time.Time
	closed    bool
	retryBase time.Duration // typecheck.RetryBase (the tests' shorter)

	mu   sync.Mutex
	held []string // declaration IDs the worker was sent, oldest first

	declsSent atomic.Uint64 // checks that carried declarations' text

	codeCache *typecheck.CodeCacheFile

	// heapUsed is the worker's compiler heap after its last check, by the
	// worker process that answered (heapSpawn: the pool's spawn count
	// then, so that a replacement's is not taken for it).
	heapMu    sync.Mutex
	heapUsed  int64
	heapSpawn uint64
}

// CodeCacheStats reports what was done with the compiler's code cache
// file for the checker's workers.
func (c *Checker) CodeCacheStats() typecheck.CodeCacheStats { return c.codeCache.Stats() }

var _ typecheck.Service = (*Checker)(nil)

// NewChecker returns a checker whose worker starts when first needed.
func NewChecker(opts CheckerOptions) *Checker {
	if opts.Timeout <= 0 {
		opts.Timeout = typecheck.DefaultTimeout
	}
	cache := typecheck.NewCodeCacheFile(opts.CacheDir)
	po := procpool.Options{Workers: 1, SlotsPerWorker: typecheck.Lanes, Command: opts.Command, Confinement: opts.Confinement,
		Logger: opts.Logger, Grace: checkerGrace, Checker: true}
	if opts.CacheDir != "" { // else the workers send no cache
		po.CheckerCache = cache
	}
	return &Checker{
		opts:      po,
		share:     typecheck.NewLaneShare(),
		codeCache: cache,
		timeout:   opts.Timeout,
		retryBase: typecheck.RetryBase,
	}
}

// launch starts the worker in the background, unless it is started or
// starting, or its last start failed less than the backoff ago.
func (c *Checker) launch() {
	c.startMu.Lock()
	defer c.startMu.Unlock()
	c.launched = true
	if c.closed || c.pool != nil || c.starting != nil || (c.err != nil && time.Since(c.failedAt) < typecheck.RetryDelay(c.retryBase, c.failures)) {
		return
	}
	done := make(chan struct{})
	c.starting = done
	go func() {
		p, err := procpool.New(c.opts)
		c.startMu.Lock()
		closed := c.closed
		switch {
		case err != nil:
			c.err = fmt.Errorf("the checker worker could not start: %w", err)
			c.failures++
			c.failedAt = time.Now()
		case !closed:
			c.pool, c.err, c.failures = p, nil, 0
		}
		c.starting = nil
		close(done)
		c.startMu.Unlock()
		if err == nil && closed {
			p.Close()
		}
	}()
}

// WarmInBackground starts the worker without waiting (once, or again after
// a failed start once its backoff has passed).
func (c *Checker) WarmInBackground() { c.launch() }

// Warm starts the worker if need be and waits until one is serving, with
// the compiler loaded (after a death, until the replacement is).
func (c *Checker) Warm(ctx context.Context) error {
	p, err := c.startedPool(ctx)
	if err != nil {
		return err
	}
	if !p.AwaitServing(ctx) {
		return fmt.Errorf("waiting for the checker worker: %w", ctx.Err())
	}
	return nil
}

// Ready reports whether a worker is serving (a checker whose worker could
// not start is not: Status says why).
func (c *Checker) Ready() bool {
	p := c.poolIfStarted()
	return p != nil && p.Serving()
}

// Check checks program against decls in the worker, within the checker's
// timeout and ctx (waiting for the worker included), as the principal "".
// The error, when not nil, is a *typecheck.CheckError.
func (c *Checker) Check(ctx context.Context, decls typecheck.Declarations, program string, module bool) (*typecheck.Report, error) {
	return c.Submit(ctx, typecheck.Request{Decls: decls, Program: program, Module: module})
}

// Submit checks a program in the worker for a principal: it waits, while
// ctx allows, for the worker to start (or be replaced) and for a lane of
// the principal's share, then the worker checks it within req.Budget,
// ending it itself past that. The error, when not nil, is a
// *typecheck.CheckError.
func (c *Checker) Submit(ctx context.Context, req typecheck.Request) (*typecheck.Report, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	unavailable := func(format string, args ...any) error {
		return typecheck.Unchecked(typecheck.ErrUnavailable, fmt.Errorf(format, args...))
	}
	release, err := c.share.Acquire(ctx, req.Principal)
	if err != nil {
		return nil, unavailable("waiting for a lane of the checker: %w", err)
	}
	defer release()
	p, err := c.startedPool(ctx)
	if err != nil {
		return nil, unavailable("%w", err)
	}
	budget := req.Budget
	if budget <= 0 || budget > c.timeout {
		budget = c.timeout
	}
	decls := req.Decls
	withText := !c.holds(decls.ID)
	for {
		cr := checkRequest{Decls: decls.ID, Program: req.Program, Module: req.Module, Principal: req.Principal, Budget: budget}
		if withText {
			cr.Text, cr.WithText = decls.Text, true
			c.declsSent.Add(1)
		}
		src, err := json.Marshal(cr)
		if err != nil {
			return nil, unavailable("%w", err)
		}
		deadline, _ := ctx.Deadline()
		left := time.Until(deadline)
		if left <= 0 {
			return nil, unavailable("no time left for the check: %w", context.DeadlineExceeded)
		}
		// The run's timeout bounds the waits in the worker too (a lane, its
		// isolate's build); the check itself is bounded by its budget.
		res, err := p.Run(ctx, v8sandbox.Job{Source: string(src), Limits: v8sandbox.Limits{Timeout: left}}, nil)
		if err != nil {
			kind := typecheck.ErrUnavailable
			var se *v8sandbox.Error
			if errors.As(err, &se) && se.Code == v8sandbox.CodeHeapLimit {
				kind = typecheck.ErrTooComplex // the worker died of memory exhaustion
			}
			return nil, typecheck.Unchecked(kind, fmt.Errorf("the checker worker: %w", err))
		}
		var rep checkReply
		if err := json.Unmarshal(res.Value, &rep); err != nil {
			return nil, unavailable("the checker worker's reply: %w", err)
		}
		if rep.NeedDecls {
			if withText {
				return nil, unavailable("the checker worker lost the declarations")
			}
			withText = true // a worker started since they were sent
			continue
		}
		if withText {
			c.hold(decls.ID)
		}
		if rep.HeapUsed > 0 {
			c.heapMu.Lock()
			c.heapUsed, c.heapSpawn = rep.HeapUsed, p.Spawned()
			c.heapMu.Unlock()
		}
		if rep.Error != "" {
			return nil, typecheck.Unchecked(kindOf(rep.Kind), errors.New(rep.Error))
		}
		if rep.Report == nil {
			return nil, unavailable("the checker worker sent no report")
		}
		rep.Report.Duration = time.Since(start)
		return rep.Report, nil
	}
}

// Confinement is the confinement the checker worker obtained (zero until
// it has started).
func (c *Checker) Confinement() procpool.Confinement {
	if p := c.poolIfStarted(); p != nil {
		return p.Confinement()
	}
	return procpool.Confinement{}
}

// Stats describes the checker's worker process (zero until it has
// started).
func (c *Checker) Stats() procpool.Stats {
	if p := c.poolIfStarted(); p != nil {
		return p.Stats()
	}
	return procpool.Stats{}
}

// Status reports the checker's state: its worker process (PID, RSS,
// uptime), the restarts, the compiler's heap after the last check, the
// code cache file. It never starts the worker nor waits for it.
func (c *Checker) Status() typecheck.Status {
	st := typecheck.Status{Where: typecheck.WhereWorker, State: typecheck.StateNotStarted, CodeCache: c.codeCache.Status()}
	c.startMu.Lock()
	launched, p, err, starting := c.launched, c.pool, c.err, c.starting != nil
	c.startMu.Unlock()
	switch {
	case !launched:
		return st
	case err != nil: // a retry may be in progress: failed until one succeeds
		st.State, st.Error = typecheck.StateFailed, err.Error()
		return st
	case starting:
		st.State = typecheck.StateStarting
		return st
	case p == nil: // closed
		return st
	}
	ps := p.Stats()
	if ps.Spawned > 1 {
		st.Restarts = ps.Spawned - 1
	}
	for _, w := range ps.Workers {
		if w.Slot >= 0 {
			st.Worker = &typecheck.WorkerStatus{PID: w.PID, RSSBytes: w.RSSBytes, UptimeSeconds: w.Uptime.Seconds()}
		}
	}
	c.heapMu.Lock()
	if c.heapSpawn == ps.Spawned {
		st.HeapUsedBytes = c.heapUsed
	}
	c.heapMu.Unlock()
	st.State = typecheck.StateReady
	if !p.Serving() {
		st.State = typecheck.StateRestarting
		if err := p.LastFailure(); err != nil {
			st.Error = err.Error()
		}
	}
	return st
}

// poolIfStarted is the worker's pool once its start has ended (nil
// before, or when it failed), without starting or waiting for it.
func (c *Checker) poolIfStarted() *procpool.Pool {
	c.startMu.Lock()
	defer c.startMu.Unlock()
	return c.pool
}

// Close stops the worker (after its check in progress), waiting for a
// start in progress first; no start begins after it.
func (c *Checker) Close() {
	c.startMu.Lock()
	c.closed = true
	starting := c.starting
	c.startMu.Unlock()
	if starting != nil {
		<-starting // a pool it made is closed by the start itself
	}
	c.startMu.Lock()
	p := c.pool
	c.pool = nil
	c.startMu.Unlock()
	if p != nil {
		p.Close()
	}
}

// startedPool starts the worker if need be and waits, while ctx allows,
// until its pool exists. It tries at most one start: after a failed start
// (the one it waited for, or an earlier one whose retry is not due yet) it
// returns why.
func (c *Checker) startedPool(ctx context.Context) (*procpool.Pool, error) {
	for waited := false; ; waited = true {
		if !waited {
			c.launch()
		}
		c.startMu.Lock()
		p, err, starting, closed := c.pool, c.err, c.starting, c.closed
		c.startMu.Unlock()
		switch {
		case p != nil:
			return p, nil
		case closed:
			return nil, fmt.Errorf("the checker is closed")
		case starting == nil:
			return nil, err
		}
		select {
		case <-starting:
		case <-ctx.Done():
			return nil, fmt.Errorf("the checker worker is starting: %w", ctx.Err())
		}
	}
}

// holds reports whether the worker was sent the declarations of id.
func (c *Checker) holds(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.held, id)
}

// hold records that the worker was sent the declarations of id; it keeps
// as many IDs as the worker keeps texts.
func (c *Checker) hold(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if slices.Contains(c.held, id) {
		return
	}
	c.held = append(c.held, id)
	if len(c.held) > maxHeldDecls {
		c.held = c.held[1:]
	}
}
