package v8sandbox

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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
	async := `(async () => { let s = 0; for (let i = 0; i < 1000; i++) s += (await echo(i))[0]; return s })()`
	for _, mode := range []struct {
		name  string
		async bool
		src   string
		host  Host
	}{
		{"sync", false, `let s = 0; for (let i = 0; i < 1000; i++) s += echo(i)[0]; s`, host},
		{"async", true, async, host},
		// Started and awaited on the V8 thread, as a worker process's
		// lanes do: the async machinery without a goroutine hand-off.
		{"async-started", true, async, new(starterHost)},
	} {
		b.Run(mode.name, func(b *testing.B) {
			pool := NewPool(Options{Workers: 1})
			defer pool.Close()
			job := Job{Source: mode.src, AwaitResult: true, Functions: []Function{{Name: "echo", Async: mode.async}}}
			b.ReportAllocs()
			for b.Loop() {
				res, err := pool.Run(context.Background(), job, mode.host)
				if err != nil || string(res.Value) != "499500" {
					b.Fatalf("%s %v", res.Value, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/call")
		})
	}
}

// BenchmarkConcurrentTrivialRSS holds 8 workers busy with trivial runs for
// 3 s and reports the process's peak resident memory: with the engine
// telling idle isolates to collect, memory follows live data rather than
// the heap cap (issue 13's target: ≤ 150 MB).
func BenchmarkConcurrentTrivialRSS(b *testing.B) {
	const workers = 8
	pool := NewPool(Options{Workers: workers})
	defer pool.Close()
	job := Job{Source: `({a: [1, 2, 3], s: "x".repeat(100)})`, AwaitResult: true}
	var peak int64
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		var wg sync.WaitGroup
		var runs atomic.Int64
		for range workers {
			wg.Go(func() {
				for ctx.Err() == nil {
					if _, err := pool.Run(context.Background(), job, nil); err != nil {
						b.Error(err)
						return
					}
					runs.Add(1)
				}
			})
		}
		tick := time.NewTicker(50 * time.Millisecond)
		for ctx.Err() == nil {
			select {
			case <-tick.C:
				if rss := selfRSS(); rss > peak {
					peak = rss
				}
			case <-ctx.Done():
			}
		}
		tick.Stop()
		wg.Wait()
		cancel()
		b.ReportMetric(float64(runs.Load())/3, "runs/s")
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
}

// selfRSS reads this process's resident memory from /proc (0 elsewhere).
func selfRSS() int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// BenchmarkTrivialLatency measures the p50 latency of a trivial run at
// concurrency 1 on a pool of two workers: the next run finds an idle worker
// whose context is prepared, as in a gateway between requests.
func BenchmarkTrivialLatency(b *testing.B) {
	pool := NewPool(Options{Workers: 2})
	defer pool.Close()
	job := Job{Source: `1`, AwaitResult: true}
	var samples []time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := pool.Run(context.Background(), job, nil); err != nil {
			b.Fatal(err)
		}
		samples = append(samples, time.Since(start))
	}
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Microseconds()), "p50-µs")
}
