package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
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

	// approved are the tools ("backend.tool") whose calls a person
	// approved with the run's plan (AdmitPlan), each with the calls that
	// approval still covers (-1: any number); set before the run starts.
	approvedMu sync.Mutex
	approved   map[string]int

	mu    sync.Mutex
	seq   int
	calls []CallRecord
	// inFlight are the calls started and not yet added, by sequence
	// number: a record taken while they run (the run ended with them in
	// flight) lists them as cut short by the run's end.
	inFlight map[int]CallRecord
	kept     int // bytes of arguments and results in calls
	// omitted counts the calls past MaxRecordCalls or MaxRecordBytes,
	// refused the calls refused past the budget (counted, never stored).
	omitted, refused int
}

// MaxRecordCalls bounds the calls a run record keeps; later calls are
// counted (RunRecord.OmittedCalls), not stored.
const MaxRecordCalls = 1000

// MaxRecordBytes bounds the arguments and results one run record keeps in
// total (each call's at most [MaxRecordedBytes]); calls past it are
// counted, not stored. With MaxRecordCalls it bounds what the gateway holds
// for one run's record.
const MaxRecordBytes = 4 << 20

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

// Calls returns the calls recorded so far, in the order they started. A
// call still in flight (its run ended first: timed out, cancelled, or
// returned without awaiting it) is listed as cut short by the run's end
// ([CallRecord.RunEnded]), so that a record written as its run ends has
// every call the run started, whenever that call's own answer arrives.
func (r *Run) Calls() []CallRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]CallRecord, len(r.calls), len(r.calls)+len(r.inFlight))
	copy(out, r.calls)
	for _, c := range r.inFlight {
		c.DurationMS = time.Since(r.Started).Milliseconds() - c.StartedMS
		c.Error = "in flight when its run ended"
		c.RunEnded = true
		out = append(out, c)
	}
	slices.SortStableFunc(out, func(a, b CallRecord) int { return a.Seq - b.Seq })
	return out
}

// begin reserves the next sequence number for c and returns its record,
// held as in flight until [Run.add] stores its outcome.
func (r *Run) begin(c *Call) CallRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	rec := CallRecord{Seq: r.seq, Backend: c.Backend, Tool: c.Tool, Args: NewBlob(argsOrEmpty(c.Args)),
		StartedMS: time.Since(r.Started).Milliseconds()}
	if r.inFlight == nil {
		r.inFlight = map[int]CallRecord{}
	}
	r.inFlight[rec.Seq] = rec
	return rec
}

// Totals returns how many calls were counted but not stored: past the
// record's bounds (omitted) and past the run's budget (refused).
func (r *Run) Totals() (omitted, refused int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.omitted, r.refused
}

// countRefused counts a call refused past the budget without storing it.
func (r *Run) countRefused() {
	r.mu.Lock()
	r.refused++
	r.mu.Unlock()
}

// add stores c unless the record is full (MaxRecordCalls entries or
// MaxRecordBytes of arguments and results), in which case it is counted.
func (r *Run) add(c CallRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.inFlight, c.Seq)
	size := c.Args.size() + c.Result.size()
	if len(r.calls) >= MaxRecordCalls || r.kept+size > MaxRecordBytes {
		r.omitted++
		return
	}
	r.kept += size
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

// approve marks tools as approved for the rest of the run, each for the
// calls its plan announced ([PlanTool.Covers]).
func (r *Run) approve(tools []PlanTool) {
	r.approvedMu.Lock()
	defer r.approvedMu.Unlock()
	if r.approved == nil {
		r.approved = map[string]int{}
	}
	for _, t := range tools {
		r.approved[t.Name()] = t.Covers()
	}
}

// Replayed counts a call a durable run's replay answered from its journal
// (it is not made again, and passes no stage): it used the approval of
// the run's plan when first made if that approval covered a call then,
// and so uses it again.
func (r *Run) Replayed(c *Call) { r.planApproved(c) }

// planApproved reports whether a person approved c's tool with the run's
// plan and that approval still covers a call, which c then uses: a call
// past the calls the plan announced is not covered (it asks on its own),
// whatever made the program call again (a callback, a getter, eval, a
// patched built-in).
func (r *Run) planApproved(c *Call) bool {
	r.approvedMu.Lock()
	defer r.approvedMu.Unlock()
	left, ok := r.approved[c.Name()]
	switch {
	case !ok || left == 0:
		return false
	case left > 0:
		r.approved[c.Name()] = left - 1
	}
	return true
}
