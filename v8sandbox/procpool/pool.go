package procpool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isogate/isogate/v8sandbox"
)

// Defaults of [Options].
const (
	DefaultProcesses      = 2
	DefaultSlotsPerWorker = 4
	DefaultGrace          = 500 * time.Millisecond
	DefaultMaxRSSMB       = 1024
)

// workerStartTimeout bounds a worker's start: exec, V8 init and handshake.
const workerStartTimeout = 20 * time.Second

// monitorEvery is how often the workers' RSS is sampled.
const monitorEvery = 100 * time.Millisecond

// Backoff of a worker slot whose processes keep failing to start or dying
// on their own while idle.
const (
	backoffBase = 100 * time.Millisecond
	backoffMax  = 5 * time.Second
	// failFastAfter consecutive failures of every slot make Run fail at
	// once instead of waiting for a worker that may never come.
	failFastAfter = 3
	// healthyUptime resets a slot's failure count when a process lived
	// that long (or completed a run).
	healthyUptime = 10 * time.Second
)

// Options configure a [Pool].
type Options struct {
	// Workers is the number of sandbox worker processes; default
	// DefaultProcesses.
	Workers int
	// SlotsPerWorker is how many runs one process serves at once (the
	// number of V8 threads it hosts); default 4.
	SlotsPerWorker int
	// Command starts a worker; default this very binary (/proc/self/exe on
	// Linux) with the argument "sandbox-worker" (in a test binary, only
	// after [RunWorkerIfRequested]).
	Command []string
	// Defaults fill the zero fields of each job's limits; zero fields here
	// take the v8sandbox defaults.
	Defaults v8sandbox.Limits
	// Grace is how long the parent waits beyond a run's deadline, or after
	// sending cancel, before it kills the worker; default 500 ms.
	Grace time.Duration
	// MaxRSSMB recycles a worker whose resident memory exceeds it: it gets
	// no new runs, ends those it has, then exits and is replaced; default
	// 1024, negative disables.
	MaxRSSMB int
	// KillRSSMB kills a worker, even mid-run, whose resident memory exceeds
	// it (its runs end with HEAP_LIMIT): the last resort against builtins
	// that allocate gigabytes while ignoring termination; default twice
	// MaxRSSMB (at least 2048), negative disables.
	KillRSSMB int
	// RecycleAfter is how many runs an isolate inside a worker serves
	// before it is replaced; default the v8sandbox default.
	RecycleAfter int
	// Logger receives lifecycle events and the workers' stderr; default
	// slog.Default().
	Logger *slog.Logger
	// Confinement is how hard workers are confined: ConfinementBestEffort
	// (the default), ConfinementStrict or ConfinementOff.
	Confinement ConfinementMode
	// SpareWorkers is how many started, never-used processes the pool keeps
	// ready besides Workers once it has had to retire a worker for another
	// principal, so that a principal without a process takes one at once
	// instead of waiting for a start (spares.go); 0 (the default) keeps
	// none.
	SpareWorkers int
	// IdleWorkersMB is the memory, in MiB, that workers parked for their
	// principal may hold: a worker whose slot goes to another principal
	// while it has no run waits alive, bound to its principal, to take a
	// slot back at that principal's next run instead of a fresh start; the
	// least recently parked are ended beyond the budget (idle.go). 0 (the
	// default) parks none.
	IdleWorkersMB int
	// Checker makes every worker a checker worker: its runs are answered
	// by the [CheckServer] the binary registered ([RegisterChecker]), not
	// run as programs.
	Checker bool
	// CheckerCache keeps the code cache of the checker workers' server:
	// the parent sends it in the init frame and keeps the one a worker
	// made as it started (nil: none).
	CheckerCache v8sandbox.ResidentCodeCache
	// WorkerDir is where New looks for the dedicated worker binary
	// (WorkerBinary) when Command is empty; default the directory of the
	// executable (none in a test binary).
	WorkerDir string

	// layers overrides the layers a worker applies itself, noNamespaces
	// spawns it without namespaces (tests only).
	layers       *layerSet
	noNamespaces bool
	// startupKey, set for the dedicated worker binary, goes in every init
	// (workerbinary.go).
	startupKey []byte
	// startTimeout overrides workerStartTimeout (tests only).
	startTimeout time.Duration
	// beforeCgroup runs before a worker joins its pids cgroup (tests only).
	beforeCgroup func(*proc)
	// beforeTaken runs before a run's taken frame is written (tests only).
	beforeTaken func()
}

// Pool runs jobs in supervised sandbox worker processes. It implements
// [v8sandbox.Runner] and is safe for concurrent use.
type Pool struct {
	opts   Options
	logger *slog.Logger

	mu       sync.Mutex
	slots    []*slot
	procs    map[*proc]struct{} // every live process, serving or draining
	changed  chan struct{}      // closed and replaced on any state change
	closed   bool
	inflight int       // runs registered on a process
	queue    []*waiter // runs waiting for a process, in arrival order (principals.go)
	// Spare processes (spares.go): started, never used, in no slot.
	spares         []*proc
	sparesStarting int
	sparesWanted   bool          // a worker was retired for another principal
	spareWake      chan struct{} // capacity 1: the keeper may have work
	// Idle workers parked for their principal (idle.go), least recently
	// parked first, and the memory they are counted for.
	idle      []*proc
	idleBytes int64

	nextRun  atomic.Uint64
	spawned  atomic.Uint64
	crashed  atomic.Uint64
	killed   atomic.Uint64
	recycled atomic.Uint64
	rebound  atomic.Uint64
	parked   atomic.Uint64
	resumed  atomic.Uint64
	evicted  atomic.Uint64

	layers      layerSet    // what workers apply themselves
	cgroups     pidsCgroups // where workers get a pids cgroup (layers.threads)
	nsLevels    []nsLevel   // ways to spawn, most confined first
	nsIdx       int         // the one in use (guarded by mu)
	confinement Confinement
	confLogged  string // summary last logged (guarded by mu)

	spawns      chan spawnRequest
	quit        chan struct{} // closed by Close once runs are over
	loops       sync.WaitGroup
	helpersDone sync.WaitGroup
	stopHelpers chan struct{}
}

// slot is one of the Workers positions; its process is replaced when it
// dies or is recycled.
type slot struct {
	index    int
	cur      *proc // the serving process, nil while (re)starting
	failures int   // consecutive failures, for backoff
	lastErr  error
	// reserved makes the slot's next process belong to reservedFor from
	// birth: the principal for whom the previous one was retired
	// (principals.go).
	reserved    bool
	reservedFor string
	// wake (capacity 1) tells the supervisor its process left the slot
	// alive (parked, idle.go): serve what is in the slot now.
	wake chan struct{}
}

// wakeSupervisor tells the slot's supervisor that its process moved out.
func (s *slot) wakeSupervisor() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

type spawnRequest struct {
	cmd   *exec.Cmd
	reply chan error
}

// New starts the worker processes and waits until each has answered the
// handshake, so a wrong Command fails here rather than on the first run.
// Without a Command, workers start from the dedicated worker binary next
// to the executable when there is one that starts (workerbinary.go), else
// from this binary. Checker workers always start from this binary: the
// dedicated one registers no checker (it would fail its start, and be
// remembered as failed for the pools of programs too).
func New(opts Options) (*Pool, error) {
	if len(opts.Command) > 0 || opts.Checker {
		return newPool(opts)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	cmd, err := dedicatedWorker(opts.WorkerDir)
	if err == nil {
		err = failedBefore(cmd[0])
	}
	if err != nil {
		if !inTestBinary() || opts.WorkerDir != "" {
			logger.Info("sandbox workers start as this binary: no dedicated worker binary, which starts faster", "component", "procpool", "binary", WorkerBinary, "why", err)
		}
		return newPool(opts)
	}
	dedicated := opts
	dedicated.Command, dedicated.startupKey = cmd, v8sandbox.StartupKey()
	p, err := newPool(dedicated)
	if err == nil {
		return p, nil
	}
	logger.Warn("sandbox workers start as this binary: the dedicated worker binary did not start", "component", "procpool", "binary", cmd[0], "err", err)
	rememberFailure(cmd[0], err)
	return newPool(opts)
}

// newPool is New once the command is chosen.
func newPool(opts Options) (*Pool, error) {
	if opts.Workers <= 0 {
		opts.Workers = DefaultProcesses
	}
	if opts.SlotsPerWorker <= 0 {
		opts.SlotsPerWorker = DefaultSlotsPerWorker
	}
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	if opts.MaxRSSMB == 0 {
		opts.MaxRSSMB = DefaultMaxRSSMB
	}
	if opts.KillRSSMB == 0 {
		opts.KillRSSMB = 2 * max(opts.MaxRSSMB, DefaultMaxRSSMB)
	}
	if len(opts.Command) == 0 {
		if inTestBinary() && !workerDispatch.Load() {
			return nil, errors.New("procpool: the default worker command is this test binary, which would run its tests " +
				"instead of serving: call procpool.RunWorkerIfRequested() in TestMain, or set Options.Command")
		}
		cmd, err := defaultCommand()
		if err != nil {
			return nil, fmt.Errorf("procpool: locating the worker binary: %w", err)
		}
		opts.Command = cmd
	}
	opts.Defaults = opts.Defaults.WithDefaults(v8sandbox.Limits{
		Timeout:        v8sandbox.DefaultTimeout,
		HeapMB:         v8sandbox.DefaultHeapMB,
		ArrayBufferMB:  v8sandbox.DefaultArrayBufferMB,
		MaxResultBytes: v8sandbox.DefaultMaxResultBytes,
	})
	switch opts.Confinement {
	case "":
		opts.Confinement = ConfinementBestEffort
	case ConfinementBestEffort, ConfinementStrict, ConfinementOff:
	default:
		return nil, fmt.Errorf("procpool: unknown confinement %q (want strict, best-effort or off)", opts.Confinement)
	}
	layers := allWorkerLayers
	if opts.Confinement == ConfinementOff {
		layers = layerSet{}
	}
	if opts.layers != nil {
		layers = *opts.layers
	}
	protectParent(opts.Confinement)
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	p := &Pool{
		opts:        opts,
		logger:      logger.With("component", "procpool"),
		procs:       map[*proc]struct{}{},
		changed:     make(chan struct{}),
		spawns:      make(chan spawnRequest),
		spareWake:   make(chan struct{}, 1),
		quit:        make(chan struct{}),
		stopHelpers: make(chan struct{}),
		layers:      layers,
		nsLevels:    nsLevels(opts.Confinement),
	}
	if opts.noNamespaces {
		p.nsLevels = []nsLevel{{why: "disabled by a test"}}
	}
	p.cgroups = pidsCgroups{why: "not requested"}
	if layers.threads {
		p.cgroups = probePidsCgroups()
	}
	p.helpersDone.Add(2)
	go p.spawner()
	go p.monitor()

	first := make(chan error, opts.Workers)
	for i := range opts.Workers {
		s := &slot{index: i, wake: make(chan struct{}, 1)}
		p.slots = append(p.slots, s)
		p.loops.Add(1)
		go p.supervise(s, first)
	}
	var errs []error
	for range opts.Workers {
		if err := <-first; err != nil {
			errs = append(errs, err)
		}
	}
	if opts.SpareWorkers > 0 {
		p.loops.Add(1)
		go p.keepSpares()
	}
	if len(errs) > 0 {
		p.Close()
		return nil, fmt.Errorf("procpool: starting sandbox workers: %w", errors.Join(errs...))
	}
	return p, nil
}

// Run runs job in a worker process, serving its host functions with host
// in this process. The error, when not nil, is always a *v8sandbox.Error.
//
// Besides the engine's codes, a run can end with SANDBOX_CRASHED (its
// worker died) or HEAP_LIMIT (its worker died of memory exhaustion); a
// worker that does not answer by the deadline plus Grace is killed and the
// run ends with TIMEOUT.
func (p *Pool) Run(ctx context.Context, job v8sandbox.Job, host v8sandbox.Host) (v8sandbox.Result, error) {
	job.Limits = job.Limits.WithDefaults(p.opts.Defaults)
	if job.Origin == "" {
		job.Origin = "main.js"
	}
	if ctx.Err() != nil {
		return v8sandbox.Result{}, v8sandbox.WaitError(ctx, "waiting for a free sandbox worker")
	}
	r := &pending{id: p.nextRun.Add(1), host: host, timeout: job.Limits.Timeout, done: make(chan outcome, 1)}
	ref, lean := preludeRef(job.Prelude), job
	lean.Prelude = ""
	frame, err := encodeRun(r.id, &lean, ref)
	if err != nil {
		return v8sandbox.Result{}, v8sandbox.Errorf(v8sandbox.CodeInternal, "job cannot be sent to a sandbox worker: %v", err)
	}
	// Host calls end at the run's deadline: a call on a lane holds its
	// worker thread until answered, and must be answered before the
	// deadline's grace runs out and the worker is killed.
	r.hostCtx, r.cancelHost = context.WithTimeout(ctx, job.Limits.Timeout)
	defer r.cancelHost()

	pr, err := p.acquire(ctx, r, job.Principal)
	if err != nil {
		return v8sandbox.Result{}, err
	}
	withPrelude := func() ([]byte, error) {
		return encodeRun(r.id, &job, ref)
	}
	if err := pr.sendRun(frame, ref, withPrelude); err != nil {
		p.detach(r)
		return v8sandbox.Result{}, v8sandbox.Errorf(v8sandbox.CodeInternal, "job cannot be sent to a sandbox worker: %v", err)
	}
	hard := time.NewTimer(job.Limits.Timeout + p.opts.Grace)
	defer hard.Stop()

	var grace <-chan time.Time
	ctxDone := ctx.Done()
	for {
		select {
		case o := <-r.done:
			// The worker prepares its next context only once it has the
			// taken frame: preparing while this result is on its way would
			// compete with this goroutine's wake-up for the CPU (a 2-core
			// machine showed ~1 ms on a trivial run's return).
			pr.sendTaken(r.id)
			// Host calls share the caller's context, so a cancellation can
			// reach the script as a thrown error before the cancel frame
			// does: the stop reason wins, as in process.
			if err := v8sandbox.Settle(o.err, v8sandbox.StopReason(ctx, false, job.Limits.Timeout)); err != nil {
				return v8sandbox.Result{}, err
			}
			return o.res, nil
		case <-hard.C:
			if p.detach(r) {
				pr.kill(killDeadline, fmt.Sprintf("run %d did not answer within its deadline of %v plus %v grace",
					r.id, job.Limits.Timeout, p.opts.Grace))
				return v8sandbox.Result{}, v8sandbox.StopReason(ctx, true, job.Limits.Timeout)
			}
			// The answer is being delivered: take it from r.done.
		case <-ctxDone:
			ctxDone = nil
			if f, err := encodeFrame(&message{Type: msgCancel, ID: r.id}); err == nil {
				pr.send(f)
			}
			t := time.NewTimer(p.opts.Grace)
			defer t.Stop()
			grace = t.C
		case <-grace:
			if p.detach(r) {
				pr.kill(killCancel, fmt.Sprintf("run %d did not stop within %v of its cancellation", r.id, p.opts.Grace))
				return v8sandbox.Result{}, v8sandbox.StopReason(ctx, true, job.Limits.Timeout)
			}
		}
	}
}

// acquire registers r on a process that may serve principal (see
// principals.go), waiting while ctx allows.
func (p *Pool) acquire(ctx context.Context, r *pending, principal string) (*proc, error) {
	w := &waiter{r: r, principal: principal, ready: make(chan struct{})}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, v8sandbox.Errorf(v8sandbox.CodeInternal, "sandbox pool is closed")
	}
	p.queue = append(p.queue, w)
	if p.assignLocked(); r.proc == nil {
		p.broadcastLocked() // one more run waits
	}
	for {
		if pr := r.proc; pr != nil {
			p.mu.Unlock()
			return pr, nil
		}
		if p.closed {
			p.dequeueLocked(w)
			p.mu.Unlock()
			return nil, v8sandbox.Errorf(v8sandbox.CodeInternal, "sandbox pool is closed")
		}
		if err := p.failingLocked(); err != nil {
			p.dequeueLocked(w)
			p.broadcastLocked()
			p.mu.Unlock()
			return nil, err
		}
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-w.ready:
		case <-ch:
		case <-ctx.Done():
			p.mu.Lock()
			if r.proc != nil {
				p.mu.Unlock()
				p.detach(r)
			} else {
				p.dequeueLocked(w)
				p.broadcastLocked()
				p.mu.Unlock()
			}
			return nil, v8sandbox.WaitError(ctx, "waiting for a free sandbox worker")
		}
		p.mu.Lock()
	}
}

// failingLocked returns the error Run fails with at once when every slot
// keeps failing to start its process, nil otherwise.
func (p *Pool) failingLocked() error {
	var lastErr error
	for _, s := range p.slots {
		if s.cur != nil || s.failures < failFastAfter {
			return nil
		}
		lastErr = s.lastErr
	}
	return v8sandbox.Errorf(v8sandbox.CodeSandboxCrashed, "sandbox workers keep failing to start: %v", lastErr)
}

// detach unregisters r from its process. Exactly one caller gets true and
// owns the run's outcome; the others must read r.done (or drop it).
func (p *Pool) detach(r *pending) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := r.proc
	if _, ok := pr.runs[r.id]; !ok {
		return false
	}
	delete(pr.runs, r.id)
	p.inflight--
	if pr.draining && len(pr.runs) == 0 && !pr.dead {
		if pr.parkOnDrain {
			// Drained for another principal: park it (idle.go) unless it
			// was killed meanwhile or does not fit.
			pr.parkOnDrain, pr.draining = false, false
			if pr.reason == killNone && p.parkLocked(pr) {
				p.broadcastLocked()
				return true
			}
			p.rebound.Add(1)
			pr.draining = true
			pr.release()
		}
		go pr.shutdown()
	}
	p.broadcastLocked()
	return true
}

// retire drains pr: no new runs; it exits once its current runs are over,
// and its slot starts a replacement right away.
func (p *Pool) retire(pr *proc, why string) {
	p.mu.Lock()
	if pr.dead || (pr.draining && !pr.parkOnDrain) {
		p.mu.Unlock()
		return
	}
	pr.parkOnDrain = false // draining to be parked: ended instead
	p.retireLocked(pr)
	p.broadcastLocked()
	p.mu.Unlock()
	p.recycled.Add(1)
	p.logger.Info("recycling sandbox worker", "pid", pr.pid, "reason", why)
}

// retireLocked drains pr (see retire) without broadcasting; pr is not dead
// and, unless it was draining to be parked, not draining.
func (p *Pool) retireLocked(pr *proc) {
	p.dropSpareLocked(pr)
	p.dropIdleLocked(pr)
	pr.draining = true
	pr.release()
	if len(pr.runs) == 0 {
		go pr.shutdown()
	}
}

// broadcastLocked hands the processes to the runs waiting for them, then
// wakes everyone waiting for a change.
func (p *Pool) broadcastLocked() {
	p.assignLocked()
	close(p.changed)
	p.changed = make(chan struct{})
}

// Close waits for the runs in progress (each is bounded by its deadline plus
// Grace), then stops every worker process. Runs started afterwards fail with
// INTERNAL.
func (p *Pool) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.quit
		return
	}
	p.closed = true
	p.broadcastLocked()
	for p.inflight > 0 {
		ch := p.changed
		p.mu.Unlock()
		<-ch
		p.mu.Lock()
	}
	p.mu.Unlock()
	close(p.quit)
	p.loops.Wait()

	p.mu.Lock()
	procs := make([]*proc, 0, len(p.procs))
	for pr := range p.procs {
		procs = append(procs, pr)
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, pr := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pr.shutdown()
		}()
	}
	wg.Wait()
	close(p.stopHelpers)
	p.helpersDone.Wait()
}

// supervise keeps one slot's process alive: start, wait until it is
// released (death or recycling), back off if it keeps failing, repeat.
func (p *Pool) supervise(s *slot, first chan<- error) {
	defer p.loops.Done()
	for {
		select {
		case <-p.quit:
			if first != nil {
				first <- errors.New("pool closed")
			}
			return
		default:
		}
		p.mu.Lock()
		pr := s.cur // a spare put in its place (spares.go)
		p.mu.Unlock()
		if pr == nil {
			var err error
			pr, err = p.start(s.index)
			if first != nil {
				first <- err
				first = nil
				if err != nil {
					return
				}
			}
			if err != nil {
				p.mu.Lock()
				s.failures++
				s.lastErr = err
				n := s.failures
				p.broadcastLocked()
				p.mu.Unlock()
				p.logger.Error("sandbox worker failed to start", "slot", s.index, "failures", n, "err", err)
				if !p.sleep(backoff(n)) {
					return
				}
				continue
			}
			p.mu.Lock()
			if p.closed {
				p.mu.Unlock()
				pr.shutdown()
				return
			}
			s.cur = pr
			if s.reserved {
				pr.owner, pr.bound = s.reservedFor, true
				s.reserved = false
			}
			p.broadcastLocked()
			p.mu.Unlock()
		}

		for serving := true; serving; {
			select {
			case <-pr.released:
				serving = false
			case <-s.wake:
				// pr may have been parked (idle.go); a wake left over
				// from an earlier process is ignored.
				p.mu.Lock()
				serving = s.cur == pr
				p.mu.Unlock()
			case <-p.quit:
				return
			}
		}

		p.mu.Lock()
		if s.cur == pr {
			s.cur = nil
		}
		switch {
		case pr.dead && pr.idleCrash:
			s.failures++
			s.lastErr = pr.deathErr
		case pr.completed.Load() > 0 || time.Since(pr.started) >= healthyUptime:
			s.failures = 0
		}
		n := s.failures
		p.broadcastLocked()
		p.mu.Unlock()
		if n > 0 && !p.sleep(backoff(n)) {
			return
		}
	}
}

func backoff(failures int) time.Duration {
	if failures <= 0 {
		return 0
	}
	d := backoffBase << min(failures-1, 16)
	return min(d, backoffMax)
}

// sleep waits d unless the pool is closing; it reports whether to go on.
func (p *Pool) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.quit:
		return false
	}
}

// spawner starts every worker from one goroutine locked to its own thread.
// Pdeathsig fires when the thread that forked the child exits, not the
// process; this thread lives as long as the pool, so workers are killed by
// the kernel exactly when the pool's process (or the pool) goes away.
func (p *Pool) spawner() {
	defer p.helpersDone.Done()
	runtime.LockOSThread()
	// Never unlocked: when this goroutine ends (after Close stopped every
	// worker) its thread exits with it. Its workers inherit its timer slack.
	if err := setWorkerTimerSlack(); err != nil {
		p.logger.Warn("sandbox workers keep the default timer slack", "err", err)
	}
	for {
		select {
		case req := <-p.spawns:
			req.reply <- req.cmd.Start()
		case <-p.stopHelpers:
			return
		}
	}
}

// monitor samples the workers' RSS (the only place it is read: never on a
// run's path): a worker over KillRSSMB is killed on the spot, one over
// MaxRSSMB is recycled.
func (p *Pool) monitor() {
	defer p.helpersDone.Done()
	t := time.NewTicker(monitorEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-p.stopHelpers:
			return
		}
		p.mu.Lock()
		procs := make([]*proc, 0, len(p.procs))
		for pr := range p.procs {
			if !pr.dead && pr.pid != 0 {
				procs = append(procs, pr)
			}
		}
		p.mu.Unlock()
		for _, pr := range procs {
			rss, err := readRSS(pr.pid)
			if err != nil {
				continue
			}
			switch {
			case p.opts.KillRSSMB > 0 && rss > int64(p.opts.KillRSSMB)<<20:
				pr.kill(killRSS, fmt.Sprintf("RSS %d MB over the %d MB hard limit", rss>>20, p.opts.KillRSSMB))
			case p.opts.MaxRSSMB > 0 && rss > int64(p.opts.MaxRSSMB)<<20 && isClosed(pr.readyCh):
				// Drained: it takes no new run and exits once its runs end.
				// (A worker still starting has none: recycling it would
				// only restart the start.)
				p.retire(pr, fmt.Sprintf("RSS %d MB over the %d MB limit", rss>>20, p.opts.MaxRSSMB))
			}
		}
	}
}

// Stats describes the pool's processes.
type Stats struct {
	Workers []WorkerStats
	// Cumulative counts: processes started, processes that died on their
	// own (crash, abort, external kill), processes the pool killed
	// (deadline, cancellation, hard RSS limit, protocol violation) and
	// processes recycled for their RSS.
	Spawned, Crashed, Killed, Recycled uint64
	// Rebound counts processes ended so that a principal none of whose
	// processes was free could have another (principals.go), including
	// parked ones ended beyond the idle budget (idle.go).
	Rebound uint64
	// Parked, Resumed and Evicted count workers parked for their principal,
	// given back to it, and ended beyond Options.IdleWorkersMB (idle.go);
	// IdleBytes is the memory the parked workers are counted for now.
	Parked, Resumed, Evicted uint64
	IdleBytes                int64
}

// WorkerStats describes one live worker process.
type WorkerStats struct {
	Slot      int // -1 for a process being drained or a spare
	PID       int
	RSSBytes  int64
	Runs      int    // runs in progress
	Completed uint64 // runs the process answered
	Draining  bool
	Uptime    time.Duration
	// Principal is the principal the process serves (the key of
	// v8sandbox.Job.Principal); Bound is false while it has served no one
	// and is reserved for no one.
	Principal string
	Bound     bool
	// Spare is true for a started process that has never been given a run
	// and waits outside the slots for a principal (spares.go).
	Spare bool
	// Idle is true for a process parked for its principal outside the
	// slots (idle.go).
	Idle bool
	// Start is the process's start, phase by phase, on both sides
	// (startstamps.go).
	Start []StartPhase
}

// Stats returns a snapshot of the worker processes.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	st := Stats{Spawned: p.spawned.Load(), Crashed: p.crashed.Load(), Killed: p.killed.Load(), Recycled: p.recycled.Load(),
		Rebound: p.rebound.Load(), Parked: p.parked.Load(), Resumed: p.resumed.Load(), Evicted: p.evicted.Load(),
		IdleBytes: p.idleBytes}
	for pr := range p.procs {
		if pr.dead {
			continue
		}
		slot := pr.slot
		if pr.draining || pr.spare || pr.parked {
			slot = -1
		}
		st.Workers = append(st.Workers, WorkerStats{Slot: slot, PID: pr.pid, Runs: len(pr.runs),
			Completed: pr.completed.Load(), Draining: pr.draining, Uptime: time.Since(pr.started),
			Principal: pr.owner, Bound: pr.bound, Spare: pr.spare, Idle: pr.parked, Start: pr.startPhases})
	}
	p.mu.Unlock()
	for i := range st.Workers {
		st.Workers[i].RSSBytes, _ = readRSS(st.Workers[i].PID)
	}
	return st
}

// pending is a run registered on a process.
type pending struct {
	id         uint64
	proc       *proc
	host       v8sandbox.Host
	hostCtx    context.Context // ends at the run's deadline
	cancelHost context.CancelFunc
	timeout    time.Duration // the run's
	done       chan outcome  // capacity 1, written by whoever detached the run
}

type outcome struct {
	res v8sandbox.Result
	err *v8sandbox.Error
}

var _ v8sandbox.Runner = (*Pool)(nil)

// Confinement returns the confinement the pool's workers obtained on this
// host, layer by layer (the latest worker's; every worker of a pool gets
// the same unless the host changes under it).
func (p *Pool) Confinement() Confinement {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.confinement
}

// checkConfinement records what a new worker obtained, logs it when it
// differs from the last report, and refuses the worker under strict mode
// when a layer is missing.
func (p *Pool) checkConfinement(pr *proc) error {
	c := confinement(p.opts.Confinement, p.layers, pr.ns, pr.confine, pr.cgroup, pr.cgroupWhy)
	var missing []string
	if p.opts.Confinement == ConfinementStrict {
		missing = c.missing()
	}
	p.mu.Lock()
	p.confinement = c
	changed := p.confLogged != c.String()
	p.confLogged = c.String()
	p.mu.Unlock()
	if changed {
		attrs := []any{"mode", c.Mode}
		for _, l := range c.Layers {
			attrs = append(attrs, slog.Group(l.Name, "level", l.Level, "detail", l.Detail))
		}
		p.logger.Info("sandbox confinement", attrs...)
	}
	if len(missing) > 0 {
		return fmt.Errorf("strict sandbox confinement: this host does not give the worker %s", strings.Join(missing, ", "))
	}
	return nil
}
