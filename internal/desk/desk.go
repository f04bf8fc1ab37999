package desk

import (
	"sync"
)

// Bounds of what a Desk keeps.
const (
	// MaxRecords is how many recent run records a Desk keeps.
	MaxRecords = 200
	// MaxEvents is how many recent audit events a Desk keeps.
	MaxEvents = 2000
)

// Desk holds the live runs, pending approvals, recent run records and
// audit events of one gateway. The zero value is not usable; see [New].
// All methods are safe for concurrent use, and on a nil *Desk they do
// nothing.
type Desk struct {
	mu        sync.Mutex
	nextID    uint64
	runs      map[string]*Run
	approvals map[string]*Approval
	records   ring[Record]
	events    ring[Event]

	changed chan struct{} // closed and replaced on every change
}

// New returns an empty desk.
func New() *Desk {
	return &Desk{runs: map[string]*Run{}, approvals: map[string]*Approval{},
		records: ring[Record]{max: MaxRecords}, events: ring[Event]{max: MaxEvents}, changed: make(chan struct{})}
}

// Changed returns a channel closed at the next change of the live runs,
// pending approvals or records (not of audit events, which are many).
func (d *Desk) Changed() <-chan struct{} {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.changed
}

// notifyLocked wakes whoever waits on Changed.
func (d *Desk) notifyLocked() {
	close(d.changed)
	d.changed = make(chan struct{})
}

// ring keeps the last max items, oldest first.
type ring[T any] struct {
	max   int
	items []T
}

func (r *ring[T]) add(v T) {
	if len(r.items) >= r.max {
		copy(r.items, r.items[1:])
		r.items = r.items[:len(r.items)-1]
	}
	r.items = append(r.items, v)
}

// newest returns the items newest first.
func (r *ring[T]) newest() []T {
	out := make([]T, len(r.items))
	for i, v := range r.items {
		out[len(r.items)-1-i] = v
	}
	return out
}
