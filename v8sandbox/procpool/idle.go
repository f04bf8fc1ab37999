package procpool

import "slices"

// Idle workers keep a principal's worker warm while others take its slot.
//
// A slot's worker serves one principal for life (principals.go). Without
// idle workers, a slot moving to another principal ends its worker and the
// next run of the first principal waits for (or takes a spare in place of)
// a fresh one: principals taking turns pay a worker start per turn. With
// Options.IdleWorkersMB, a worker retired for another principal is parked
// instead (at once when it has no run; a busy one leaves its slot, drains
// its runs, then is parked): alive, still bound to its principal, it waits
// in Pool.idle. When that principal next needs a
// worker, its parked worker takes the slot back at once.
//
//   - A parked worker keeps its principal: it is given back to that
//     principal alone (takeIdleLocked matches the owner), never to another,
//     never made a spare.
//   - It gets no run while parked: placeLocked looks only at slots.
//   - Memory bound: the parked workers' own memory (resident minus shared
//     file pages, read when parked, at least minIdleWorkerBytes each) stays
//     within IdleWorkersMB; parking beyond it ends the least recently parked
//     first (LRU), and a worker that alone exceeds the budget is ended.
//   - A parked worker that dies, or is recycled for its RSS, leaves the
//     list; Close ends them with the others.

// minIdleWorkerBytes is the least a parked worker is counted for, so that a
// misread never lets the budget hold unbounded processes.
const minIdleWorkerBytes = 4 << 20

// parkLocked moves pr, an open bound worker with no run that just left its
// slot, to the idle workers, ending the least recently parked ones beyond
// the budget. It reports false (pr is untouched) when pr cannot be parked:
// no budget, or its memory unknown or alone over the budget.
func (p *Pool) parkLocked(pr *proc) bool {
	budget := int64(p.opts.IdleWorkersMB) << 20
	if budget <= 0 || len(pr.runs) > 0 || !pr.bound || !pr.used {
		return false
	}
	own, err := readAnonRSS(pr.pid)
	if err != nil {
		return false // unknown: fail closed, end it
	}
	own = max(own, minIdleWorkerBytes)
	if own > budget {
		return false
	}
	for len(p.idle) > 0 && p.idleBytes+own > budget {
		p.logger.Debug("ending the least recently parked sandbox worker", "pid", p.idle[0].pid, "principal_worker_bytes", p.idle[0].idleBytes)
		p.evicted.Add(1)
		p.rebound.Add(1)
		p.retireLocked(p.idle[0]) // drops it from p.idle
	}
	pr.slot, pr.parked, pr.idleBytes = -1, true, own
	p.idle = append(p.idle, pr)
	p.idleBytes += own
	p.parked.Add(1)
	return true
}

// takeIdleLocked removes principal's most recently parked worker from the
// idle workers and returns it (nil if it has none).
func (p *Pool) takeIdleLocked(principal string) *proc {
	for i := len(p.idle) - 1; i >= 0; i-- {
		pr := p.idle[i]
		if pr.bound && pr.owner == principal && pr.open() {
			p.dropIdleLocked(pr)
			p.resumed.Add(1)
			return pr
		}
	}
	return nil
}

// dropIdleLocked forgets pr as a parked worker (taken back, retired or
// dead).
func (p *Pool) dropIdleLocked(pr *proc) {
	if !pr.parked {
		return
	}
	pr.parked = false
	p.idleBytes -= pr.idleBytes
	pr.idleBytes = 0
	if i := slices.Index(p.idle, pr); i >= 0 {
		p.idle = slices.Delete(p.idle, i, i+1)
	}
}
