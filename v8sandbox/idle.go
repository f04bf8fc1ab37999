package v8sandbox

import "sync"

// idleWorkers holds the workers ready for a run. A run takes the most
// recently used worker that has an isolate, so that a pool whose runs come
// one at a time keeps using one warm isolate (its context prepared, its
// caches hot) instead of creating an isolate on every worker in turn: a
// sandbox worker process serving one principal's occasional runs would
// otherwise pay an isolate's creation (a snapshot deserialised, ~1–5 ms)
// on each of its first Workers runs, and hold Workers heaps while parked.
// A worker without an isolate is taken only when no warm one is free.
//
// Nor when a warm one is finishing its last run (its result delivered or
// on its way, its next context being prepared): a run that found only
// cold workers free waits for that one instead (claim), which costs it
// the rest of the finishing (the parent's "taken" frame and a context
// prepared, about a millisecond) rather than an isolate's creation (5–10
// ms on a busy machine): a principal's back-to-back runs in a sandbox
// worker process would otherwise build a second isolate on the second
// run. Each finishing worker is claimed by one run at most, so runs that
// come at once still spread over the workers.
type idleWorkers struct {
	ready chan struct{} // one token per worker in stack
	mu    sync.Mutex
	stack []*worker // most recently put last
	// finishing counts the warm workers between their run's end and
	// put; claims are the runs waiting for one of them, oldest first,
	// each woken by the put of a finishing worker.
	finishing int
	claims    []chan struct{}
	onClaim   func() // tests: called once a run has claimed a finishing worker
}

func newIdleWorkers(n int) *idleWorkers {
	return &idleWorkers{ready: make(chan struct{}, n)}
}

// put makes w available.
func (q *idleWorkers) put(w *worker) {
	q.mu.Lock()
	q.stack = append(q.stack, w)
	var claim chan struct{}
	if w.finishing {
		w.finishing = false
		q.finishing--
		if len(q.claims) > 0 {
			claim = q.claims[0]
			q.claims = q.claims[1:]
		}
	}
	q.mu.Unlock()
	q.ready <- struct{}{}
	if claim != nil {
		close(claim)
	}
}

// finish records that w's run has ended and that w, warm, will be put
// back without running another job.
func (q *idleWorkers) finish(w *worker) {
	if w.iso == nil {
		return
	}
	q.mu.Lock()
	w.finishing = true
	q.finishing++
	q.mu.Unlock()
}

// claim returns a channel closed when a finishing warm worker is put,
// or nil when every finishing worker is claimed already.
func (q *idleWorkers) claim() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.finishing <= len(q.claims) {
		return nil
	}
	ch := make(chan struct{})
	q.claims = append(q.claims, ch)
	if q.onClaim != nil {
		q.onClaim()
	}
	return ch
}

// pop removes and returns the worker a run should take; the caller has
// received a token from q.ready, so the stack is not empty.
func (q *idleWorkers) pop() *worker {
	q.mu.Lock()
	defer q.mu.Unlock()
	i := len(q.stack) - 1
	for j := i; j >= 0; j-- {
		if q.stack[j].iso != nil {
			i = j
			break
		}
	}
	w := q.stack[i]
	q.stack = append(q.stack[:i], q.stack[i+1:]...)
	return w
}

// take waits for a worker and returns it.
func (q *idleWorkers) take() *worker {
	<-q.ready
	return q.pop()
}
