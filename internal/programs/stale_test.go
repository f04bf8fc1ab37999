package programs_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/kv"
	"github.com/isogate/isogate/internal/programs"
	"github.com/isogate/isogate/v8sandbox"
)

// toolSet is a catalogue of these tests: the tools it offers, the
// backends whose tools are known. Its vetter refuses code that calls a
// tool it does not offer (TYPECHECK_FAILED), as the real checker does
// (the gateway's tests vet with the real one).
type toolSet struct {
	mu        sync.Mutex
	tools     map[string]bool
	unsettled map[string]bool
	down      bool // the checker does not answer
	vetted    int
}

func (s *toolSet) set(f func(s *toolSet)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *toolSet) Fingerprint() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for t := range s.tools {
		names = append(names, t)
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

func (s *toolSet) Settled(b string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.unsettled[b]
}

func (s *toolSet) Vet(ctx context.Context, name, code string) (*programs.Vetting, error) {
	v, _ := planOf{}.Vet(ctx, name, code)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.vetted++
	if s.down {
		return nil, v8sandbox.Errorf("TYPECHECK_UNAVAILABLE", "the checker is loading")
	}
	for _, c := range v.Calls {
		if !s.tools[c] {
			return nil, v8sandbox.Errorf("TYPECHECK_FAILED", "the program was not saved: %s is not a tool", c)
		}
	}
	return v, nil
}

// TestDriftMarksStaleAndClears: a version that calls a tool the catalogue
// no longer offers is marked stale in the store (so replica B refuses it
// with PROGRAM_STALE and the diagnostics, and lists it as stale), other
// versions are not; a check at the same fingerprint vets nothing again;
// a version calling a backend not connected, or checked while the
// checker does not answer, keeps its verdict; the tool back, the mark is
// cleared.
func TestDriftMarksStaleAndClears(t *testing.T) {
	ctx := context.Background()
	cat := &toolSet{tools: map[string]bool{"shop.refund": true, "shop.list": true, "crm.find": true}}
	store := kv.Store(kv.NewMemory())
	if redisServer != nil {
		s, err := kv.NewRedis(kv.RedisOptions{URL: redisServer.URL(), Prefix: fmt.Sprintf("{drift-test-%d}:", time.Now().UnixNano())})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		store = s
	}
	a := programs.New(programs.Options{Store: store, Vet: cat})
	b := programs.New(programs.Options{Store: store, Vet: cat})
	alice := caller("alice")
	save(t, a, alice, "refund", "d", "return await shop.refund({ id: args.id })")
	save(t, a, alice, "refund", "d", "return await shop.list({})")
	save(t, a, alice, "lookup", "d", "return await crm.find({})")
	if _, err := b.Resolve(ctx, alice, "refund@1"); err != nil { // b's index is built
		t.Fatal(err)
	}

	seen := map[string]string{}
	check := func(want ...string) *programs.CheckReport {
		t.Helper()
		rep, err := a.Check(ctx, programs.CheckOptions{Catalogue: cat, Record: true, Seen: seen})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range rep.Stale {
			got = append(got, s.Ref())
		}
		if !slices.Equal(got, want) {
			t.Fatalf("stale %v, want %v", got, want)
		}
		return rep
	}
	if rep := check(); rep.Checked != 3 {
		t.Fatalf("checked %d versions, want 3", rep.Checked)
	}

	cat.set(func(s *toolSet) { delete(s.tools, "shop.refund") })
	check("alice/refund@1")
	_, err := b.Resolve(ctx, alice, "refund@1")
	wantCode(t, err, programs.CodeStale)
	if !strings.Contains(err.Error(), "shop.refund is not a tool") || strings.Contains(err.Error(), "was not saved") {
		t.Errorf("the refusal does not carry the diagnostics: %v", err)
	}
	if _, err := b.Resolve(ctx, alice, "refund"); err != nil { // version 2 is current and checks
		t.Fatalf("the current version: %v", err)
	}
	st, err := b.Stale(ctx)
	if err != nil || len(st) != 1 || st[0].Ref() != "alice/refund@1" || st[0].Code != "TYPECHECK_FAILED" {
		t.Fatalf("replica B's stale list: %v %v", st, err)
	}
	if saved, stale, _ := b.Counts(ctx); saved != 2 || stale != 1 {
		t.Fatalf("counts %d saved, %d stale", saved, stale)
	}

	// The same catalogue: nothing vetted again.
	before := cat.vetted
	if rep := check("alice/refund@1"); rep.Checked != 0 || cat.vetted != before {
		t.Fatalf("a second check at the same fingerprint vetted %d", cat.vetted-before)
	}

	// crm not connected, shop.list gone: lookup is not judged; the
	// checker down: refund@2 keeps its verdict (not stale).
	cat.set(func(s *toolSet) {
		s.unsettled = map[string]bool{"crm": true}
		delete(s.tools, "shop.list")
		s.down = true
	})
	rep := check("alice/refund@1")
	if len(rep.Undecided) != 3 || !strings.Contains(rep.Undecided["alice/lookup@1"], "crm") {
		t.Fatalf("undecided %v", rep.Undecided)
	}
	cat.set(func(s *toolSet) { s.down = false })
	check("alice/refund@1", "alice/refund@2")
	_, err = b.Resolve(ctx, alice, "refund")
	wantCode(t, err, programs.CodeStale)

	// The tools back: cleared on every replica.
	cat.set(func(s *toolSet) { s.tools["shop.refund"], s.tools["shop.list"] = true, true; s.unsettled = nil })
	check()
	for _, ref := range []string{"refund@1", "refund", "lookup"} {
		if _, err := b.Resolve(ctx, alice, ref); err != nil {
			t.Fatalf("%s after the tools came back: %v", ref, err)
		}
	}
	if st, _ := b.Stale(ctx); len(st) != 0 {
		t.Fatalf("still stale: %v", st)
	}
}

// TestDriftInTheBackground: a kick after the catalogue changed marks the
// version stale without anyone calling it; a dry run (Record false)
// reports without marking.
func TestDriftInTheBackground(t *testing.T) {
	ctx := context.Background()
	cat := &toolSet{tools: map[string]bool{"shop.refund": true}}
	p := programs.New(programs.Options{Store: kv.NewMemory(), Vet: cat})
	save(t, p, caller("alice"), "refund", "d", "return await shop.refund({})")
	cat.set(func(s *toolSet) { s.tools = map[string]bool{} })

	rep, err := p.Check(ctx, programs.CheckOptions{Catalogue: cat})
	if err != nil || len(rep.Stale) != 1 {
		t.Fatalf("dry run: %+v %v", rep, err)
	}
	if st, _ := p.Stale(ctx); len(st) != 0 {
		t.Fatalf("a dry run marked %v", st)
	}

	d := p.Drift(programs.DriftOptions{Catalogue: cat})
	defer d.Close()
	for i := 0; ; i++ {
		if i == 3 {
			t.Fatal("three passes and the program is not marked stale")
		}
		passed := d.Passed()
		d.Kick()
		select {
		case <-passed:
		case <-time.After(time.Minute):
			t.Fatal("no pass in a minute")
		}
		if st, _ := p.Stale(ctx); len(st) == 1 {
			break
		}
	}
	_, err = p.Resolve(ctx, caller("alice"), "refund")
	wantCode(t, err, programs.CodeStale)
}
