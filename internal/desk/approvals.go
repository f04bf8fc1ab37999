package desk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/isogate/isogate/internal/pipeline"
)

// Approval is a call waiting for a person's yes or no.
type Approval struct {
	// ID names the approval on the desk.
	ID string
	// Principal is whose program (or client) made the call.
	Principal string
	// Backend and Tool name the tool called.
	Backend, Tool string
	// Args are the call's arguments, as sent (JSON).
	Args []byte
	// Asked is when the approval was asked.
	Asked time.Time
	// Run is the desk id of the live run that asked ("" outside a run).
	Run string

	answer chan answer // buffered: the first answer wins
}

// answer is an operator's yes or no.
type answer struct {
	ok bool
	by string
}

// ApprovalView is a copy of a pending approval.
type ApprovalView struct {
	ID, Principal, Backend, Tool string
	// Run is the desk id of the live run that asked ("" outside a run).
	Run   string
	Args  []byte
	Asked time.Time
}

// Approver returns an approver that asks both inner (the agent's client:
// elicitation or an input request) and the desk, and takes whichever
// answers first; the other question is withdrawn. When inner cannot ask
// (no elicitation), the desk alone is asked. A nil desk returns inner.
// The approvals of a live run name it (run is its desk id; "" outside a
// run). The approver says who answered ([pipeline.AnsweringApprover]).
func (d *Desk) Approver(inner pipeline.Approver, principal, run string) pipeline.Approver {
	if d == nil {
		return inner
	}
	return approver{d: d, inner: inner, principal: principal, run: run}
}

type approver struct {
	d              *Desk
	inner          pipeline.Approver
	principal, run string
}

// Approve implements pipeline.Approver.
func (a approver) Approve(ctx context.Context, c *pipeline.Call) (bool, error) {
	ok, _, err := a.ApproveBy(ctx, c)
	return ok, err
}

// ApproveBy implements pipeline.AnsweringApprover: an answer from the
// console names its operator; one from the client, the run's principal.
func (a approver) ApproveBy(ctx context.Context, c *pipeline.Call) (bool, pipeline.ApprovalBy, error) {
	client := pipeline.ApprovalBy{Name: a.principal, Via: pipeline.ViaClient}
	ap, done := a.d.ask(a.principal, a.run, c)
	defer done()
	type result struct {
		ok  bool
		err error
	}
	innerCtx, withdraw := context.WithCancel(ctx)
	defer withdraw()
	var fromClient chan result
	if a.inner != nil {
		fromClient = make(chan result, 1)
		go func() {
			ok, err := a.inner.Approve(innerCtx, c)
			fromClient <- result{ok, err}
		}()
	}
	for {
		select {
		case r := <-fromClient:
			if errors.Is(r.err, pipeline.ErrCannotAsk) {
				fromClient = nil // the console remains
				continue
			}
			return r.ok, client, r.err
		case an := <-ap.answer:
			return an.ok, pipeline.ApprovalBy{Name: an.by, Via: pipeline.ViaConsole}, nil
		case <-ctx.Done():
			return false, client, fmt.Errorf("waiting for approval: %w", ctx.Err())
		}
	}
}

// ask puts an approval of c on the desk until done is called.
func (d *Desk) ask(principal, run string, c *pipeline.Call) (*Approval, func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nextID++
	ap := &Approval{ID: fmt.Sprintf("approval-%d", d.nextID), Principal: principal, Backend: c.Backend, Tool: c.Tool,
		Args: slices.Clone([]byte(c.Args)), Asked: time.Now(), Run: run, answer: make(chan answer, 1)}
	d.approvals[ap.ID] = ap
	d.notifyLocked()
	return ap, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		delete(d.approvals, ap.ID)
		d.notifyLocked()
	}
}

// Approvals lists the pending approvals, oldest first.
func (d *Desk) Approvals() []ApprovalView {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	out := make([]ApprovalView, 0, len(d.approvals))
	for _, a := range d.approvals {
		out = append(out, ApprovalView{ID: a.ID, Principal: a.Principal, Backend: a.Backend, Tool: a.Tool, Args: a.Args, Asked: a.Asked, Run: a.Run})
	}
	d.mu.Unlock()
	slices.SortFunc(out, func(a, b ApprovalView) int { return a.Asked.Compare(b.Asked) })
	return out
}

// Answer answers the pending approval id (accept or not) on behalf of the
// operator by; false when it is no longer pending or was already answered.
func (d *Desk) Answer(id string, accept bool, by string) bool {
	if d == nil {
		return false
	}
	d.mu.Lock()
	ap := d.approvals[id]
	d.mu.Unlock()
	if ap == nil {
		return false
	}
	select {
	case ap.answer <- answer{ok: accept, by: by}:
		return true
	default:
		return false
	}
}
