package v8sandbox

import (
	"context"
	"strings"
	"testing"

	v8 "rogchap.com/v8go"
)

// statefulPrelude leaves state of every kind a prelude can leave: a
// top-level binding behind a closure, a var, a global and a change to a
// built-in's prototype. Run once in a fresh context, each is at its first
// value.
const statefulPrelude = `let calls = 0;
globalThis.bump = () => ++calls;
var preludeVar = (typeof preludeVar === "number" ? preludeVar : 0) + 1;
Array.prototype.preludeRuns = (Array.prototype.preludeRuns ?? 0) + 1;
`

// statefulProgram reports what the prelude left and every global name,
// then leaves state of its own.
const statefulProgram = `const seen = [bump(), bump(), preludeVar, [].preludeRuns,
	Object.getOwnPropertyNames(globalThis).sort().join(",")];
globalThis.leftByRun = 1;
Array.prototype.leftByRun = 1;
seen`

// Every run sees the context a fresh one would be: the prelude run exactly
// once in it, none of an earlier run's state, the same globals. The first
// run prepares its context on the spot, the later ones take the context
// prepared between runs, and the isolate is recycled on the way; the
// prelude is compiled once per isolate, and a prelude that does not compile
// fails every run it is given to without spoiling the next prelude.
func TestPreparedContextsAreFresh(t *testing.T) {
	pool := NewPool(Options{Workers: 1, RecycleAfter: 3})
	defer pool.Close()
	run := func(prelude string) (string, error) {
		res, err := pool.Run(context.Background(), Job{Source: statefulProgram, Prelude: prelude, AwaitResult: true}, nil)
		return string(res.Value), err
	}
	first, err := run(statefulPrelude)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first, `[1,2,1,1,"`) || strings.Contains(first, "leftByRun") {
		t.Fatalf("first run saw %s", first)
	}
	isolate := 0 // the worker's count of isolates made: names its isolate
	var compiled *v8.UnboundScript
	isolates := 0
	for i := 1; i < 7; i++ {
		got, err := run(statefulPrelude)
		if err != nil || got != first {
			t.Fatalf("run %d saw %s (%v), the first %s", i, got, err, first)
		}
		w := pool.idle.take()
		if w.isolates == isolate && w.prelude.script != compiled {
			t.Errorf("run %d compiled the prelude again on the same isolate", i)
		}
		if w.isolates != isolate {
			isolates++
		}
		isolate, compiled = w.isolates, w.prelude.script
		pool.idle.put(w)
	}
	if isolates < 2 {
		t.Fatalf("the runs used %d isolates, want a recycled one too", isolates)
	}
	for i := range 2 {
		_, err := run("let broken = (")
		if e, ok := err.(*Error); !ok || e.Code != CodeInternal || !strings.Contains(e.Message, "prelude failed") {
			t.Fatalf("broken prelude, run %d: %#v", i, err)
		}
	}
	if got, err := run(statefulPrelude); err != nil || got != first {
		t.Fatalf("after a broken prelude: %s (%v), the first %s", got, err, first)
	}
}
