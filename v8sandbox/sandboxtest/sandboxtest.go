// Package sandboxtest is the behaviour suite every [v8sandbox.Runner] must
// pass: the in-process [v8sandbox.Pool] and the process-isolated
// procpool.Pool run the same tests and the same hostile corpus, so the two
// cannot drift apart (results, typed errors, host calls, limits,
// cancellation).
//
//	func TestRunnerSuite(t *testing.T) {
//		sandboxtest.Run(t, func(t *testing.T, slots int) v8sandbox.Runner {
//			return v8sandbox.NewPool(v8sandbox.Options{Workers: slots})
//		})
//	}
package sandboxtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/procpool/corpus"
)

// NewRunner returns a fresh runner able to run slots jobs at once. The
// suite closes it (Close must tolerate a second call).
type NewRunner func(t *testing.T, slots int) v8sandbox.Runner

// Options adjust the suite to a runner.
type Options struct {
	// InProcess skips the corpus cases marked process-only (they would
	// abort or wedge the test process).
	InProcess bool
}

// timeoutCaseDeadline is the deadline of the corpus cases whose only
// accepted outcome is TIMEOUT (the gateway's corpus test uses the same).
const timeoutCaseDeadline = 300 * time.Millisecond

// hangSlack is how long past its deadline a corpus case may take before it
// counts as a hang: a guard, not a performance assertion (the cases that
// ignore termination are slow on a loaded machine under -race).
const hangSlack = 15 * time.Second

// Run runs the suite against the runners newRunner returns.
func Run(t *testing.T, newRunner NewRunner, opts Options) {
	fresh := func(t *testing.T, slots int) v8sandbox.Runner {
		r := newRunner(t, slots)
		t.Cleanup(r.Close)
		return r
	}
	shared := fresh(t, sharedSlots)
	for _, c := range []struct {
		name string
		test func(t *testing.T, r v8sandbox.Runner)
	}{
		{"ResultSerialization", resultSerialization},
		{"DenyByDefault", denyByDefault},
		{"StateIsolation", stateIsolation},
		{"NothingPlantedSurvivesTheRun", nothingPlantedSurvives},
		{"EvalErrors", evalErrors},
		{"NeverSettlingPromiseIsAnError", neverSettling},
		{"Timeouts", timeouts},
		{"DeadlineWhileEventLoopWaits", deadlineWhileWaiting},
		{"Cancellation", cancellation},
		{"ArrayBufferCap", arrayBufferCap},
		{"ResultSizeLimit", resultSizeLimit},
		{"HostFunctions", hostFunctions},
		{"HostValuesArriveIntact", hostValuesIntact},
		{"PromiseAllRunsHostCallsConcurrently", promiseAll},
		{"PanickingHostFunction", panickingHost},
		{"ConcurrentCallers", concurrentCallers},
	} {
		t.Run(c.name, func(t *testing.T) { c.test(t, shared) })
	}
	t.Run("HeapBombsLeaveTheRunnerWorking", func(t *testing.T) { heapBombs(t, fresh(t, 1)) })
	t.Run("HeapCapHoldsForLargeAllocations", func(t *testing.T) { heapCapLarge(t, fresh(t, 1)) })
	t.Run("WaitingForASlotHonoursContext", func(t *testing.T) { waitingForASlot(t, fresh(t, 1)) })
	t.Run("HostileCorpus", func(t *testing.T) { hostileCorpus(t, fresh(t, 2), opts.InProcess) })
}

// sharedSlots is the size of the runner most tests share.
const sharedSlots = 4

// Value runs job on r, awaiting its result, and returns the result's JSON;
// an error fails the test.
func Value(t testing.TB, r v8sandbox.Runner, job v8sandbox.Job, host v8sandbox.Host) string {
	t.Helper()
	job.AwaitResult = true
	res, err := r.Run(context.Background(), job, host)
	if err != nil {
		t.Fatalf("run %q: %v", job.Source, err)
	}
	return string(res.Value)
}

// WantCode fails the test unless err is a *v8sandbox.Error with code, and
// returns it.
func WantCode(t testing.TB, err error, code v8sandbox.Code) *v8sandbox.Error {
	t.Helper()
	var e *v8sandbox.Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v (%T), want *v8sandbox.Error with code %s", err, err, code)
	}
	if e.Code != code {
		t.Fatalf("code = %s (%s), want %s", e.Code, e.Message, code)
	}
	return e
}

func resultSerialization(t *testing.T, r v8sandbox.Runner) {
	for src, want := range map[string]string{
		`1+1`:                          `2`,
		`({a: [1, "x", null]})`:        `{"a":[1,"x",null]}`,
		`undefined`:                    `null`,
		`(async () => ({ok: true}))()`: `{"ok":true}`,
		`Promise.resolve("done")`:      `"done"`,
		`[...[3, 1, 2]].sort()`:        `[1,2,3]`,
		`"<b>&</b>"`:                   `"<b>&</b>"`,           // byte for byte: no HTML escaping on the way
		`"\u2028 é \ud800"`:            "\"\u2028 é \\ud800\"", // raw U+2028, escaped lone surrogate
	} {
		if got := Value(t, r, v8sandbox.Job{Source: src}, nil); got != want {
			t.Errorf("%s = %s, want %s", src, got, want)
		}
	}
}

func denyByDefault(t *testing.T, r v8sandbox.Runner) {
	src := `["require","process","fetch","console","setTimeout","setInterval","queueMicrotask","WebAssembly","Deno","Bun"].filter(n => typeof globalThis[n] !== "undefined")`
	if got := Value(t, r, v8sandbox.Job{Source: src}, nil); got != `[]` {
		t.Fatalf("unexpected globals present: %s", got)
	}
	// Atomics.wait exists but throws rather than block the thread.
	got := Value(t, r, v8sandbox.Job{Source: `try { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10000); "waited" } catch (e) { e.constructor.name }`}, nil)
	if got != `"TypeError"` {
		t.Fatalf("Atomics.wait: %s", got)
	}
}

func stateIsolation(t *testing.T, r v8sandbox.Runner) {
	Value(t, r, v8sandbox.Job{Source: `globalThis.leak = 42; Object.prototype.polluted = 1; Array.prototype.push = null; 0`}, nil)
	for range 2 * sharedSlots { // reach every worker
		got := Value(t, r, v8sandbox.Job{Source: `[typeof leak, typeof ({}).polluted, typeof [].push]`}, nil)
		if got != `["undefined","undefined","function"]` {
			t.Fatalf("state leaked between runs: %s", got)
		}
	}
}

// nothingPlantedSurvives: every context starts from the same startup
// snapshot (bootstrap and trusted scripts already run), so a run that
// plants globals, changes prototypes, keeps closures and tampers with what
// the snapshot holds must leave nothing for the next run, on any worker,
// with or without host functions and a prelude.
func nothingPlantedSurvives(t *testing.T, r v8sandbox.Runner) {
	prelude := `globalThis.tick = (() => { let n = 0; return () => ++n; })();`
	fns := []v8sandbox.Function{{Name: "api.echo"}, {Name: "later", Async: true}}
	host := v8sandbox.HostFunc(func(_ context.Context, _ string, args json.RawMessage) (json.RawMessage, error) {
		return args, nil
	})
	plant := v8sandbox.Job{Prelude: prelude, Functions: fns, Source: `
		tick(); tick();
		globalThis.leak = 42;
		var declared = "var";
		globalThis.keep = (() => { let secret = 7; return () => secret++; })();
		Object.prototype.polluted = 1;
		Array.prototype.push = null;
		JSON.stringify = () => "hijacked";
		Promise.prototype.then = function () { throw new Error("hijacked then"); };
		Function.prototype.call = null;
		Object.defineProperty(Object.prototype, "toJSON", { value: () => "hijacked", configurable: true });
		api.echo.marker = "planted";
		api.planted = true;
		Error.prototype.name = "Planted";
		for (const k of ["__isogate_bootstrap", "__isogate_trust", "__isogate_set_serializer", "__isogate_kit"]) globalThis[k] = () => "planted";
		1`}
	probe := v8sandbox.Job{Prelude: prelude, Functions: fns, AwaitResult: true, Source: `(async () => [
		tick(), typeof leak, typeof declared, typeof keep, typeof ({}).polluted, typeof [].push,
		JSON.stringify({a: 1}), typeof Function.prototype.call, api.echo.marker === undefined,
		typeof api.planted, new Error("x").name, (await later("ok"))[0], api.echo(5)[0],
		typeof __isogate_bootstrap, typeof __isogate_trust, typeof __isogate_set_serializer, typeof __isogate_kit,
	])()`}
	const want = `[1,"undefined","undefined","undefined","undefined","function","{\"a\":1}","function",true,"undefined","Error","ok",5,"undefined","undefined","undefined","undefined"]`
	for range 2 {
		for range 2 * sharedSlots { // reach every worker
			if _, err := r.Run(context.Background(), plant, host); err != nil {
				t.Fatal(err)
			}
		}
		for range 2 * sharedSlots {
			res, err := r.Run(context.Background(), probe, host)
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Value) != want {
				t.Fatalf("state survived a run:\n got %s\nwant %s", res.Value, want)
			}
		}
	}
}

func evalErrors(t *testing.T, r v8sandbox.Runner) {
	run := func(job v8sandbox.Job) error {
		_, err := r.Run(context.Background(), job, nil)
		return err
	}
	e := WantCode(t, run(v8sandbox.Job{Source: "const x = 1;\nconst y = ;\n"}), v8sandbox.CodeEval)
	if !strings.Contains(e.Message, "SyntaxError") || e.Line != 2 || !e.Compile {
		t.Errorf("syntax error = %+v, want SyntaxError on line 2, at compile time", e)
	}
	e = WantCode(t, run(v8sandbox.Job{Source: "\n\nnull.x", AwaitResult: true}), v8sandbox.CodeEval)
	if !strings.Contains(e.Message, "TypeError") || e.Line != 3 || e.Compile {
		t.Errorf("type error = %+v, want TypeError on line 3", e)
	}
	e = WantCode(t, run(v8sandbox.Job{Source: "(async () => {\n  await 1;\n  throw new RangeError('bad range');\n})()", AwaitResult: true}), v8sandbox.CodeEval)
	if e.Message != "RangeError: bad range" || e.Line != 3 || !strings.Contains(e.Stack, "main.js:3") {
		t.Errorf("rejection = %+v, want RangeError on line 3 with stack", e)
	}
	if e = WantCode(t, run(v8sandbox.Job{Source: `Promise.reject("plain string")`, AwaitResult: true}), v8sandbox.CodeEval); e.Message != "plain string" {
		t.Errorf("non-error rejection message = %q", e.Message)
	}
	// A script-defined toJSON does not blank the error's description.
	e = WantCode(t, run(v8sandbox.Job{Source: `Object.prototype.toJSON = () => ({}); Promise.reject(new TypeError("still described"))`, AwaitResult: true}), v8sandbox.CodeEval)
	if e.Message != "TypeError: still described" {
		t.Errorf("rejection after toJSON tampering = %q", e.Message)
	}
	if e = WantCode(t, run(v8sandbox.Job{Source: `const o = {}; o.self = o; o`, AwaitResult: true}), v8sandbox.CodeEval); !strings.Contains(e.Message, "circular") {
		t.Errorf("cyclic result message = %q", e.Message)
	}
}

func neverSettling(t *testing.T, r v8sandbox.Runner) {
	_, err := r.Run(context.Background(), v8sandbox.Job{Source: `new Promise(() => {})`, AwaitResult: true,
		Limits: v8sandbox.Limits{Timeout: 5 * time.Second}}, nil)
	if e := WantCode(t, err, v8sandbox.CodeEval); !strings.Contains(e.Message, "never settle") {
		t.Fatalf("message = %q", e.Message)
	}
}

func timeouts(t *testing.T, r v8sandbox.Runner) {
	for name, src := range map[string]string{
		"busy loop":      `for(;;){}`,
		"microtask loop": `const f = () => Promise.resolve().then(f); f()`,
		"async loop":     `(async () => { for (;;) { await null } })()`,
		"slow regexp":    `/(a+)+$/.test("a".repeat(40) + "!")`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := r.Run(context.Background(), v8sandbox.Job{Source: src, AwaitResult: true,
				Limits: v8sandbox.Limits{Timeout: 150 * time.Millisecond}}, nil)
			if e := WantCode(t, err, v8sandbox.CodeTimeout); e.Message != "execution exceeded 150 ms" {
				t.Fatalf("message = %q", e.Message)
			}
		})
	}
	if got := Value(t, r, v8sandbox.Job{Source: `"alive"`}, nil); got != `"alive"` {
		t.Fatal(got)
	}
}

// blockingHost answers only when its context ends.
var blockingHost = v8sandbox.HostFunc(func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
	<-ctx.Done()
	return nil, ctx.Err()
})

// gatedHost blocks every call until its context ends, announcing each
// arrival.
type gatedHost struct{ arrived chan struct{} }

func (g gatedHost) Call(ctx context.Context, _ v8sandbox.HostCall) v8sandbox.HostReply {
	g.arrived <- struct{}{}
	<-ctx.Done()
	return v8sandbox.Reply(nil, ctx.Err())
}

func deadlineWhileWaiting(t *testing.T, r v8sandbox.Runner) {
	_, err := r.Run(context.Background(), v8sandbox.Job{
		Source:      `(async () => { await wait(); return "unreachable" })()`,
		Functions:   []v8sandbox.Function{{Name: "wait", Async: true}},
		AwaitResult: true,
		Limits:      v8sandbox.Limits{Timeout: 100 * time.Millisecond},
	}, blockingHost)
	WantCode(t, err, v8sandbox.CodeTimeout)
}

func cancellation(t *testing.T, r v8sandbox.Runner) {
	t.Run("waiting on a host call", func(t *testing.T) {
		host := gatedHost{arrived: make(chan struct{}, 1)}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := r.Run(ctx, v8sandbox.Job{Source: `(async () => { await wait() })()`, AwaitResult: true,
				Functions: []v8sandbox.Function{{Name: "wait", Async: true}}, Limits: v8sandbox.Limits{Timeout: time.Minute}}, host)
			done <- err
		}()
		<-host.arrived // the script is waiting: cancel now
		cancel()
		WantCode(t, <-done, v8sandbox.CodeCancelled)
	})
	t.Run("busy loop", func(t *testing.T) {
		host := gatedHost{arrived: make(chan struct{}, 1)}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			// The sync call announces that the loop is about to start.
			_, err := r.Run(ctx, v8sandbox.Job{Source: `started(); for(;;){}`,
				Functions: []v8sandbox.Function{{Name: "started"}}, Limits: v8sandbox.Limits{Timeout: time.Minute}},
				v8sandbox.HostFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
					host.arrived <- struct{}{}
					return nil, nil
				}))
			done <- err
		}()
		<-host.arrived
		cancel()
		WantCode(t, <-done, v8sandbox.CodeCancelled)
	})
}

func arrayBufferCap(t *testing.T, r v8sandbox.Runner) {
	src := `const keep = []; let n = 0;
	try { for (;;) { keep.push(new Uint8Array(16 << 20)); n++ } } catch (e) { [e.name, n] }`
	got := Value(t, r, v8sandbox.Job{Source: src, Limits: v8sandbox.Limits{ArrayBufferMB: 64}}, nil)
	if got != `["RangeError",4]` {
		t.Fatalf("got %s, want RangeError after 4 buffers of 16 MB", got)
	}
}

func resultSizeLimit(t *testing.T, r v8sandbox.Runner) {
	_, err := r.Run(context.Background(), v8sandbox.Job{Source: `"x".repeat(2000)`, AwaitResult: true,
		Limits: v8sandbox.Limits{MaxResultBytes: 1000}}, nil)
	WantCode(t, err, v8sandbox.CodeOutputLimit)
}

func hostFunctions(t *testing.T, r v8sandbox.Runner) {
	handler := func(v json.RawMessage, err error) v8sandbox.Handler {
		return func(context.Context, json.RawMessage) (json.RawMessage, error) { return v, err }
	}
	denied := &v8sandbox.HostError{Name: "DeniedError", Code: "TOOL_DENIED", Message: "not this one",
		Data: json.RawMessage(`{"tool":"x"}`)}
	host := new(v8sandbox.Table).
		Sync("add", func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
			var ab []float64
			if err := json.Unmarshal(args, &ab); err != nil {
				return nil, err
			}
			return json.RawMessage(fmt.Sprint(ab[0] + ab[1])), nil
		}).
		Async("api.echo", func(_ context.Context, args json.RawMessage) (json.RawMessage, error) { return args, nil }).
		Sync("nothing", handler(nil, nil)).
		Async("fail", handler(nil, errors.New("backend said no"))).
		Sync("stop", handler(nil, v8sandbox.Errorf(v8sandbox.CodeOutputLimit, "too much"))).
		Sync("invalid", handler(json.RawMessage(`{not json`), nil)).
		Sync("denied", handler(nil, denied)).
		Async("deniedAsync", handler(nil, fmt.Errorf("wrapped: %w", denied))).
		Async("badData", handler(nil, &v8sandbox.HostError{Message: "m", Data: json.RawMessage(`{`)}))
	fns := host.Functions()
	job := func(src string) v8sandbox.Job { return v8sandbox.Job{Source: src, Functions: fns} }

	got := Value(t, r, job(`(async () => [add(2, 3), await api.echo("a", {b: [1]}), api.echo.name, typeof nothing()])()`), host)
	if got != `[5,["a",{"b":[1]}],"echo","undefined"]` {
		t.Fatalf("host results: %s", got)
	}
	res, err := r.Run(context.Background(), job(`add(1, 2); add(3, 4); api.echo(1)`), host)
	if err != nil || res.HostCalls != 3 {
		t.Fatalf("host call count: %+v %v", res, err)
	}
	got = Value(t, r, job(`(async () => { try { await fail() } catch (e) { return [e instanceof Error, e.message] } })()`), host)
	if got != `[true,"backend said no"]` {
		t.Fatalf("rejection: %s", got)
	}
	// A typed host error reaches the script as data, sync or async.
	for _, call := range []string{`denied()`, `await deniedAsync()`} {
		got = Value(t, r, job(`(async () => { try { `+call+` } catch (e) { return [e instanceof Error, e.name, e.code, e.message, e.data] } })()`), host)
		if got != `[true,"DeniedError","TOOL_DENIED","not this one",{"tool":"x"}]` {
			t.Fatalf("typed host error through %s: %s", call, got)
		}
	}
	// Defined on the error, not assigned: a setter the script put on
	// Error.prototype does not intercept them.
	got = Value(t, r, job(`Object.defineProperty(Error.prototype, "code", {set() { throw 1 }, get() { return "forged" }});
		(() => { try { denied() } catch (e) { return e.code } })()`), host)
	if got != `"TOOL_DENIED"` {
		t.Fatalf("code under a hostile Error.prototype: %s", got)
	}
	// Data that is not JSON could not cross the process boundary: both
	// runners end the run with INTERNAL rather than dropping it.
	_, err = r.Run(context.Background(), job(`(async () => { try { await badData() } catch (e) {} })()`), host)
	WantCode(t, err, v8sandbox.CodeInternal)
	_, err = r.Run(context.Background(), job(`try { stop() } catch (e) {} for(;;){}`), host)
	WantCode(t, err, v8sandbox.CodeOutputLimit)
	_, err = r.Run(context.Background(), job(`invalid()`), host)
	WantCode(t, err, v8sandbox.CodeInternal)
	_, err = r.Run(context.Background(), v8sandbox.Job{Source: `f()`, Functions: []v8sandbox.Function{{Name: "f"}}}, nil)
	WantCode(t, err, v8sandbox.CodeEval) // "no host serves function", thrown into the script
}

// hostValuesIntact: a host function's JSON value reaches the script as
// V8's own JSON.parse reads the same text, whichever way the bytes travel
// (sync or async, in process or over a worker's pipe): non-ASCII text, raw
// U+2028, lone and paired surrogate escapes, a NUL escape, numbers beyond
// float64 and beyond int64, deep nesting, and a value of a megabyte.
func hostValuesIntact(t *testing.T, r v8sandbox.Runner) {
	deep := strings.Repeat(`{"a":[`, 400) + `"bottom"` + strings.Repeat(`]}`, 400)
	big := `[` + strings.TrimSuffix(strings.Repeat(`{"id":12345,"name":"élément ✓","ok":true},`, 20000), ",") + `]`
	for _, text := range []string{
		`"héllo wörld ☃ 😀 \u00e9 中文"`,
		"\"line\u2028sep \u2029\"",
		"\"raw sep\"",
		`"\ud800 lone, \udc00 lone, \ud83d\ude00 pair, \u0000 nul"`,
		`[1e400, -1e400, 12345678901234567890, 9007199254740993, 5e-324, 1.7976931348623157e308, -0, 0.1]`,
		deep,
		big,
	} {
		host := new(v8sandbox.Table).
			Sync("syncValue", func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.RawMessage(text), nil }).
			Async("asyncValue", func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.RawMessage(text), nil })
		literal, err := json.Marshal(text)
		if err != nil {
			t.Fatal(err)
		}
		job := v8sandbox.Job{Functions: host.Functions(), Source: `(async () => {
			const want = JSON.stringify(JSON.parse(` + string(literal) + `));
			const sync = JSON.stringify(syncValue()), async = JSON.stringify(await asyncValue());
			return [sync === want, async === want, want.length, sync.slice(0, 80)];
		})()`}
		got := Value(t, r, job, host)
		if !strings.HasPrefix(got, `[true,true,`) {
			t.Errorf("value %.60s… arrived changed: %.300s", text, got)
		}
	}
}

func promiseAll(t *testing.T, r v8sandbox.Runner) {
	var inflight, peak atomic.Int32
	all := make(chan struct{})
	var closeAll sync.Once
	host := v8sandbox.HostFunc(func(ctx context.Context, _ string, args json.RawMessage) (json.RawMessage, error) {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		if n == 10 {
			closeAll.Do(func() { close(all) })
		}
		select { // every call waits until all ten are in flight at once
		case <-all:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return args, nil
	})
	got := Value(t, r, v8sandbox.Job{
		Functions: []v8sandbox.Function{{Name: "slow", Async: true}},
		Source:    `Promise.all(Array.from({length: 10}, (_, i) => slow(i))).then(r => r.flat())`,
		Limits:    v8sandbox.Limits{Timeout: time.Minute},
	}, host)
	if got != `[0,1,2,3,4,5,6,7,8,9]` {
		t.Fatalf("results: %s", got)
	}
	if peak.Load() != 10 {
		t.Fatalf("peak concurrent host calls = %d, want 10", peak.Load())
	}
}

func panickingHost(t *testing.T, r v8sandbox.Runner) {
	host := v8sandbox.HostFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) { panic("kaboom") })
	for _, async := range []bool{false, true} {
		_, err := r.Run(context.Background(), v8sandbox.Job{Functions: []v8sandbox.Function{{Name: "boom", Async: async}},
			Source: `(async () => boom())()`, AwaitResult: true}, host)
		if e := WantCode(t, err, v8sandbox.CodeInternal); !strings.Contains(e.Message, "kaboom") {
			t.Fatalf("message = %q", e.Message)
		}
	}
	if got := Value(t, r, v8sandbox.Job{Source: `"still here"`}, nil); got != `"still here"` {
		t.Fatal(got)
	}
}

func concurrentCallers(t *testing.T, r v8sandbox.Runner) {
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 32 {
		wg.Go(func() {
			res, err := r.Run(context.Background(), v8sandbox.Job{Source: fmt.Sprintf(`globalThis.x = %d; x * 2`, i), AwaitResult: true}, nil)
			if err == nil && string(res.Value) != fmt.Sprint(i*2) {
				err = fmt.Errorf("run %d got %s", i, res.Value)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func heapBombs(t *testing.T, r v8sandbox.Runner) {
	for i, src := range []string{
		`const a = []; for (;;) a.push({x: [1, 2, 3]})`,
		`const m = new Map(); for (let i = 0;; i++) m.set(i, {i})`,
		`let s = []; for (;;) s.push("x".repeat(1000) + Math.random())`,
		`const fs = []; for (;;) { const big = new Array(1000).fill(1); fs.push(() => big) }`,
		`const o = {}; for (let i = 0;; i++) o["k" + i] = [i]`,
	} {
		_, err := r.Run(context.Background(), v8sandbox.Job{Source: src,
			Limits: v8sandbox.Limits{HeapMB: 32, Timeout: 20 * time.Second}}, nil)
		if e := WantCode(t, err, v8sandbox.CodeHeapLimit); !strings.Contains(e.Message, "32 MB") {
			t.Errorf("bomb %d message = %q", i, e.Message)
		}
		if got := Value(t, r, v8sandbox.Job{Source: `[1,2,3].map(x => x * 2)`}, nil); got != `[2,4,6]` {
			t.Fatalf("run after bomb %d: %s", i, got)
		}
	}
}

// heapCapLarge covers the allocations V8 lets past its own old-generation
// limit: one large backing store, and a fill that allocates and finishes
// between two heap polls.
func heapCapLarge(t *testing.T, r v8sandbox.Runner) {
	for _, src := range []string{
		`const a = []; for (let i = 0; i < 2e7; i++) a.push(i); a.length`,
		`new Array(2e7).fill(1).length`,
	} {
		_, err := r.Run(context.Background(), v8sandbox.Job{Source: src, AwaitResult: true,
			Limits: v8sandbox.Limits{HeapMB: 16, Timeout: 20 * time.Second}}, nil)
		WantCode(t, err, v8sandbox.CodeHeapLimit)
	}
}

func waitingForASlot(t *testing.T, r v8sandbox.Runner) {
	host := gatedHost{arrived: make(chan struct{}, 1)}
	hold, release := context.WithCancel(context.Background())
	busy := make(chan error, 1)
	go func() {
		_, err := r.Run(hold, v8sandbox.Job{Source: `hold()`, Functions: []v8sandbox.Function{{Name: "hold", Async: true}},
			Limits: v8sandbox.Limits{Timeout: time.Minute}}, host)
		busy <- err
	}()
	<-host.arrived // the only slot is taken
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := r.Run(ctx, v8sandbox.Job{Source: `1`}, nil)
	WantCode(t, err, v8sandbox.CodeTimeout)
	release()
	WantCode(t, <-busy, v8sandbox.CodeCancelled)
}

// CorpusDir is the hostile corpus (v8sandbox/procpool/testdata/hostile).
func CorpusDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "procpool", "testdata", "hostile")
}

func hostileCorpus(t *testing.T, r v8sandbox.Runner, inProcess bool) {
	cases, err := corpus.Load(CorpusDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 40 {
		t.Fatalf("corpus has %d cases, want at least 40", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if inProcess && c.ProcessOnly {
				t.Skip("process-only: would abort or wedge the test process")
			}
			if slices.Equal(c.Expect, []v8sandbox.Code{v8sandbox.CodeTimeout}) {
				// A case that must end in TIMEOUT runs until its deadline
				// whatever it is: the bound is what the case proves, not its
				// length (1 s by default, a wait and no work).
				c.Timeout = min(c.Timeout, timeoutCaseDeadline)
			}
			start := time.Now()
			res, err := r.Run(context.Background(), c.Job(), corpus.NewHost())
			elapsed := time.Since(start)
			if cerr := c.Check(res, err); cerr != nil {
				t.Errorf("%s: %v", c.Name, cerr)
			}
			if limit := c.Timeout + hangSlack; elapsed > limit {
				t.Errorf("%s took %v, over its deadline %v + %v", c.Name, elapsed.Round(time.Millisecond), c.Timeout, hangSlack)
			}
			if got := Value(t, r, v8sandbox.Job{Source: `[1, 2, 3].map((x) => x * 2)`}, nil); got != `[2,4,6]` {
				t.Fatalf("normal job after %s: %s", c.Name, got)
			}
		})
	}
}
