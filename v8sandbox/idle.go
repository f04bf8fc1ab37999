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
type idleWorkers struct {
	ready chan struct{} // one token per worker in stack
	mu    sync.Mutex
	stack []*worker // most recently put last
}

func newIdleWorkers(n int) *idleWorkers {
	return &idleWorkers{ready: make(chan struct{}, n)}
}

// put makes w available.
func (q *idleWorkers) put(w *worker) {
	q.mu.Lock()
	q.stack = append(q.stack, w)
	q.mu.Unlock()
	q.ready <- struct{}{}
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
