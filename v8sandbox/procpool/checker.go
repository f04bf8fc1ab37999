package procpool

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isogate/isogate/internal/typecheck"
	"github.com/isogate/isogate/v8sandbox"
)

// checkerStartTimeout bounds a checker worker's start, which includes
// loading the TypeScript compiler and parsing its libraries: ~1.3 s of CPU
// (V8 compiles the compiler with no code cache in a fresh process), many
// seconds of wall time on a loaded machine.
const checkerStartTimeout = time.Minute

// CheckerOptions configure a [Checker].
type CheckerOptions struct {
	// Command starts the worker; default as [Options].Command.
	Command []string
	// Confinement is how hard the worker is confined, as for a [Pool]'s.
	Confinement ConfinementMode
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
// same walls as the programs. It is a [Pool] of one checker worker (the
// same binary's sandbox-worker, told so in its init frame) serving one
// check at a time: supervised, restarted when it dies, killed when a check
// overruns its deadline by the pool's grace. A check the worker does not
// answer (death, deadline) fails with typecheck.ErrUnchecked, and the
// program runs unchecked, as past the deadline in process.
//
// A catalogue version's declarations are sent to the worker once (by ID),
// not with every check; a restarted worker asks for them again.
//
// The worker is started on [Checker.Warm], [Checker.WarmInBackground] or
// the first check; a start that failed is tried again, with backoff, when
// something next asks for the checker. Checker implements
// typecheck.Service and is safe for concurrent use.
type Checker struct {
	opts    Options
	timeout time.Duration

	startMu   sync.Mutex
	launched  bool          // something asked for the worker (Status: not_started until then)
	starting  chan struct{} // closed when the start in progress ends; nil when none is
	pool      *Pool         // once a start succeeded
	err       error         // why the last start failed; nil once one succeeded
	failures  int           // starts failed in a row
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
	var kept *typecheck.CodeCacheFile // nil: the workers send no cache
	if opts.CacheDir != "" {
		kept = cache
	}
	return &Checker{
		opts: Options{Workers: 1, SlotsPerWorker: 1, Command: opts.Command, Confinement: opts.Confinement,
			Logger: opts.Logger, checker: true, checkerCache: kept},
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
		p, err := New(c.opts)
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
	if !awaitServing(ctx, p) {
		return fmt.Errorf("waiting for the checker worker: %w", ctx.Err())
	}
	return nil
}

// Ready reports whether a worker is serving (a checker whose worker could
// not start is not: Status says why).
func (c *Checker) Ready() bool {
	p := c.poolIfStarted()
	return p != nil && p.serving()
}

// Check checks program against decls in the worker, within the checker's
// timeout and ctx (waiting for the worker included). The error, when not
// nil, wraps typecheck.ErrUnchecked.
func (c *Checker) Check(ctx context.Context, decls typecheck.Declarations, program string, module bool) (*typecheck.Report, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	p, err := c.startedPool(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", typecheck.ErrUnchecked, err)
	}
	withText := !c.holds(decls.ID)
	for {
		req := checkRequest{Decls: decls.ID, Program: program, Module: module}
		if withText {
			req.Text, req.WithText = decls.Text, true
			c.declsSent.Add(1)
		}
		src, err := json.Marshal(req)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", typecheck.ErrUnchecked, err)
		}
		deadline, _ := ctx.Deadline()
		left := time.Until(deadline)
		if left <= 0 {
			return nil, fmt.Errorf("%w: no time left for the check: %v", typecheck.ErrUnchecked, context.DeadlineExceeded)
		}
		res, err := p.Run(ctx, v8sandbox.Job{Source: string(src), Limits: v8sandbox.Limits{Timeout: left}}, nil)
		if err != nil {
			return nil, fmt.Errorf("%w: the checker worker: %v", typecheck.ErrUnchecked, err)
		}
		var rep checkReply
		if err := json.Unmarshal(res.Value, &rep); err != nil {
			return nil, fmt.Errorf("%w: the checker worker's reply: %v", typecheck.ErrUnchecked, err)
		}
		if rep.NeedDecls {
			if withText {
				return nil, fmt.Errorf("%w: the checker worker lost the declarations", typecheck.ErrUnchecked)
			}
			withText = true // a worker started since they were sent
			continue
		}
		if withText {
			c.hold(decls.ID)
		}
		if rep.HeapUsed > 0 {
			c.heapMu.Lock()
			c.heapUsed, c.heapSpawn = rep.HeapUsed, p.spawned.Load()
			c.heapMu.Unlock()
		}
		if rep.Error != "" {
			return nil, fmt.Errorf("%w: %s", typecheck.ErrUnchecked, rep.Error)
		}
		if rep.Report == nil {
			return nil, fmt.Errorf("%w: the checker worker sent no report", typecheck.ErrUnchecked)
		}
		rep.Report.Duration = time.Since(start)
		return rep.Report, nil
	}
}

// Confinement is the confinement the checker worker obtained (zero until
// it has started).
func (c *Checker) Confinement() Confinement {
	if p := c.poolIfStarted(); p != nil {
		return p.Confinement()
	}
	return Confinement{}
}

// Stats describes the checker's worker process (zero until it has
// started).
func (c *Checker) Stats() Stats {
	if p := c.poolIfStarted(); p != nil {
		return p.Stats()
	}
	return Stats{}
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
	if !p.serving() {
		st.State = typecheck.StateRestarting
		if err := p.lastFailure(); err != nil {
			st.Error = err.Error()
		}
	}
	return st
}

// lastFailure is why p's first slot last lost its process (a start that
// failed, a death), nil when it has not.
func (p *Pool) lastFailure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.slots {
		if s.lastErr != nil {
			return s.lastErr
		}
	}
	return nil
}

// poolIfStarted is the worker's pool once its start has ended (nil
// before, or when it failed), without starting or waiting for it.
func (c *Checker) poolIfStarted() *Pool {
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
func (c *Checker) startedPool(ctx context.Context) (*Pool, error) {
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

// serving reports whether one of p's slots has a live process taking runs
// (not one being killed, drained or stopped).
func (p *Pool) serving() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.slots {
		if pr := s.cur; pr != nil && !pr.dead && !pr.draining && !pr.stopping && pr.reason == killNone {
			return true
		}
	}
	return false
}

// awaitServing waits, while ctx allows, until p is serving.
func awaitServing(ctx context.Context, p *Pool) bool {
	for {
		p.mu.Lock()
		changed := p.changed
		p.mu.Unlock()
		if p.serving() {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}
