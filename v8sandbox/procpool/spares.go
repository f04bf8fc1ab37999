package procpool

import "slices"

// Spare workers hide a worker's start from a principal's first run.
//
// With principals on workers of their own (principals.go), a principal
// without a process waits for one to be retired and a fresh one started:
// 21–40 ms on a loaded 2-core host, paid by nearly every run once more
// principals are active than there are workers. A spare is a process the
// pool started in advance and has never given a run: when a worker is
// retired for another principal, a ready spare takes the retired worker's
// slot at once, bound to that principal, and the keeper starts another in
// the background.
//
//   - A spare is never used before it is taken (it sits in Pool.spares,
//     outside the slots, and placeLocked only looks at slots), so the
//     principal that takes it is the first and only one it serves.
//   - Spares are started only once the pool has had to retire a worker for
//     another principal: a deployment with one principal (no
//     authentication: every run has the key "") never starts one and runs
//     exactly the processes it did before.
//   - Bound: Options.Workers serving, at most Workers draining, at most
//     Options.SpareWorkers spares (ready or starting).
//   - A spare's RSS is an idle worker's (about 20 MB); a spare recycled for
//     its RSS or dead is dropped and replaced.

// keepSpares starts spares, one at a time, while fewer than SpareWorkers
// are ready or starting and the pool wants them.
func (p *Pool) keepSpares() {
	defer p.loops.Done()
	failures := 0
	for {
		p.mu.Lock()
		need := p.sparesWanted && !p.closed && len(p.spares)+p.sparesStarting < p.opts.SpareWorkers
		if need {
			p.sparesStarting++
		}
		p.mu.Unlock()
		if !need {
			select {
			case <-p.spareWake:
				continue
			case <-p.quit:
				return
			}
		}
		pr, err := p.start(-1)
		p.mu.Lock()
		p.sparesStarting--
		if err != nil {
			closed := p.closed
			p.mu.Unlock()
			if closed {
				return
			}
			failures++
			p.logger.Error("spare sandbox worker failed to start", "failures", failures, "err", err)
			if !p.sleep(backoff(failures)) {
				return
			}
			continue
		}
		failures = 0
		if p.closed {
			p.mu.Unlock()
			pr.shutdown()
			return
		}
		pr.spare = true
		p.spares = append(p.spares, pr)
		p.broadcastLocked() // a principal may be waiting for it
		p.mu.Unlock()
	}
}

// takeSpareLocked removes a ready spare from the spares and returns it (nil
// if none), asking the keeper for a replacement.
func (p *Pool) takeSpareLocked() *proc {
	for i, pr := range p.spares {
		if pr.open() && !pr.used {
			p.spares = slices.Delete(p.spares, i, i+1)
			pr.spare = false
			p.wakeKeeper()
			return pr
		}
	}
	return nil
}

// dropSpareLocked forgets pr as a spare (it is retired or dead).
func (p *Pool) dropSpareLocked(pr *proc) {
	if !pr.spare {
		return
	}
	pr.spare = false
	if i := slices.Index(p.spares, pr); i >= 0 {
		p.spares = slices.Delete(p.spares, i, i+1)
	}
	p.wakeKeeper()
}

// wantSparesLocked starts keeping spares (a worker was retired for another
// principal).
func (p *Pool) wantSparesLocked() {
	if p.opts.SpareWorkers > 0 && !p.sparesWanted {
		p.sparesWanted = true
		p.wakeKeeper()
	}
}

func (p *Pool) wakeKeeper() {
	select {
	case p.spareWake <- struct{}{}:
	default:
	}
}
