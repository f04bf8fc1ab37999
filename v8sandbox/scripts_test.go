package v8sandbox

import (
	"context"
	"fmt"
	"testing"
)

// A source run again is not compiled again; each run still starts from a
// fresh context (what one run left in globals, var declarations or
// prototypes is gone in the next), a source that fails to compile fails
// every time, and the cache keeps at most cachedScripts scripts.
func TestCompiledScriptsAreReusedNotTheirState(t *testing.T) {
	pool := NewPool(Options{Workers: 1})
	defer pool.Close()
	run := func(src string) (string, error) {
		res, err := pool.Run(context.Background(), Job{Source: src, AwaitResult: true}, nil)
		return string(res.Value), err
	}
	src := `globalThis.n = (globalThis.n ?? 0) + 1;
var v = (typeof v === "number" ? v : 0) + 1;
Array.prototype.seen = (Array.prototype.seen ?? 0) + 1;
[n, v, [].seen]`
	for i := range 3 {
		if got, err := run(src); err != nil || got != "[1,1,1]" {
			t.Fatalf("run %d: %s %v, want [1,1,1]", i, got, err)
		}
	}
	w := pool.idle.take()
	if len(w.scripts.scripts) != 1 {
		t.Fatalf("%d scripts cached after one source ran three times", len(w.scripts.scripts))
	}
	pool.idle.put(w)
	for i := range 2 {
		_, err := run(`return (`)
		if e, ok := err.(*Error); !ok || e.Code != CodeEval || !e.Compile {
			t.Fatalf("syntax error, run %d: %#v", i, err)
		}
	}
	for i := range 2 * cachedScripts {
		if got, err := run(fmt.Sprint(i)); err != nil || got != fmt.Sprint(i) {
			t.Fatalf("source %d: %s %v", i, got, err)
		}
	}
	w = pool.idle.take()
	defer func() { pool.idle.put(w) }()
	if len(w.scripts.scripts) > cachedScripts {
		t.Fatalf("%d scripts cached, the bound is %d", len(w.scripts.scripts), cachedScripts)
	}
}
