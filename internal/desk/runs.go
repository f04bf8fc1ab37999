package desk

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/v8sandbox"
)

// Run is a program running now.
type Run struct {
	// ID names the run on the desk (not the run record's id, which is
	// known only once the run ends).
	ID string
	// Principal is who runs it ("" without authentication).
	Principal string
	// Intent is what the caller said the program is for, if anything.
	Intent string
	// Started is when it started.
	Started time.Time

	calls  atomic.Int64
	cancel context.CancelCauseFunc
}

// CodeCancelledByOperator is the code of a run an operator cancelled from
// the console: the agent, the audit and the metrics tell it from a
// caller's own cancellation (CANCELLED).
const CodeCancelledByOperator v8sandbox.Code = "CANCELLED_BY_OPERATOR"

// OperatorCancel is why a run the console cancelled ended: the cause of
// its context's cancellation.
type OperatorCancel struct {
	// By is the operator's principal ("" without authentication).
	By string
}

// Error implements error, naming the operator.
func (e *OperatorCancel) Error() string {
	who := "an operator"
	if e.By != "" {
		who = fmt.Sprintf("the operator %q", e.By)
	}
	return string(CodeCancelledByOperator) + ": the run was cancelled by " + who + " from the console"
}

// ErrorCode implements [v8sandbox.Coded].
func (e *OperatorCancel) ErrorCode() v8sandbox.Code { return CodeCancelledByOperator }

// RunView is a copy of a live run's state.
type RunView struct {
	ID, Principal, Intent string
	Started               time.Time
	// Calls is how many tool calls it has completed so far.
	Calls int64
}

// Called counts one completed tool call of the run.
func (r *Run) Called() {
	if r != nil {
		r.calls.Add(1)
	}
}

// StartRun puts a run on the desk; cancel ends it (the console's cancel
// button). The returned function takes it off again.
func (d *Desk) StartRun(principal, intent string, cancel context.CancelCauseFunc) (*Run, func()) {
	if d == nil {
		return nil, func() {}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nextID++
	r := &Run{ID: fmt.Sprintf("live-%d", d.nextID), Principal: principal, Intent: intent, Started: time.Now(), cancel: cancel}
	d.runs[r.ID] = r
	d.notifyLocked()
	return r, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		delete(d.runs, r.ID)
		d.notifyLocked()
	}
}

// Runs lists the live runs, oldest first.
func (d *Desk) Runs() []RunView {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	out := make([]RunView, 0, len(d.runs))
	for _, r := range d.runs {
		out = append(out, RunView{ID: r.ID, Principal: r.Principal, Intent: r.Intent, Started: r.Started, Calls: r.calls.Load()})
	}
	d.mu.Unlock()
	slices.SortFunc(out, func(a, b RunView) int { return a.Started.Compare(b.Started) })
	return out
}

// Cancel cancels the live run id on behalf of the operator by (an
// [OperatorCancel] is its context's cause); false when there is none.
func (d *Desk) Cancel(id, by string) bool {
	if d == nil {
		return false
	}
	d.mu.Lock()
	r := d.runs[id]
	d.mu.Unlock()
	if r == nil {
		return false
	}
	r.cancel(&OperatorCancel{By: by})
	return true
}

// Record is a finished run's record and who ran it.
type Record struct {
	Principal string
	Run       *pipeline.RunRecord
}

// KeepRecord keeps rec among the recent run records (the record is shared:
// it must not change afterwards).
func (d *Desk) KeepRecord(principal string, rec *pipeline.RunRecord) {
	if d == nil || rec == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.records.add(Record{Principal: principal, Run: rec})
	d.notifyLocked()
}

// Records lists the recent run records, newest first.
func (d *Desk) Records() []Record {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.records.newest()
}

// RecordOf returns the recent record of run id.
func (d *Desk) RecordOf(id string) (Record, bool) {
	if d == nil {
		return Record{}, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range d.records.items {
		if r.Run.ID == id {
			return r, true
		}
	}
	return Record{}, false
}
