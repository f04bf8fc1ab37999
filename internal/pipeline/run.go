package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"time"
)

// Run is the per-run state of a code-mode program: its id, its call budget
// and the record of its calls. It is safe for concurrent use.
type Run struct {
	// ID identifies the run (isogate/run in the result's _meta).
	ID string
	// MaxCalls is the run's call budget; 0 means unlimited.
	MaxCalls int
	// Started is when the run began; call times are relative to it.
	Started time.Time

	made atomic.Int64 // calls admitted by the budget

	mu    sync.Mutex
	seq   int
	calls []CallRecord
}

// NewRun starts a run with a fresh random id.
func NewRun(maxCalls int) *Run {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return &Run{ID: hex.EncodeToString(b), MaxCalls: maxCalls, Started: time.Now()}
}

// takeCall counts one call against the budget, reporting false when the
// budget is spent.
func (r *Run) takeCall() bool {
	n := r.made.Add(1)
	return r.MaxCalls <= 0 || n <= int64(r.MaxCalls)
}

// Calls returns the calls recorded so far, in the order they started.
func (r *Run) Calls() []CallRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]CallRecord, len(r.calls))
	copy(out, r.calls)
	return out
}

// begin reserves the next sequence number.
func (r *Run) begin() (seq int, startedMS int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	return r.seq, time.Since(r.Started).Milliseconds()
}

func (r *Run) add(c CallRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := len(r.calls)
	for i > 0 && r.calls[i-1].Seq > c.Seq {
		i--
	}
	r.calls = append(r.calls, CallRecord{})
	copy(r.calls[i+1:], r.calls[i:])
	r.calls[i] = c
}

type runKey struct{}

// WithRun returns ctx carrying run: calls made under it count against its
// budget and are added to its record.
func WithRun(ctx context.Context, run *Run) context.Context {
	return context.WithValue(ctx, runKey{}, run)
}

// RunFrom returns the run ctx carries, or nil.
func RunFrom(ctx context.Context) *Run {
	r, _ := ctx.Value(runKey{}).(*Run)
	return r
}
