// Package fairshare is a counting semaphore whose slots are shared fairly
// between principals (the callers authenticated by server.auth): each
// principal may hold at most its share of the slots at once, and a freed
// slot goes to the waiting principal that holds the fewest (ties: the one
// that has waited longest). One principal's load therefore cannot starve
// another's first run or call: with a share below the capacity a slot is
// left for others, and a newcomer is served before a principal that already
// holds slots.
//
// The principal "" (a request without authentication: stdio, or a gateway
// without server.auth) has no share: it may use every slot and wait without
// bound, as a plain semaphore would.
package fairshare

import (
	"context"
	"fmt"
	"sync"

	"github.com/isogate/isogate/v8sandbox"
)

// CodePrincipalBusy is the code of a [*ShareError]: the calling principal
// holds its share of the slots (sandbox runs or a backend's calls) and
// either has as many acquisitions queued as it may, or none of its own
// finished before its wait ended.
const CodePrincipalBusy v8sandbox.Code = "PRINCIPAL_BUSY"

// Outcome is what happened when a principal found itself at its share.
type Outcome string

// The outcomes reported to [Options.OnShare].
const (
	// Waited: the principal held its share and queued behind the others.
	Waited Outcome = "waited"
	// Refused: the principal held its share with MaxWaiting acquisitions
	// already queued; the acquisition failed at once.
	Refused Outcome = "refused"
)

// Options configure [Slots].
type Options struct {
	// Capacity is the number of slots; at least 1.
	Capacity int
	// Share is the most slots one principal may hold at once; 0 (or more
	// than Capacity) means Capacity.
	Share int
	// MaxWaiting is the most acquisitions a principal holding its share may
	// have queued; past it, Acquire fails at once with a [*ShareError].
	// 0: no bound (the wait is bounded only by the caller's context).
	MaxWaiting int
	// OnShare, if set, is called (without locks held) each time a
	// principal's acquisition finds it at its share.
	OnShare func(Outcome)
}

// ShareError is an acquisition refused because its principal holds its
// share of the slots. Its code is [CodePrincipalBusy].
type ShareError struct {
	Held, Share, Capacity int
	// Waiting is how many of the principal's acquisitions were queued.
	Waiting int
	// Cause is the context error that ended the wait, or nil when the
	// acquisition was refused at once (MaxWaiting reached).
	Cause error
}

// Error implements error.
func (e *ShareError) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: this principal holds its share (%d of %d slots) and none of its own was freed before the wait ended: %v",
			CodePrincipalBusy, e.Held, e.Capacity, e.Cause)
	}
	return fmt.Sprintf("%s: this principal holds its share (%d of %d slots) and has %d more waiting",
		CodePrincipalBusy, e.Held, e.Capacity, e.Waiting)
}

// ErrorCode implements [v8sandbox.Coded].
func (e *ShareError) ErrorCode() v8sandbox.Code { return CodePrincipalBusy }

// Unwrap returns the context error that ended the wait, if any.
func (e *ShareError) Unwrap() error { return e.Cause }

// Slots is the semaphore. It is safe for concurrent use.
type Slots struct {
	opts Options

	mu      sync.Mutex
	inUse   int
	waiting int
	seq     uint64
	keys    map[string]*principal // with slots held or acquisitions queued
	queued  map[*principal]struct{}
}

type principal struct {
	key   string
	held  int
	queue []*waiter // FIFO
}

type waiter struct {
	ready   chan struct{} // closed when granted
	granted bool
	seq     uint64
}

// New returns a semaphore with o.Capacity free slots.
func New(o Options) *Slots {
	o.Capacity = max(o.Capacity, 1)
	if o.Share <= 0 || o.Share > o.Capacity {
		o.Share = o.Capacity
	}
	o.MaxWaiting = max(o.MaxWaiting, 0)
	return &Slots{opts: o, keys: map[string]*principal{}, queued: map[*principal]struct{}{}}
}

// Capacity returns the number of slots.
func (s *Slots) Capacity() int { return s.opts.Capacity }

// Share returns the most slots one authenticated principal may hold.
func (s *Slots) Share() int { return s.opts.Share }

// InUse reports the slots held and the acquisitions waiting.
func (s *Slots) InUse() (held, waiting int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inUse, s.waiting
}

// shareOf is the most slots key may hold.
func (s *Slots) shareOf(key string) int {
	if key == "" {
		return s.opts.Capacity
	}
	return s.opts.Share
}

// Acquire takes a slot for the principal key ("" for none) and returns the
// function that gives it back (calling it more than once is harmless). It
// waits while every slot is taken or key holds its share; when ctx ends
// first it returns a [*ShareError] if key was at its share, else ctx's
// error. It fails at once with a [*ShareError] when key holds its share
// and has Options.MaxWaiting acquisitions queued.
func (s *Slots) Acquire(ctx context.Context, key string) (release func(), err error) {
	s.mu.Lock()
	p := s.keys[key]
	if p == nil {
		p = &principal{key: key}
		s.keys[key] = p
	}
	share := s.shareOf(key)
	if s.inUse < s.opts.Capacity && p.held < share {
		s.grantLocked(p)
		s.mu.Unlock()
		return s.releaser(p), nil
	}
	atShare := p.held >= share
	if atShare && key != "" && s.opts.MaxWaiting > 0 && len(p.queue) >= s.opts.MaxWaiting {
		e := &ShareError{Held: p.held, Share: share, Capacity: s.opts.Capacity, Waiting: len(p.queue)}
		s.mu.Unlock()
		s.report(Refused)
		return nil, e
	}
	s.seq++
	w := &waiter{ready: make(chan struct{}), seq: s.seq}
	p.queue = append(p.queue, w)
	s.queued[p] = struct{}{}
	s.waiting++
	s.mu.Unlock()
	if atShare && key != "" {
		s.report(Waited)
	}

	select {
	case <-w.ready:
		return s.releaser(p), nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	if w.granted { // granted meanwhile: give it back
		s.releaseLocked(p)
		s.mu.Unlock()
		return nil, ctx.Err()
	}
	for i, q := range p.queue {
		if q == w {
			p.queue = append(p.queue[:i], p.queue[i+1:]...)
			break
		}
	}
	s.waiting--
	if len(p.queue) == 0 {
		delete(s.queued, p)
	}
	held, queued := p.held, len(p.queue)
	s.forgetLocked(p)
	s.mu.Unlock()
	return nil, s.waitError(ctx, p, held, queued)
}

// TryAcquire takes a slot for key when one is free and key is below its
// share, without waiting: ok reports whether it did. A caller that did not
// get one calls [Slots.Acquire] to wait in line.
func (s *Slots) TryAcquire(key string) (release func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.keys[key]
	if p == nil {
		p = &principal{key: key}
		s.keys[key] = p
	}
	if s.inUse < s.opts.Capacity && p.held < s.shareOf(key) {
		s.grantLocked(p)
		return s.releaser(p), true
	}
	s.forgetLocked(p)
	return nil, false
}

// waitError is the error of a wait that ctx ended: a [*ShareError] when
// the principal held its share.
func (s *Slots) waitError(ctx context.Context, p *principal, held, queued int) error {
	share := s.shareOf(p.key)
	if p.key == "" || held < share || s.opts.Share == s.opts.Capacity {
		return ctx.Err()
	}
	return &ShareError{Held: held, Share: share, Capacity: s.opts.Capacity, Waiting: queued, Cause: ctx.Err()}
}

func (s *Slots) report(o Outcome) {
	if s.opts.OnShare != nil {
		s.opts.OnShare(o)
	}
}

func (s *Slots) grantLocked(p *principal) {
	p.held++
	s.inUse++
}

func (s *Slots) releaser(p *principal) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.releaseLocked(p)
			s.mu.Unlock()
		})
	}
}

// releaseLocked gives back one of p's slots and hands free slots to the
// waiters.
func (s *Slots) releaseLocked(p *principal) {
	p.held--
	s.inUse--
	s.dispatchLocked()
	s.forgetLocked(p)
}

// forgetLocked drops p once it holds nothing and waits for nothing.
func (s *Slots) forgetLocked(p *principal) {
	if p.held == 0 && len(p.queue) == 0 && s.keys[p.key] == p {
		delete(s.keys, p.key)
	}
}

// dispatchLocked grants free slots, each to the waiting principal below
// its share that holds the fewest slots (ties: the longest waiting).
func (s *Slots) dispatchLocked() {
	for s.inUse < s.opts.Capacity {
		var next *principal
		for p := range s.queued {
			if p.held >= s.shareOf(p.key) {
				continue
			}
			if next == nil || p.held < next.held || (p.held == next.held && p.queue[0].seq < next.queue[0].seq) {
				next = p
			}
		}
		if next == nil {
			return
		}
		w := next.queue[0]
		next.queue = next.queue[1:]
		if len(next.queue) == 0 {
			delete(s.queued, next)
		}
		s.waiting--
		w.granted = true
		s.grantLocked(next)
		close(w.ready)
	}
}
