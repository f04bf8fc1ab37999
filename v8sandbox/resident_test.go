package v8sandbox

import (
	"context"
	"errors"
	"testing"
	"time"
)

func newTestResident(t *testing.T) *Resident {
	t.Helper()
	r := NewResident(ResidentOptions{HeapMB: 32, Setup: []ResidentScript{{Origin: "setup.js", Source: func() (string, error) {
		return `let n = 0;
globalThis.next = () => String(++n);
globalThis.spin = () => { for (;;) {} };
globalThis.hog = () => { const a = []; for (;;) a.push(new Array(1000).fill(a.length)); };
globalThis.fail = (m) => { throw new Error(m); };`, nil
	}}}})
	t.Cleanup(r.Close)
	return r
}

func residentCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// A resident context keeps its state between calls; a call cut short by
// its deadline or the heap cap costs the isolate, and the next call gets a
// fresh one with its setup run again.
func TestResidentKeepsStateAndSurvivesAttacks(t *testing.T) {
	r := newTestResident(t)
	ctx := context.Background()
	for _, want := range []string{"1", "2"} {
		if got, err := r.Call(ctx, "next", "", 0); err != nil || got != want {
			t.Fatalf("next = %q, %v; want %q", got, err, want)
		}
	}
	if _, err := r.Call(ctx, "fail", "boom", 0); residentCode(err) != CodeEval {
		t.Fatalf("fail: %v, want EVAL_ERROR", err)
	}
	if got, _ := r.Call(ctx, "next", "", 0); got != "3" {
		t.Fatalf("an exception cost the state: next = %q", got)
	}
	if _, err := r.Call(ctx, "spin", "", 50*time.Millisecond); residentCode(err) != CodeTimeout {
		t.Fatalf("spin: %v, want TIMEOUT", err)
	}
	if got, err := r.Call(ctx, "next", "", 0); err != nil || got != "1" {
		t.Fatalf("after a timeout: next = %q, %v; want a fresh isolate's 1", got, err)
	}
	if _, err := r.Call(ctx, "hog", "", time.Minute); residentCode(err) != CodeHeapLimit {
		t.Fatalf("hog: %v, want HEAP_LIMIT", err)
	}
	if got, err := r.Call(ctx, "next", "", 0); err != nil || got != "1" {
		t.Fatalf("after the heap cap: next = %q, %v; want a fresh isolate's 1", got, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.Call(cctx, "next", "", 0); residentCode(err) != CodeCancelled {
		t.Fatalf("cancelled: %v, want CANCELLED", err)
	}
}

// memCodeCache is a ResidentCodeCache in memory that records what the
// resident did with it.
type memCodeCache struct {
	data             []byte
	loaded, rejected int
	stored           [][]byte
}

func (m *memCodeCache) Load() []byte { return m.data }
func (m *memCodeCache) Loaded(ok bool) {
	if ok {
		m.loaded++
	} else {
		m.rejected++
	}
}
func (m *memCodeCache) Store(data []byte) { m.stored = append(m.stored, data) }

// A setup script's code cache is stored once the setup has run (with the
// functions the setup called, compiled lazily), given to V8 by the next
// process, and made again when V8 rejects what it was given.
func TestResidentCodeCache(t *testing.T) {
	const setup = `function lazy(n) { let s = 0; for (let i = 0; i < n; i++) s += i; return s; }
globalThis.sum = (n) => String(lazy(Number(n)));
sum(10);`
	run := func(cache *memCodeCache) {
		t.Helper()
		r := NewResident(ResidentOptions{HeapMB: 32, Setup: []ResidentScript{{Origin: "setup.js",
			Source: func() (string, error) { return setup, nil }, CodeCache: cache}}})
		defer r.Close()
		if got, err := r.Call(context.Background(), "sum", "4", 0); err != nil || got != "6" {
			t.Fatalf("sum = %q, %v", got, err)
		}
	}
	first := &memCodeCache{}
	run(first)
	if len(first.stored) != 1 || first.loaded+first.rejected != 0 {
		t.Fatalf("no cache to load: %+v, want one stored", first)
	}
	second := &memCodeCache{data: first.stored[0]}
	run(second)
	if second.loaded != 1 || len(second.stored) != 0 {
		t.Fatalf("a good cache: %+v, want it loaded and none stored", second)
	}
	third := &memCodeCache{data: []byte("not a code cache")}
	run(third)
	if third.rejected != 1 || len(third.stored) != 1 {
		t.Fatalf("a bad cache: %+v, want it rejected and a new one stored", third)
	}
}
