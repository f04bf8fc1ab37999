package v8sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testPool is shared by the tests of this package; runs are independent.
var testPool = sync.OnceValue(func() *Pool { return NewPool(Options{Workers: 4}) })

func runJob(t *testing.T, job Job, host Host) (Result, error) {
	t.Helper()
	return testPool().Run(context.Background(), job, host)
}

func mustValue(t *testing.T, job Job, host Host) string {
	t.Helper()
	job.AwaitResult = true
	res, err := runJob(t, job, host)
	if err != nil {
		t.Fatalf("run %q: %v", job.Source, err)
	}
	return string(res.Value)
}

func wantCode(t *testing.T, err error, code Code) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v (%T), want *Error with code %s", err, err, code)
	}
	if e.Code != code {
		t.Fatalf("code = %s (%s), want %s", e.Code, e.Message, code)
	}
	return e
}

func TestRun_ResultSerialization(t *testing.T) {
	cases := map[string]string{
		`1+1`:                          `2`,
		`({a: [1, "x", null]})`:        `{"a":[1,"x",null]}`,
		`undefined`:                    `null`,
		`(async () => ({ok: true}))()`: `{"ok":true}`,
		`Promise.resolve("done")`:      `"done"`,
		`(() => { const m = new Map(); return [...[3, 1, 2]].sort() })()`: `[1,2,3]`,
	}
	for src, want := range cases {
		if got := mustValue(t, Job{Source: src}, nil); got != want {
			t.Errorf("%s = %s, want %s", src, got, want)
		}
	}
}

func TestRun_DenyByDefault(t *testing.T) {
	src := `["require","process","fetch","console","setTimeout","setInterval","queueMicrotask","WebAssembly","Deno","Bun"].filter(n => typeof globalThis[n] !== "undefined")`
	if got := mustValue(t, Job{Source: src}, nil); got != `[]` {
		t.Fatalf("unexpected globals present: %s", got)
	}
	if got := mustValue(t, Job{Source: `typeof Atomics.wait`}, nil); got != `"function"` {
		t.Fatalf("Atomics.wait: %s", got)
	}
	// Atomics.wait must throw rather than block the worker thread.
	got := mustValue(t, Job{Source: `try { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10000); "waited" } catch (e) { e.constructor.name }`}, nil)
	if got != `"TypeError"` {
		t.Fatalf("Atomics.wait: %s", got)
	}
}

func TestRun_StateIsolation(t *testing.T) {
	mustValue(t, Job{Source: `globalThis.leak = 42; Object.prototype.polluted = 1; Array.prototype.push = null; 0`}, nil)
	for i := 0; i < 2*testPool().Workers(); i++ { // hit every worker
		got := mustValue(t, Job{Source: `[typeof leak, typeof ({}).polluted, typeof [].push]`}, nil)
		if got != `["undefined","undefined","function"]` {
			t.Fatalf("state leaked between runs: %s", got)
		}
	}
}

func TestRun_EvalErrors(t *testing.T) {
	_, err := runJob(t, Job{Source: "const x = 1;\nconst y = ;\n"}, nil)
	e := wantCode(t, err, CodeEval)
	if !strings.Contains(e.Message, "SyntaxError") || e.Line != 2 {
		t.Errorf("syntax error = %+v, want SyntaxError on line 2", e)
	}
	_, err = runJob(t, Job{Source: "\n\nnull.x", AwaitResult: true}, nil)
	e = wantCode(t, err, CodeEval)
	if !strings.Contains(e.Message, "TypeError") || e.Line != 3 {
		t.Errorf("type error = %+v, want TypeError on line 3", e)
	}
	_, err = runJob(t, Job{Source: "(async () => {\n  await 1;\n  throw new RangeError('bad range');\n})()", AwaitResult: true}, nil)
	e = wantCode(t, err, CodeEval)
	if e.Message != "RangeError: bad range" || e.Line != 3 || !strings.Contains(e.Stack, "main.js:3") {
		t.Errorf("rejection = %+v, want RangeError on line 3 with stack", e)
	}
	_, err = runJob(t, Job{Source: `Promise.reject("plain string")`, AwaitResult: true}, nil)
	if e = wantCode(t, err, CodeEval); e.Message != "plain string" {
		t.Errorf("non-error rejection message = %q", e.Message)
	}
	// A script-defined toJSON does not blank the error's description.
	_, err = runJob(t, Job{Source: `Object.prototype.toJSON = () => ({}); Promise.reject(new TypeError("still described"))`, AwaitResult: true}, nil)
	if e = wantCode(t, err, CodeEval); e.Message != "TypeError: still described" {
		t.Errorf("rejection after toJSON tampering = %q", e.Message)
	}
	_, err = runJob(t, Job{Source: `const o = {}; o.self = o; o`, AwaitResult: true}, nil)
	if e = wantCode(t, err, CodeEval); !strings.Contains(e.Message, "circular") {
		t.Errorf("cyclic result message = %q", e.Message)
	}
}

func TestRun_NeverSettlingPromiseIsAnError(t *testing.T) {
	_, err := runJob(t, Job{Source: `new Promise(() => {})`, AwaitResult: true, Limits: Limits{Timeout: 5 * time.Second}}, nil)
	e := wantCode(t, err, CodeEval)
	if !strings.Contains(e.Message, "never settle") {
		t.Fatalf("message = %q", e.Message)
	}
}

func TestRun_Timeouts(t *testing.T) {
	for name, src := range map[string]string{
		"busy loop":      `for(;;){}`,
		"microtask loop": `const f = () => Promise.resolve().then(f); f()`,
		"async loop":     `(async () => { for (;;) { await null } })()`,
		"slow regexp":    `/(a+)+$/.test("a".repeat(40) + "!")`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := runJob(t, Job{Source: src, AwaitResult: true, Limits: Limits{Timeout: 150 * time.Millisecond}}, nil)
			if e := wantCode(t, err, CodeTimeout); e.Message != "execution exceeded 150 ms" {
				t.Fatalf("message = %q", e.Message)
			}
		})
	}
	// The pool keeps working afterwards.
	if got := mustValue(t, Job{Source: `"alive"`}, nil); got != `"alive"` {
		t.Fatal(got)
	}
}

// blockingHost answers "wait" only when its context ends.
var blockingHost = HostFunc(func(ctx context.Context, name string, _ json.RawMessage) (json.RawMessage, error) {
	<-ctx.Done()
	return nil, ctx.Err()
})

func TestRun_DeadlineWhileEventLoopWaits(t *testing.T) {
	job := Job{
		Source:      `(async () => { await wait(); return "unreachable" })()`,
		Functions:   []Function{{Name: "wait", Async: true}},
		AwaitResult: true,
		Limits:      Limits{Timeout: 100 * time.Millisecond},
	}
	_, err := runJob(t, job, blockingHost)
	wantCode(t, err, CodeTimeout)
}

func TestRun_Cancellation(t *testing.T) {
	for name, job := range map[string]Job{
		"busy loop": {Source: `for(;;){}`},
		"waiting": {Source: `(async () => { await wait() })()`, AwaitResult: true,
			Functions: []Function{{Name: "wait", Async: true}}},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			_, err := testPool().Run(ctx, job, blockingHost)
			wantCode(t, err, CodeCancelled)
		})
	}
}

func TestRun_HeapBombsDoNotKillTheProcess(t *testing.T) {
	pool := NewPool(Options{Workers: 1})
	defer pool.Close()
	bombs := []string{
		`const a = []; for (;;) a.push({x: [1, 2, 3]})`,
		`const m = new Map(); for (let i = 0;; i++) m.set(i, {i})`,
		`let s = []; for (;;) s.push("x".repeat(1000) + Math.random())`,
		`const fs = []; for (;;) { const big = new Array(1000).fill(1); fs.push(() => big) }`,
		`const o = {}; for (let i = 0;; i++) o["k" + i] = [i]`,
	}
	for i, src := range bombs {
		_, err := pool.Run(context.Background(), Job{Source: src, Limits: Limits{HeapMB: 32, Timeout: 20 * time.Second}}, nil)
		if e := wantCode(t, err, CodeHeapLimit); !strings.Contains(e.Message, "32 MB") {
			t.Errorf("bomb %d message = %q", i, e.Message)
		}
		res, err := pool.Run(context.Background(), Job{Source: `[1,2,3].map(x => x * 2)`, AwaitResult: true}, nil)
		if err != nil || string(res.Value) != `[2,4,6]` {
			t.Fatalf("run after bomb %d: %s %v", i, res.Value, err)
		}
	}
}

// TestRun_HeapCapHoldsForLargeAllocations covers the allocations V8 lets
// past its own old-generation limit: one large backing store, and a fill
// that allocates and finishes between two heap polls (only the check at the
// end of the run sees it).
func TestRun_HeapCapHoldsForLargeAllocations(t *testing.T) {
	pool := NewPool(Options{Workers: 1})
	defer pool.Close()
	for _, src := range []string{
		`const a = []; for (let i = 0; i < 2e7; i++) a.push(i); a.length`,
		`new Array(2e7).fill(1).length`,
	} {
		_, err := pool.Run(context.Background(), Job{Source: src, AwaitResult: true, Limits: Limits{HeapMB: 16, Timeout: 20 * time.Second}}, nil)
		wantCode(t, err, CodeHeapLimit)
	}
}

func TestRun_ArrayBufferCap(t *testing.T) {
	src := `const keep = []; let n = 0;
	try { for (;;) { keep.push(new Uint8Array(16 << 20)); n++ } } catch (e) { [e.name, n] }`
	got := mustValue(t, Job{Source: src, Limits: Limits{ArrayBufferMB: 64}}, nil)
	if got != `["RangeError",4]` {
		t.Fatalf("got %s, want RangeError after 4 buffers of 16 MB", got)
	}
}

func TestRun_ResultSizeLimit(t *testing.T) {
	_, err := runJob(t, Job{Source: `"x".repeat(2000)`, AwaitResult: true, Limits: Limits{MaxResultBytes: 1000}}, nil)
	wantCode(t, err, CodeOutputLimit)
}

func TestRun_HostFunctions(t *testing.T) {
	var calls atomic.Int32
	host := HostFunc(func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
		calls.Add(1)
		switch name {
		case "add":
			var ab []float64
			if err := json.Unmarshal(args, &ab); err != nil {
				return nil, err
			}
			return json.RawMessage(fmt.Sprint(ab[0] + ab[1])), nil
		case "api.echo":
			return args, nil
		case "fail":
			return nil, errors.New("backend said no")
		case "stop":
			return nil, Errorf(CodeOutputLimit, "too much")
		}
		return nil, fmt.Errorf("unknown %s", name)
	})
	fns := []Function{{Name: "add"}, {Name: "api.echo", Async: true}, {Name: "fail", Async: true}, {Name: "stop"}}
	got := mustValue(t, Job{Functions: fns, Source: `(async () => [add(2, 3), await api.echo("a", {b: [1]}), api.echo.name])()`}, host)
	if got != `[5,["a",{"b":[1]}],"echo"]` {
		t.Fatalf("host results: %s", got)
	}
	got = mustValue(t, Job{Functions: fns, Source: `(async () => { try { await fail() } catch (e) { return [e instanceof Error, e.message] } })()`}, host)
	if got != `[true,"backend said no"]` {
		t.Fatalf("rejection: %s", got)
	}
	_, err := runJob(t, Job{Functions: fns, Source: `try { stop() } catch (e) {} for(;;){}`}, host)
	wantCode(t, err, CodeOutputLimit)
}

func TestRun_PromiseAllRunsHostCallsConcurrently(t *testing.T) {
	var inflight, peak atomic.Int32
	host := HostFunc(func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
		}
		return args, nil
	})
	got := mustValue(t, Job{
		Functions: []Function{{Name: "slow", Async: true}},
		Source:    `Promise.all(Array.from({length: 10}, (_, i) => slow(i))).then(r => r.flat())`,
	}, host)
	if got != `[0,1,2,3,4,5,6,7,8,9]` {
		t.Fatalf("results: %s", got)
	}
	if peak.Load() != 10 {
		t.Fatalf("peak concurrent host calls = %d, want 10", peak.Load())
	}
}

func TestRun_PanickingHostFunction(t *testing.T) {
	host := HostFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) { panic("kaboom") })
	for _, async := range []bool{false, true} {
		_, err := runJob(t, Job{Functions: []Function{{Name: "boom", Async: async}}, Source: `(async () => boom())()`, AwaitResult: true}, host)
		if e := wantCode(t, err, CodeInternal); !strings.Contains(e.Message, "kaboom") {
			t.Fatalf("message = %q", e.Message)
		}
	}
	if got := mustValue(t, Job{Source: `"still here"`}, nil); got != `"still here"` {
		t.Fatal(got)
	}
}

func TestRun_ConcurrentCallersShareThePool(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := testPool().Run(context.Background(), Job{Source: fmt.Sprintf(`globalThis.x = %d; x * 2`, i), AwaitResult: true}, nil)
			if err == nil && string(res.Value) != fmt.Sprint(i*2) {
				err = fmt.Errorf("run %d got %s", i, res.Value)
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestRun_WaitingForAWorkerHonoursContext(t *testing.T) {
	pool := NewPool(Options{Workers: 1})
	defer pool.Close()
	// The only worker is busy until its job's host call is released.
	arrived, release := make(chan struct{}), make(chan struct{})
	busy := make(chan error, 1)
	go func() {
		_, err := pool.Run(context.Background(), Job{
			Source:    `hold()`,
			Functions: []Function{{Name: "hold", Async: true}},
			Limits:    Limits{Timeout: time.Minute},
		}, HostFunc(func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
			close(arrived)
			<-release
			return nil, nil
		}))
		busy <- err
	}()
	<-arrived
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := pool.Run(ctx, Job{Source: `1`}, nil)
	wantCode(t, err, CodeTimeout)
	close(release)
	if err := <-busy; err != nil {
		t.Fatalf("the busy run: %v", err)
	}
}

func TestRun_RecyclingKeepsWorking(t *testing.T) {
	pool := NewPool(Options{Workers: 1, RecycleAfter: 3})
	defer pool.Close()
	for i := range 10 {
		res, err := pool.Run(context.Background(), Job{Source: fmt.Sprint(i), AwaitResult: true}, nil)
		if err != nil || string(res.Value) != fmt.Sprint(i) {
			t.Fatalf("run %d: %s %v", i, res.Value, err)
		}
	}
}
