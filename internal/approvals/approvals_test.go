package approvals

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/pipeline"
)

// The attack of issue 25 (3): unanswered passthrough approvals of 1 MiB
// arguments piled up, each holding its arguments for ten minutes. What
// waits now holds a digest, and at most maxPendingPerOwner per owner and
// maxPendingApprovals overall.
func TestPendingApprovalsAreBoundedAndHoldNoArguments(t *testing.T) {
	var trips roundTrips
	big := json.RawMessage(`{"pad":"` + strings.Repeat("x", 1<<20) + `"}`)
	key := approvalKey(&pipeline.Call{Backend: "b", Tool: "t", Args: big})
	var last string
	for range 400 {
		last = trips.parkApproval("mallory", key)
		if last == "" {
			t.Fatal("one owner's approvals refused instead of replacing its oldest")
		}
	}
	held := 0
	for _, p := range trips.approvals {
		held += len(p.key)
	}
	if len(trips.approvals) != maxPendingPerOwner || held > 64*maxPendingPerOwner {
		t.Fatalf("one owner keeps %d approvals holding %d bytes of keys", len(trips.approvals), held)
	}
	if !trips.takeApproval(last, "mallory", key) {
		t.Fatal("the newest approval was dropped")
	}

	for i := 0; len(trips.approvals) < maxPendingApprovals; i++ {
		if trips.parkApproval(fmt.Sprint("owner-", i), key) == "" {
			t.Fatalf("refused at %d pending approvals", len(trips.approvals))
		}
	}
	if trips.parkApproval("another", key) != "" || len(trips.approvals) != maxPendingApprovals {
		t.Fatalf("past the overall bound: %d pending", len(trips.approvals))
	}
}

// The same arguments in another spelling are the same call; other
// arguments, tool or backend are not.
func TestApprovalKeyIsADigestOfTheCall(t *testing.T) {
	k := approvalKey(&pipeline.Call{Backend: "b", Tool: "t", Args: json.RawMessage(`{"a": 1}`)})
	if k != approvalKey(&pipeline.Call{Backend: "b", Tool: "t", Args: json.RawMessage(`{"a":1}`)}) || len(k) != 64 {
		t.Fatalf("key %q", k)
	}
	for _, c := range []*pipeline.Call{
		{Backend: "b", Tool: "t", Args: json.RawMessage(`{"a":2}`)},
		{Backend: "b", Tool: "u", Args: json.RawMessage(`{"a":1}`)},
		{Backend: "bt", Tool: "", Args: json.RawMessage(`{"a":1}`)},
	} {
		if approvalKey(c) == k {
			t.Errorf("%s(%s) has the same key", c.Name(), c.Args)
		}
	}
}

// Code-mode runs paused for approval are bounded too: an owner's oldest
// parked run is cancelled past maxParkedPerOwner, and past maxParkedRuns a
// new one is refused.
func TestParkedRunsAreBounded(t *testing.T) {
	var trips roundTrips
	newRun := func(owner string) (*liveRun, context.Context) {
		ctx, cancel := context.WithCancel(context.Background())
		return &liveRun{owner: owner, deadline: time.Now().Add(time.Hour), cancel: cancel}, ctx
	}
	var ctxs []context.Context
	for range maxParkedPerOwner + 3 {
		r, ctx := newRun("mallory")
		if trips.park(r, "") == "" {
			t.Fatal("one owner's run refused instead of replacing its oldest")
		}
		ctxs = append(ctxs, ctx)
	}
	if len(trips.parked) != maxParkedPerOwner {
		t.Fatalf("one owner keeps %d parked runs", len(trips.parked))
	}
	for i, ctx := range ctxs {
		if cancelled := ctx.Err() != nil; cancelled != (i < 3) {
			t.Errorf("run %d: cancelled %v", i, cancelled)
		}
	}
	for i := 0; len(trips.parked) < maxParkedRuns; i++ {
		if r, _ := newRun(fmt.Sprint("owner-", i)); trips.park(r, "") == "" {
			t.Fatalf("refused at %d parked runs", len(trips.parked))
		}
	}
	if r, _ := newRun("another"); trips.park(r, "") != "" {
		t.Fatalf("past the overall bound: %d parked", len(trips.parked))
	}
}
