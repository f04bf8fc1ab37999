package procpool

import (
	"context"
	"slices"
)

// Workers never mix principals.
//
// A V8 exploit in one run owns its worker process: it can read and alter
// the other runs on it, at the same time or later, and forge their frames.
// So a process serves the runs of one principal (v8sandbox.Job.Principal)
// for its whole life:
//
//   - a process is bound to a principal by the first run it is given, or
//     from birth when it replaces one retired for that principal; a
//     process that has never run anything (a spare) can be given to anyone;
//   - a run goes to the least busy open process of its principal or, when
//     that is busier, to a spare (so one principal spreads its runs over
//     the pool exactly as before: a deployment without principals, where
//     every run has the key "", behaves and performs as it always did);
//   - when a principal has runs waiting and no process at all, an idle
//     process of another principal is parked (idle.go) or retired (or, if
//     none is idle, a busy one: it finishes its runs while draining) and
//     its slot takes the waiting principal's parked process, or a spare, or
//     starts a fresh process reserved for it; a principal whose own
//     processes are full takes an idle process of a principal with nothing
//     waiting the same way;
//   - runs are handed out in arrival order, so a principal waiting for a
//     process is not overtaken for it.
//
// Bounds: Options.Workers processes serve; besides them, at most Workers
// processes retired for another principal drain at once (a principal
// needing a busy victim beyond that waits for a drain to end), so the pool
// never runs more than twice Workers processes plus Options.SpareWorkers
// started in advance for such moves (spares.go), plus those recycled for
// their RSS, as before, plus the idle workers parked for their principal
// within Options.IdleWorkersMB (idle.go). Starvation: a principal with no process gets a
// victim as soon as one is open, and the victim's replacement is its own;
// the wait is one worker start (none when a spare worker is ready) plus,
// when every process is busy and Workers are draining already, the end of
// a run (bounded by its deadline). The cost is a process start (see
// BenchmarkPrincipals) each time the pool moves to another principal,
// unless that principal's worker was parked (idle.go): then none.

// waiter is a run waiting to be registered on a process.
type waiter struct {
	r         *pending
	principal string
	ready     chan struct{} // closed once r is registered on a process
}

// open reports whether pr takes new runs. Called with pool.mu held.
func (pr *proc) open() bool { return !pr.draining && !pr.dead && pr.reason == killNone }

// dequeueLocked removes w from the queue.
func (p *Pool) dequeueLocked(w *waiter) {
	if i := slices.Index(p.queue, w); i >= 0 {
		p.queue = slices.Delete(p.queue, i, i+1)
	}
}

// assignLocked registers the waiting runs, in arrival order, on processes
// that may serve them, then retires processes for the principals left
// without one.
func (p *Pool) assignLocked() {
	if len(p.queue) == 0 || p.closed {
		return
	}
	waiting := map[string]int{}
	for _, w := range p.queue {
		waiting[w.principal]++
	}
	kept := p.queue[:0]
	var short []string // principals with runs left waiting, first come first
	for _, w := range p.queue {
		if pr := p.placeLocked(w.principal, waiting); pr != nil {
			pr.owner, pr.bound, pr.used = w.principal, true, true
			w.r.proc = pr
			pr.runs[w.r.id] = w.r
			w.r.hostCtx = context.WithValue(w.r.hostCtx, workerPIDKey{}, pr.pid)
			p.inflight++
			waiting[w.principal]--
			close(w.ready)
			continue
		}
		kept = append(kept, w)
		if !slices.Contains(short, w.principal) {
			short = append(short, w.principal)
		}
	}
	clear(p.queue[len(kept):])
	p.queue = kept

	restarting := 0 // slots starting a process reserved for no one
	for _, s := range p.slots {
		if s.cur == nil && !s.reserved {
			restarting++
		}
	}
	installed := false
	for _, principal := range short {
		if p.reservedLocked(principal) {
			continue // its process is starting
		}
		if restarting > 0 {
			restarting-- // a fresh process is coming anyway
			continue
		}
		if p.reclaimLocked(principal, waiting, p.ownsOpenLocked(principal)) {
			installed = true
		}
	}
	if installed {
		p.assignLocked() // each pass uses up a spare: this ends
	}
}

// placeLocked returns the process a run of principal goes to, or nil: the
// least busy open process with a free slot that is principal's, or a spare
// (never used, and bound to no one or to a principal with nothing
// waiting); principal's own wins a tie.
func (p *Pool) placeLocked(principal string, waiting map[string]int) *proc {
	var best *proc
	bestOwn := false
	for _, s := range p.slots {
		pr := s.cur
		if pr == nil || !pr.open() || len(pr.runs) >= p.opts.SlotsPerWorker {
			continue
		}
		own := pr.bound && pr.owner == principal
		unused := !pr.used && (!pr.bound || waiting[pr.owner] == 0)
		if !own && !unused {
			continue
		}
		if best == nil || len(pr.runs) < len(best.runs) || (len(pr.runs) == len(best.runs) && own && !bestOwn) {
			best, bestOwn = pr, own
		}
	}
	return best
}

// reservedLocked reports whether a slot is starting a process for
// principal.
func (p *Pool) reservedLocked(principal string) bool {
	for _, s := range p.slots {
		if s.reserved && s.reservedFor == principal {
			return true
		}
	}
	return false
}

// ownsOpenLocked reports whether principal has an open process (all busy,
// since a run of its own is waiting).
func (p *Pool) ownsOpenLocked(principal string) bool {
	for _, s := range p.slots {
		if pr := s.cur; pr != nil && pr.open() && pr.bound && pr.owner == principal {
			return true
		}
	}
	return false
}

// reclaimLocked retires a process of another principal so that its slot
// starts one reserved for principal. idleOnly (principal has processes of
// its own, all busy) takes only an idle process of a principal with
// nothing waiting. The victim is, in order of preference: of a principal
// with nothing waiting, idle, with the fewest runs, of the principal with
// the most processes.
//
// It reports whether a spare took the victim's place (spares.go): the runs
// waiting may be placed at once.
func (p *Pool) reclaimLocked(principal string, waiting map[string]int, idleOnly bool) bool {
	held := map[string]int{}
	for _, s := range p.slots {
		if pr := s.cur; pr != nil && pr.open() && pr.bound {
			held[pr.owner]++
		}
	}
	better := func(a, b *proc) bool {
		if (waiting[a.owner] == 0) != (waiting[b.owner] == 0) {
			return waiting[a.owner] == 0
		}
		if len(a.runs) != len(b.runs) {
			return len(a.runs) < len(b.runs)
		}
		return held[a.owner] > held[b.owner]
	}
	var victim *proc
	for _, s := range p.slots {
		pr := s.cur
		if pr == nil || !pr.open() || !pr.bound || pr.owner == principal || s.reserved {
			continue
		}
		if !pr.used && waiting[pr.owner] > 0 {
			continue // born for a principal that is waiting for it
		}
		if idleOnly && (len(pr.runs) > 0 || waiting[pr.owner] > 0) {
			continue
		}
		if victim == nil || better(pr, victim) {
			victim = pr
		}
	}
	if victim == nil {
		return false
	}
	if len(victim.runs) > 0 && p.drainingLocked() >= p.opts.Workers {
		return false // wait for a drain to end (bounded by its runs' deadlines)
	}
	s := p.slots[victim.slot]
	// The victim's place goes to principal's own parked worker (idle.go),
	// else a spare, else a process started for it.
	next := p.takeIdleLocked(principal)
	if next == nil {
		next = p.takeSpareLocked()
	}
	if next != nil {
		next.slot, next.owner, next.bound = s.index, principal, true
		s.cur = next
	} else {
		s.reserved, s.reservedFor = true, principal
	}
	parked := len(victim.runs) == 0 && p.parkLocked(victim)
	if !parked && len(victim.runs) > 0 && p.opts.IdleWorkersMB > 0 {
		// Busy: it finishes its runs outside the slot, then is parked
		// (detach).
		victim.draining, victim.parkOnDrain = true, true
		parked = true
	}
	if parked {
		// Kept warm for its principal; the slot's supervisor moves on to
		// the process in its place (or starts the reserved one).
		if s.cur == victim {
			s.cur = nil
		}
		s.wakeSupervisor()
		p.logger.Debug("parking a sandbox worker for another principal", "pid", victim.pid, "runs", len(victim.runs), "next", next != nil)
	} else {
		p.rebound.Add(1)
		p.logger.Debug("retiring a sandbox worker for another principal", "pid", victim.pid, "runs", len(victim.runs), "next", next != nil)
		p.retireLocked(victim)
	}
	p.wantSparesLocked()
	return next != nil
}

// drainingLocked counts the processes draining.
func (p *Pool) drainingLocked() int {
	n := 0
	for pr := range p.procs {
		if pr.draining && !pr.dead {
			n++
		}
	}
	return n
}

type workerPIDKey struct{}

// WorkerPID returns the process id of the sandbox worker whose run a host
// call belongs to, from the context the host is called with (0 outside a
// process pool's host call). For logs and tests: it tells which process a
// run was given.
func WorkerPID(ctx context.Context) int {
	pid, _ := ctx.Value(workerPIDKey{}).(int)
	return pid
}
