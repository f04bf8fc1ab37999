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
	// Code is the program.
	Code string

	record atomic.Pointer[pipeline.Run] // set by Attach as the run starts
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
	// RecordID is the id its run record will have ("" until it started).
	RecordID string
	// Waiting counts its calls waiting for a person's approval.
	Waiting int
	// Code is the program.
	Code string
	// Record is its pipeline run (its calls so far); nil until it started.
	Record *pipeline.Run
}

// Attach links the live run to the pipeline run that records it (its id
// becomes the run record's; its calls are shown while it runs).
func (r *Run) Attach(p *pipeline.Run) {
	if r != nil {
		r.record.Store(p)
	}
}

// Called counts one completed tool call of the run.
func (r *Run) Called() {
	if r != nil {
		r.calls.Add(1)
	}
}

// StartRun puts a run on the desk; cancel ends it (the console's cancel
// button). The returned function takes it off again.
func (d *Desk) StartRun(principal, intent, code string, cancel context.CancelCauseFunc) (*Run, func()) {
	if d == nil {
		return nil, func() {}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nextID++
	r := &Run{ID: fmt.Sprintf("live-%d", d.nextID), Principal: principal, Intent: intent, Code: code, Started: time.Now(), cancel: cancel}
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
	waiting := map[string]int{}
	for _, a := range d.approvals {
		waiting[a.Run]++
	}
	for _, r := range d.runs {
		out = append(out, r.view(waiting[r.ID]))
	}
	d.mu.Unlock()
	slices.SortFunc(out, func(a, b RunView) int { return a.Started.Compare(b.Started) })
	return out
}

func (r *Run) view(waiting int) RunView {
	v := RunView{ID: r.ID, Principal: r.Principal, Intent: r.Intent, Started: r.Started, Calls: r.calls.Load(),
		Waiting: waiting, Code: r.Code, Record: r.record.Load()}
	if v.Record != nil {
		v.RecordID = v.Record.ID
	}
	return v
}

// LiveRun returns the live run whose run record will have the id id.
func (d *Desk) LiveRun(id string) (RunView, bool) {
	if d == nil || id == "" {
		return RunView{}, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range d.runs {
		if p := r.record.Load(); p != nil && p.ID == id {
			waiting := 0
			for _, a := range d.approvals {
				if a.Run == r.ID {
					waiting++
				}
			}
			return r.view(waiting), true
		}
	}
	return RunView{}, false
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
