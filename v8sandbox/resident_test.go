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
