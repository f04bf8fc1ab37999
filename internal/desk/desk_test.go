package desk

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/v8sandbox"
)

type cannotAsk struct{}

func (cannotAsk) Approve(context.Context, *pipeline.Call) (bool, error) {
	return false, pipeline.ErrCannotAsk
}

// waiting answers when told, and reports whether it was withdrawn.
type waiting struct {
	answer    chan bool
	withdrawn chan struct{}
}

func (w waiting) Approve(ctx context.Context, _ *pipeline.Call) (bool, error) {
	select {
	case ok := <-w.answer:
		return ok, nil
	case <-ctx.Done():
		close(w.withdrawn)
		return false, ctx.Err()
	}
}

func pending(t *testing.T, d *Desk) ApprovalView {
	t.Helper()
	for {
		changed := d.Changed() // taken before looking, so no change falls between
		if list := d.Approvals(); len(list) == 1 {
			return list[0]
		}
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatal("no approval reached the desk")
		}
	}
}

// TestConsoleAnswersWhenTheClientCannot: a client without elicitation
// no longer refuses at once: the desk's answer decides, and the approval
// leaves the desk.
func TestConsoleAnswersWhenTheClientCannot(t *testing.T) {
	d := New()
	got := make(chan bool, 1)
	go func() {
		ok, err := d.Approver(cannotAsk{}, "bob", "").Approve(context.Background(), &pipeline.Call{Backend: "b", Tool: "write", Args: []byte(`{"x":1}`)})
		if err != nil {
			t.Error(err)
		}
		got <- ok
	}()
	ap := pending(t, d)
	if ap.Principal != "bob" || ap.Tool != "write" || string(ap.Args) != `{"x":1}` {
		t.Errorf("pending approval %+v", ap)
	}
	if !d.Answer(ap.ID, true, "alice") {
		t.Fatal("Answer found nothing")
	}
	if !<-got {
		t.Error("approved on the desk, but the call was refused")
	}
	if len(d.Approvals()) != 0 {
		t.Error("the answered approval stayed on the desk")
	}
}

// TestFirstAnswerWins: the console's answer withdraws the client's
// question; the client's answer takes the approval off the desk.
func TestFirstAnswerWins(t *testing.T) {
	d := New()
	w := waiting{answer: make(chan bool, 1), withdrawn: make(chan struct{})}
	got := make(chan bool, 1)
	go func() {
		ok, _ := d.Approver(w, "bob", "").Approve(context.Background(), &pipeline.Call{Backend: "b", Tool: "write"})
		got <- ok
	}()
	d.Answer(pending(t, d).ID, false, "alice")
	if <-got {
		t.Error("denied on the desk, but approved")
	}
	<-w.withdrawn // the client's question was withdrawn

	w = waiting{answer: make(chan bool, 1), withdrawn: make(chan struct{})}
	go func() {
		ok, _ := d.Approver(w, "bob", "").Approve(context.Background(), &pipeline.Call{Backend: "b", Tool: "write"})
		got <- ok
	}()
	ap := pending(t, d)
	w.answer <- true
	if !<-got {
		t.Error("approved by the client, but refused")
	}
	if d.Answer(ap.ID, false, "alice") {
		t.Error("an approval the client answered could still be answered on the desk")
	}
}

// TestCancelEndsTheRun: Cancel calls the run's cancel; a finished run
// is gone.
func TestCancelEndsTheRun(t *testing.T) {
	d := New()
	ctx, cancel := context.WithCancelCause(context.Background())
	run, off := d.StartRun("bob", "sync", "", cancel)
	run.Called()
	if rs := d.Runs(); len(rs) != 1 || rs[0].Calls != 1 || rs[0].Principal != "bob" {
		t.Fatalf("runs %+v", rs)
	}
	if !d.Cancel(run.ID, "alice") || !errors.Is(ctx.Err(), context.Canceled) {
		t.Error("Cancel did not cancel the run")
	}
	var oc *OperatorCancel
	if cause := context.Cause(ctx); !errors.As(cause, &oc) || oc.By != "alice" || v8sandbox.CodeOf(cause) != CodeCancelledByOperator {
		t.Errorf("the run's cause %v does not name the operator alice", cause)
	}
	off()
	if d.Cancel(run.ID, "alice") || len(d.Runs()) != 0 {
		t.Error("a finished run stayed on the desk")
	}
}

// TestNilDeskIsInert: without a console the surface's calls do nothing.
func TestNilDeskIsInert(t *testing.T) {
	var d *Desk
	inner := cannotAsk{}
	if d.Approver(inner, "x", "") != pipeline.Approver(inner) {
		t.Error("a nil desk wrapped the approver")
	}
	_, off := d.StartRun("x", "", "", func(error) {})
	off()
	d.KeepRecord("x", &pipeline.RunRecord{})
	if d.Runs() != nil || d.Records() != nil || d.Events(EventFilter{}) != nil {
		t.Error("a nil desk kept something")
	}
}
