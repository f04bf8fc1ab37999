package procpool

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/isogate/isogate/v8sandbox"
)

// pidHost answers a run's wait(principal) with the pid of the worker the
// run is on (WorkerPID), recording which principals each worker served.
// With hold, each call blocks until release is closed.
type pidHost struct {
	hold    bool
	release chan struct{}
	arrived chan int

	mu     sync.Mutex
	served map[int][]string // pid → principals, in call order
}

func newPIDHost(hold bool) *pidHost {
	return &pidHost{hold: hold, release: make(chan struct{}), arrived: make(chan int, 256), served: map[int][]string{}}
}

func (h *pidHost) Call(ctx context.Context, c v8sandbox.HostCall) v8sandbox.HostReply {
	var args []string
	if err := json.Unmarshal(c.Args, &args); err != nil || len(args) != 1 {
		return v8sandbox.Reply(nil, fmt.Errorf("wait wants one principal, got %s", c.Args))
	}
	pid := WorkerPID(ctx)
	h.mu.Lock()
	h.served[pid] = append(h.served[pid], args[0])
	h.mu.Unlock()
	h.arrived <- pid
	if h.hold {
		select {
		case <-h.release:
		case <-ctx.Done():
			return v8sandbox.Reply(nil, ctx.Err())
		}
	}
	return v8sandbox.HostReply{Value: []byte(fmt.Sprint(pid))}
}

// awaitCalls waits for n calls to arrive.
func (h *pidHost) awaitCalls(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-h.arrived:
		case <-time.After(20 * time.Second):
			t.Fatalf("a host call never arrived; served so far %v", h.snapshot())
		}
	}
}

func (h *pidHost) snapshot() map[int][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[int][]string{}
	for pid, who := range h.served {
		out[pid] = append([]string(nil), who...)
	}
	return out
}

// checkNoMixing fails the test when a worker served two principals.
func (h *pidHost) checkNoMixing(t *testing.T) {
	t.Helper()
	for pid, who := range h.snapshot() {
		if pid == 0 {
			t.Errorf("runs saw no worker pid: %v", who)
		}
		for _, p := range who[1:] {
			if p != who[0] {
				t.Errorf("worker %d served %v: principals mixed", pid, who)
				break
			}
		}
	}
}

// principalJob calls wait(principal) and returns its answer.
func principalJob(principal string) v8sandbox.Job {
	return v8sandbox.Job{
		Source:      fmt.Sprintf(`(async () => await wait(%q))()`, principal),
		Functions:   []v8sandbox.Function{{Name: "wait", Async: true}},
		AwaitResult: true,
		Limits:      v8sandbox.Limits{Timeout: 30 * time.Second},
		Principal:   principal,
	}
}

// TestPrincipalsInFlightNeverShareAWorker runs alice's and bob's programs
// at the same time: every run reports the worker it is on, and no worker
// holds runs of both.
func TestPrincipalsInFlightNeverShareAWorker(t *testing.T) {
	p := newTestPool(t, Options{Workers: 2, SlotsPerWorker: 4})
	h := newPIDHost(true)
	var outs []<-chan outcomeT
	for i := range 6 {
		who := []string{"alice", "bob"}[i%2]
		outs = append(outs, runAsync(context.Background(), p, principalJob(who), h))
	}
	h.awaitCalls(t, 6)
	h.checkNoMixing(t)
	if n := len(h.snapshot()); n < 2 {
		t.Errorf("alice and bob ran on %d worker(s)", n)
	}
	if st := p.Stats(); len(st.Workers) > 2*2 {
		t.Errorf("%d worker processes alive, the bound is twice Workers: %+v", len(st.Workers), st)
	}
	close(h.release)
	for _, ch := range outs {
		if o := receive(t, ch, 30*time.Second); o.err != nil {
			t.Errorf("run failed: %v", o.err)
		}
	}
}

// TestAWorkerIsNeverGivenToAnotherPrincipal runs rounds of alice's, bob's
// and carol's programs, several at once: a worker that served one of them
// never serves another, and the pool starts fresh processes for that;
// with spares too.
func TestAWorkerIsNeverGivenToAnotherPrincipal(t *testing.T) {
	for _, spares := range []int{0, 2} {
		t.Run(fmt.Sprint("spares=", spares), func(t *testing.T) { testNeverGivenToAnother(t, spares) })
	}
}

func testNeverGivenToAnother(t *testing.T, spares int) {
	p := newTestPool(t, Options{Workers: 2, SlotsPerWorker: 2, SpareWorkers: spares})
	h := newPIDHost(false)
	who := []string{"alice", "bob", "alice", "carol", "bob", "alice", "alice", "bob", "carol", "carol", "alice", "bob"}
	for round := range 3 {
		var outs []<-chan outcomeT
		for i, name := range who {
			if i%3 == round {
				outs = append(outs, runAsync(context.Background(), p, principalJob(name), h))
			}
		}
		for _, ch := range outs {
			if o := receive(t, ch, 30*time.Second); o.err != nil {
				t.Errorf("run failed: %v", o.err)
			}
		}
		for _, name := range who { // one after the other
			if o := <-runAsync(context.Background(), p, principalJob(name), h); o.err != nil {
				t.Errorf("run failed: %v", o.err)
			}
		}
	}
	h.checkNoMixing(t)
	if st := p.Stats(); st.Rebound == 0 || st.Spawned <= 2 {
		t.Errorf("no worker was retired for another principal: %+v", st)
	}
}

// TestOnePrincipalKeepsItsWorkers: with a single principal (a deployment
// without auth: the key "") the pool behaves as it always did: concurrent
// runs spread over the workers, and no worker is ever replaced.
func TestOnePrincipalKeepsItsWorkers(t *testing.T) {
	p := newTestPool(t, Options{Workers: 2, SlotsPerWorker: 4})
	waitAllStarted(t, p) // a run finding one worker up would rightly take it
	h := newPIDHost(true)
	a := runAsync(context.Background(), p, principalJob(""), h)
	b := runAsync(context.Background(), p, principalJob(""), h)
	h.awaitCalls(t, 2)
	if n := len(h.snapshot()); n != 2 {
		t.Errorf("two concurrent runs went to %d worker(s), want one each: %v", n, h.snapshot())
	}
	close(h.release)
	receive(t, a, 30*time.Second)
	receive(t, b, 30*time.Second)
	quick := newPIDHost(false)
	for range 20 {
		if o := <-runAsync(context.Background(), p, principalJob(""), quick); o.err != nil {
			t.Fatalf("run failed: %v", o.err)
		}
	}
	if st := p.Stats(); st.Spawned != 2 || st.Rebound != 0 {
		t.Errorf("one principal's runs replaced workers: %+v", st)
	}
}

// TestAPrincipalIsNotStuckBehindAnother: bob's runs fill the only worker;
// alice's run gets a fresh worker and finishes while bob's still run (his
// worker drains). carol then finds alice's worker busy and bob's draining:
// at most twice Workers processes live, so she waits for alice's run to
// end, then gets a worker of her own.
func TestAPrincipalIsNotStuckBehindAnother(t *testing.T) {
	p := newTestPool(t, Options{Workers: 1, SlotsPerWorker: 4})
	bobs := newPIDHost(true)
	var bobRuns []<-chan outcomeT
	for range 4 {
		bobRuns = append(bobRuns, runAsync(context.Background(), p, principalJob("bob"), bobs))
	}
	bobs.awaitCalls(t, 4)

	alices := newPIDHost(true)
	alice := runAsync(context.Background(), p, principalJob("alice"), alices)
	alices.awaitCalls(t, 1)

	carols := newPIDHost(false)
	carol := runAsync(context.Background(), p, principalJob("carol"), carols)
	waitState(t, p, 20*time.Second, "carol's run to wait for a worker", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.queue) == 1
	})
	if st := p.Stats(); len(st.Workers) > 2 {
		t.Errorf("%d worker processes alive with Workers 1: %+v", len(st.Workers), st)
	}
	close(alices.release)
	if o := receive(t, alice, 30*time.Second); o.err != nil {
		t.Fatalf("alice's run: %v", o.err)
	}
	if o := receive(t, carol, 30*time.Second); o.err != nil {
		t.Fatalf("carol's run: %v", o.err)
	}
	close(bobs.release) // only now: alice and carol were never stuck behind bob
	for _, ch := range bobRuns {
		if o := receive(t, ch, 30*time.Second); o.err != nil {
			t.Errorf("bob's run on his draining worker: %v", o.err)
		}
	}
	for _, h := range []*pidHost{bobs, alices, carols} {
		for pid := range h.snapshot() {
			for _, other := range []*pidHost{bobs, alices, carols} {
				if other != h {
					if _, ok := other.snapshot()[pid]; ok {
						t.Errorf("worker %d served two principals", pid)
					}
				}
			}
		}
	}
}

// TestCancelledWhileWaitingForAWorker: a run cancelled while it waits for
// a worker of its own leaves the queue; the pool goes on serving.
func TestCancelledWhileWaitingForAWorker(t *testing.T) {
	p := newTestPool(t, Options{Workers: 1, SlotsPerWorker: 1})
	bobs := newPIDHost(true)
	bob := runAsync(context.Background(), p, principalJob("bob"), bobs)
	bobs.awaitCalls(t, 1)
	alices := newPIDHost(true)
	alice := runAsync(context.Background(), p, principalJob("alice"), alices) // bob's worker drains
	alices.awaitCalls(t, 1)

	ctx, cancel := context.WithCancel(context.Background())
	carol := runAsync(ctx, p, principalJob("carol"), newPIDHost(false)) // none idle, one draining already
	waitState(t, p, 20*time.Second, "carol's run to wait", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.queue) == 1
	})
	cancel()
	if o := receive(t, carol, 30*time.Second); o.err == nil {
		t.Fatal("a cancelled run succeeded")
	}
	p.mu.Lock()
	queued := len(p.queue)
	p.mu.Unlock()
	if queued != 0 {
		t.Errorf("%d runs still queued after the cancellation", queued)
	}
	close(alices.release)
	close(bobs.release)
	for _, ch := range []<-chan outcomeT{alice, bob} {
		if o := receive(t, ch, 30*time.Second); o.err != nil {
			t.Errorf("run failed: %v", o.err)
		}
	}
	if o := <-runAsync(context.Background(), p, principalJob("carol"), newPIDHost(false)); o.err != nil {
		t.Errorf("carol's next run: %v", o.err)
	}
}
