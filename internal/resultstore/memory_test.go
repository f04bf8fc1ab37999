package resultstore

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a manually advanced clock for Memory tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

var ctx = context.Background()

// put stores data and fails the test on error.
func put(t *testing.T, s Store, owner, data string) string {
	t.Helper()
	id, err := s.Put(ctx, owner, []byte(data))
	if err != nil {
		t.Fatalf("Put(%q, %d bytes): %v", owner, len(data), err)
	}
	return id
}

// readable reports whether owner can read id.
func readable(s Store, owner, id string) bool {
	_, err := s.Get(ctx, owner, id)
	return err == nil
}

// The Memory store satisfies the interface.
var _ Store = (*Memory)(nil)

func TestMemoryPutGet(t *testing.T) {
	s := NewMemory(Limits{TTL: time.Minute, MaxBytes: 1000, OwnerBytes: 1000}, CountDataOnly())
	id := put(t, s, "sess", "hello")
	if got, err := s.Get(ctx, "sess", id); err != nil || string(got) != "hello" {
		t.Fatalf("Get = %q, %v; want hello", got, err)
	}
	if _, err := s.Get(ctx, "sess", "0000000000000000"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of an unknown id: %v, want ErrNotFound", err)
	}
	if total, mine := s.Bytes("sess"); s.Len() != 1 || total != 5 || mine != 5 {
		t.Fatalf("Len, Bytes = %d, %d, %d; want 1, 5, 5", s.Len(), total, mine)
	}
}

func TestLimitsDefaults(t *testing.T) {
	l := NewMemory(Limits{}).Limits()
	if l.TTL != 15*time.Minute || l.MaxBytes != 64<<20 || l.OwnerBytes != 16<<20 {
		t.Fatalf("defaults: %+v", l)
	}
	if l := (Limits{MaxBytes: 100, OwnerBytes: 500}).WithDefaults(); l.OwnerBytes != 100 {
		t.Fatalf("OwnerBytes above MaxBytes not clamped: %+v", l)
	}
}

func TestMemoryTTLExpiry(t *testing.T) {
	clk := newFakeClock()
	s := NewMemory(Limits{TTL: 10 * time.Minute, MaxBytes: 1000}, WithClock(clk.Now), CountDataOnly())
	a := put(t, s, "", "first")
	clk.Advance(4 * time.Minute)
	b := put(t, s, "", "second")
	clk.Advance(6*time.Minute - time.Nanosecond)
	if !readable(s, "", a) {
		t.Fatalf("entry expired before its TTL")
	}
	clk.Advance(time.Nanosecond) // a is exactly 10m old
	if readable(s, "", a) {
		t.Fatalf("entry still readable at its TTL")
	}
	if !readable(s, "", b) {
		t.Fatalf("younger entry expired early")
	}
	if total, _ := s.Bytes(""); s.Len() != 1 || total != len("second") {
		t.Fatalf("after expiry Len, Bytes = %d, %d", s.Len(), total)
	}
	clk.Advance(4 * time.Minute)
	if total, _ := s.Bytes(""); readable(s, "", b) || s.Len() != 0 || total != 0 {
		t.Fatalf("second entry not expired: Len %d Bytes %d", s.Len(), total)
	}
}

func TestMemoryExpiryWithClockGoingBack(t *testing.T) {
	clk := newFakeClock()
	s := NewMemory(Limits{TTL: time.Minute, MaxBytes: 1000}, WithClock(clk.Now), CountDataOnly())
	clk.Advance(time.Hour)
	young := put(t, s, "", "young") // stored "later", then the clock goes back
	clk.Advance(-time.Hour)
	old := put(t, s, "", "old")
	clk.Advance(time.Hour + 30*time.Second) // old is expired, young is 30s old
	if readable(s, "", old) {
		t.Fatalf("expired entry behind a younger one was returned")
	}
	if !readable(s, "", young) {
		t.Fatalf("live entry lost")
	}
}

func TestMemoryOwnEviction(t *testing.T) {
	s := NewMemory(Limits{TTL: time.Hour, MaxBytes: 100, OwnerBytes: 100}, CountDataOnly())
	a := put(t, s, "", strings.Repeat("a", 40))
	b := put(t, s, "", strings.Repeat("b", 40))
	c := put(t, s, "", strings.Repeat("c", 40)) // 120 > 100: evict a
	if readable(s, "", a) {
		t.Errorf("oldest entry not evicted")
	}
	for _, id := range []string{b, c} {
		if !readable(s, "", id) {
			t.Errorf("entry %s evicted too", id)
		}
	}
	d := put(t, s, "", strings.Repeat("d", 100)) // exactly the limit: evicts all
	if total, _ := s.Bytes(""); s.Len() != 1 || total != 100 {
		t.Fatalf("Put of exactly max: Len %d Bytes %d", s.Len(), total)
	}
	if id, err := s.Put(ctx, "", []byte(strings.Repeat("e", 101))); !errors.Is(err, ErrTooLarge) || id != "" {
		t.Fatalf("Put larger than max = %q, %v; want ErrTooLarge", id, err)
	}
	if !readable(s, "", d) {
		t.Fatalf("refused Put evicted an entry")
	}
}

// One owner filling its share evicts only its own results; another owner's
// results survive until their TTL, and a store full of others' results
// refuses rather than evicting them.
func TestMemoryOwnerShare(t *testing.T) {
	clk := newFakeClock()
	s := NewMemory(Limits{TTL: time.Minute, MaxBytes: 300, OwnerBytes: 100}, WithClock(clk.Now), CountDataOnly())
	victim := put(t, s, "victim", strings.Repeat("v", 90))
	for range 50 { // the hog writes far more than the whole store
		put(t, s, "hog", strings.Repeat("h", 60))
	}
	if !readable(s, "victim", victim) {
		t.Fatalf("another owner's puts evicted the victim's result")
	}
	if _, hog := s.Bytes("hog"); hog > 100 {
		t.Fatalf("hog holds %d bytes, share is 100", hog)
	}
	third := put(t, s, "third", strings.Repeat("t", 100))
	// 90 + 60 + 100 = 250 of 300: a fourth owner's 100 bytes do not fit,
	// and nobody else's result may go.
	if _, err := s.Put(ctx, "fourth", []byte(strings.Repeat("f", 100))); !errors.Is(err, ErrFull) {
		t.Fatalf("Put into a store full of others' results: %v, want ErrFull", err)
	}
	for owner, id := range map[string]string{"victim": victim, "third": third} {
		if !readable(s, owner, id) {
			t.Fatalf("%s's result was evicted by a refused Put", owner)
		}
	}
	clk.Advance(time.Minute) // everything expires: room again
	put(t, s, "fourth", strings.Repeat("f", 100))
}

func TestMemoryOwnerIsolation(t *testing.T) {
	s := NewMemory(Limits{TTL: time.Hour, MaxBytes: 1000}, CountDataOnly())
	id := put(t, s, "alice", `{"secret":1}`)
	for _, other := range []string{"bob", "", "alice "} {
		if _, err := s.Get(ctx, other, id); !errors.Is(err, ErrNotFound) {
			t.Fatalf("%q read alice's result: %v", other, err)
		}
	}
	if got, err := s.Get(ctx, "alice", id); err != nil || string(got) != `{"secret":1}` {
		t.Fatalf("owner cannot read own result: %q, %v", got, err)
	}
	pub := put(t, s, "", "public")
	if readable(s, "alice", pub) {
		t.Fatalf("owner alice read the empty owner's result")
	}
}

func TestMemoryIDsAreRandom(t *testing.T) {
	hex32 := regexp.MustCompile(`^[0-9a-f]{32}$`)
	s1, s2 := NewMemory(Limits{MaxBytes: 1 << 20}), NewMemory(Limits{MaxBytes: 1 << 20})
	seen := map[string]bool{}
	for i := range 2000 {
		for _, s := range []*Memory{s1, s2} {
			id := put(t, s, "", "x")
			if !hex32.MatchString(id) {
				t.Fatalf("id %q is not 32 hex chars", id)
			}
			if seen[id] {
				t.Fatalf("duplicate id %q after %d puts", id, i)
			}
			seen[id] = true
		}
	}
	// Random ids use every hex digit in every position; a counter or a
	// timestamp would not.
	for pos := range 32 {
		digits := map[byte]bool{}
		for id := range seen {
			digits[id[pos]] = true
		}
		if len(digits) < 16 {
			t.Errorf("position %d only ever holds %d distinct digits", pos, len(digits))
		}
	}
}

func TestMemoryIDCollisionRetries(t *testing.T) {
	ids := []string{"aaaa", "aaaa", "bbbb"}
	s := NewMemory(Limits{}, WithIDs(func() string { id := ids[0]; ids = ids[1:]; return id }))
	a, b := put(t, s, "", "1"), put(t, s, "", "2")
	if a == b || b != "bbbb" {
		t.Fatalf("ids %q, %q: collision not retried", a, b)
	}
}

func TestMemoryConcurrent(t *testing.T) {
	s := NewMemory(Limits{TTL: time.Hour, MaxBytes: 50_000, OwnerBytes: 10_000}, CountDataOnly())
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			owner := fmt.Sprint("owner", g)
			for i := range 200 {
				data := fmt.Sprintf(`{"g":%d,"i":%d}`, g, i)
				id, err := s.Put(ctx, owner, []byte(data))
				if err != nil {
					t.Errorf("Put: %v", err)
					return
				}
				if got, err := s.Get(ctx, owner, id); err == nil && string(got) != data {
					t.Errorf("Get returned another entry's data")
				}
				s.Len()
			}
		})
	}
	wg.Wait()
	if total, _ := s.Bytes(""); total > 50_000 {
		t.Fatalf("Bytes %d over the limit", total)
	}
}
