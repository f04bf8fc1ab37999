package v8sandbox

import (
	"context"
	"encoding/json"
	"testing"
)

// BenchmarkRunWarmIsolate measures a fresh context plus a trivial script on a
// warm isolate: the engine's normal path.
func BenchmarkRunWarmIsolate(b *testing.B) {
	benchmarkTrivial(b, Options{Workers: 1})
}

// BenchmarkRunFreshIsolate measures the same run when every job gets a new
// isolate (the design of gateways that start a runtime per call).
func BenchmarkRunFreshIsolate(b *testing.B) {
	benchmarkTrivial(b, Options{Workers: 1, RecycleAfter: 1})
}

func benchmarkTrivial(b *testing.B, opts Options) {
	pool := NewPool(opts)
	defer pool.Close()
	job := Job{Source: `1 + 1`, AwaitResult: true}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pool.Run(ctx, job, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHostCall measures the bridge: 1 000 sequential host calls per run
// (sync and async); ns/call is the per-call overhead.
func BenchmarkHostCall(b *testing.B) {
	host := HostFunc(func(_ context.Context, _ string, args json.RawMessage) (json.RawMessage, error) {
		return args, nil
	})
	for _, mode := range []struct {
		name  string
		async bool
		src   string
	}{
		{"sync", false, `let s = 0; for (let i = 0; i < 1000; i++) s += echo(i)[0]; s`},
		{"async", true, `(async () => { let s = 0; for (let i = 0; i < 1000; i++) s += (await echo(i))[0]; return s })()`},
	} {
		b.Run(mode.name, func(b *testing.B) {
			pool := NewPool(Options{Workers: 1})
			defer pool.Close()
			job := Job{Source: mode.src, AwaitResult: true, Functions: []Function{{Name: "echo", Async: mode.async}}}
			b.ReportAllocs()
			for b.Loop() {
				res, err := pool.Run(context.Background(), job, host)
				if err != nil || string(res.Value) != "499500" {
					b.Fatalf("%s %v", res.Value, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/call")
		})
	}
}
