package runcode

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	v8 "rogchap.com/v8go"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/v8sandbox"
)

// benchCode logs and returns a value that exercises the console's inspect
// and the result sanitizer (nested objects, Map, Set, Date, BigInt).
const benchCode = `console.log("n=%d", 3, {a: [1, 2], m: new Map([["k", 1]])});
return {a: [1, 2, {b: "x"}], d: new Date(0), s: new Set([1]), n: 10n}`

// BenchmarkPrelude measures run_code's trusted prelude on one warm isolate,
// without the sandbox around it, in a fresh context with stand-ins for the
// host functions: "prelude" times running the prelude alone; "run" times
// benchCode alone, run by the prelude's runner through the microtask queue
// (console inspect and the result sanitizer). Making and closing the
// context is not timed.
func BenchmarkPrelude(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	iso := v8.NewIsolate()
	defer iso.Dispose()
	code, _ := json.Marshal(benchCode)
	stubs := `(() => { let last = ""; globalThis.__bench_last = () => last;
globalThis.__runcode = {console: () => 1, code: () => ` + string(code) + `, result: (e) => { last = JSON.stringify(e) }} })()`
	source := wrapSource(benchCode)
	for _, step := range []string{"prelude", "run"} {
		b.Run(step, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				ctx := v8.NewContext(iso)
				benchScript(b, ctx, stubs, "stubs.js")
				if step == "prelude" {
					b.StartTimer()
				}
				benchScript(b, ctx, prelude, "isogate:prelude.js")
				if step == "run" {
					b.StartTimer()
					benchScript(b, ctx, source, codeOrigin)
					ctx.PerformMicrotaskCheckpoint()
					b.StopTimer()
					if last := benchScript(b, ctx, "__bench_last()", "check.js"); !strings.HasPrefix(last, `{"result":`) {
						b.Fatalf("envelope %s", last)
					}
				}
				b.StopTimer()
				ctx.Close()
				b.StartTimer()
			}
		})
	}
}

func benchScript(b *testing.B, ctx *v8.Context, src, origin string) string {
	v, err := ctx.RunScript(src, origin)
	if err != nil {
		b.Fatalf("%s: %v", origin, err)
	}
	return v.String()
}

// BenchmarkRun measures one run_code run of benchCode end to end on a
// one-worker in-process pool.
func BenchmarkRun(b *testing.B) {
	pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 1})
	defer pool.Close()
	r, err := New(Options{Runner: pool, Config: config.RunCodeConfig{}})
	if err != nil {
		b.Fatal(err)
	}
	in := Input{Code: benchCode}
	b.ReportAllocs()
	for b.Loop() {
		if out := r.Run(context.Background(), in); !out.OK || len(out.Stdout) != 1 {
			b.Fatalf("%+v", out)
		}
	}
}
