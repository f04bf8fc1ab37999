package fairshare

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/isogate/isogate/v8sandbox"
)

// acquireAsync starts an acquisition and returns a channel that receives
// its outcome once it has one.
func acquireAsync(s *Slots, ctx context.Context, key string) chan func() {
	ch := make(chan func(), 1)
	go func() {
		rel, err := s.Acquire(ctx, key)
		if err != nil {
			rel = nil
		}
		ch <- rel
	}()
	return ch
}

// waitQueued blocks until n acquisitions are waiting.
func waitQueued(t *testing.T, s *Slots, n int) {
	t.Helper()
	for {
		if _, w := s.InUse(); w >= n {
			return
		}
		select {
		case <-t.Context().Done():
			t.Fatal("test ended before the acquisitions queued")
		default:
		}
		runtime.Gosched()
	}
}

func mustAcquire(t *testing.T, s *Slots, key string) func() {
	t.Helper()
	rel, err := s.Acquire(t.Context(), key)
	if err != nil {
		t.Fatalf("Acquire(%q): %v", key, err)
	}
	return rel
}

// One principal holding its share leaves the rest of the slots to others:
// alice gets one at once while bob's share is taken.
func TestShareLeavesSlotsToOthers(t *testing.T) {
	s := New(Options{Capacity: 4, Share: 2})
	mustAcquire(t, s, "bob")
	mustAcquire(t, s, "bob")
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // an acquisition that would wait fails at once
	if _, err := s.Acquire(ctx, "bob"); !isShare(err) {
		t.Fatalf("bob's third acquisition: %v, want a ShareError", err)
	}
	if _, err := s.Acquire(ctx, "alice"); err != nil {
		t.Fatalf("alice, with bob at his share: %v", err)
	}
}

// A freed slot goes to the principal holding the fewest, before a
// principal that queued earlier but holds more.
func TestFreedSlotGoesToFewestHeld(t *testing.T) {
	s := New(Options{Capacity: 2, Share: 2})
	b1 := mustAcquire(t, s, "bob")
	mustAcquire(t, s, "bob")
	bobWaits := acquireAsync(s, t.Context(), "bob")
	waitQueued(t, s, 1)
	aliceWaits := acquireAsync(s, t.Context(), "alice")
	waitQueued(t, s, 2)
	b1()
	select { // exactly one of the two is granted the freed slot
	case rel := <-aliceWaits:
		if rel == nil {
			t.Fatal("alice's acquisition failed")
		}
	case <-bobWaits:
		t.Fatal("bob, who holds a slot, got the freed slot before alice, who holds none")
	}
	if _, w := s.InUse(); w != 1 {
		t.Fatalf("waiting = %d, want bob's 1", w)
	}
}

// Past MaxWaiting a principal at its share is refused at once with
// PRINCIPAL_BUSY, and the refusal is reported.
func TestMaxWaitingRefuses(t *testing.T) {
	var mu sync.Mutex
	seen := map[Outcome]int{}
	s := New(Options{Capacity: 4, Share: 1, MaxWaiting: 1, OnShare: func(o Outcome) {
		mu.Lock()
		seen[o]++
		mu.Unlock()
	}})
	mustAcquire(t, s, "bob")
	acquireAsync(s, t.Context(), "bob")
	waitQueued(t, s, 1)
	_, err := s.Acquire(t.Context(), "bob")
	if !isShare(err) || v8sandbox.CodeOf(err) != CodePrincipalBusy {
		t.Fatalf("err = %v, want PRINCIPAL_BUSY", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen[Waited] != 1 || seen[Refused] != 1 {
		t.Fatalf("reported %v, want one waited and one refused", seen)
	}
}

// Without a principal ("", no authentication) there is no share and no
// waiting bound: it behaves as a plain semaphore of Capacity slots.
func TestNoPrincipalHasTheWholeCapacity(t *testing.T) {
	s := New(Options{Capacity: 3, Share: 1, MaxWaiting: 1})
	var rels []func()
	for range 3 {
		rels = append(rels, mustAcquire(t, s, ""))
	}
	w1, w2 := acquireAsync(s, t.Context(), ""), acquireAsync(s, t.Context(), "")
	waitQueued(t, s, 2)
	rels[0]()
	rels[1]()
	if <-w1 == nil || <-w2 == nil {
		t.Fatal("a waiting acquisition failed")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Acquire(ctx, ""); !errors.Is(err, context.Canceled) || isShare(err) {
		t.Fatalf("err = %v, want the context's error", err)
	}
}

// A cancelled wait leaves nothing behind; release is idempotent.
func TestCancelledWaitAndDoubleRelease(t *testing.T) {
	s := New(Options{Capacity: 1})
	rel := mustAcquire(t, s, "bob")
	ctx, cancel := context.WithCancel(t.Context())
	ch := acquireAsync(s, ctx, "alice")
	waitQueued(t, s, 1)
	cancel()
	if <-ch != nil {
		t.Fatal("cancelled acquisition succeeded")
	}
	rel()
	rel()
	if h, w := s.InUse(); h != 0 || w != 0 {
		t.Fatalf("in use %d, waiting %d after all released", h, w)
	}
	if len(s.keys) != 0 || len(s.queued) != 0 {
		t.Fatalf("state left behind: %v %v", s.keys, s.queued)
	}
}

func isShare(err error) bool {
	var se *ShareError
	return errors.As(err, &se)
}

// TryAcquire grants what Acquire would grant at once and nothing else: a
// principal at its share, or a full pool, is refused without waiting, and
// leaves no trace.
func TestTryAcquire(t *testing.T) {
	s := New(Options{Capacity: 2, Share: 1})
	relA, ok := s.TryAcquire("a")
	if !ok {
		t.Fatal("a free slot was refused")
	}
	if _, ok := s.TryAcquire("a"); ok {
		t.Fatal("a principal at its share got a second slot")
	}
	relB, ok := s.TryAcquire("b")
	if !ok {
		t.Fatal("b's first slot was refused")
	}
	if _, ok := s.TryAcquire("c"); ok {
		t.Fatal("a full pool granted a slot")
	}
	if held, waiting := s.InUse(); held != 2 || waiting != 0 {
		t.Fatalf("in use %d, waiting %d; want 2, 0", held, waiting)
	}
	relA()
	relB()
	if held, _ := s.InUse(); held != 0 || len(s.keys) != 0 {
		t.Fatalf("after release: in use %d, %d principals remembered", held, len(s.keys))
	}
}
