package codemode

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/codemode/output"
	"github.com/isogate/isogate/v8sandbox"
)

// BenchmarkTrivialWrapper splits a trivial tier-3 run (`const x = 1;
// return x`, 10 tools) into what the engine adds and what the pool does:
//
//   - engine: Engine.Execute, the whole tier-3 path;
//   - engine-job: the very job Execute hands the pool (bridge prelude,
//     functions, wrapped source, the run's host table), run on the pool
//     directly: Execute minus this is the engine's Go-side wrapper;
//   - pool: the pool's own trivial run (`1`, no prelude), what bench's
//     v8-pool row measures.
//
// Each sample starts after a gap at rest (the previous run's context is
// tidied and the next one prepared off the measured path, as between a
// real caller's requests) and reports the median CPU time of the calling
// thread (the run executes on it: far steadier than wall time on a shared
// machine) as cpu-µs, and the median wall time as wall-µs.
//
//	go test -run '^$' -bench TrivialWrapper -benchtime 400x ./internal/codemode/
func BenchmarkTrivialWrapper(b *testing.B) {
	pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 2})
	defer pool.Close()
	capture := &jobCapture{Runner: pool}
	e, err := New(Options{Runner: capture, Catalog: FromCatalog(benchCatalog(10)), Caller: sessionCaller{},
		Output: output.DefaultOptions(), Logger: discardLogger()})
	if err != nil {
		b.Fatal(err)
	}
	req := Request{Code: "const x = 1;\nreturn x"}
	if r := e.Execute(context.Background(), req); r.IsError || r.Tier != TierV8 || r.Text != "1" {
		b.Fatalf("%s %s", r.Tier, r.Text)
	}
	job, host := capture.last()
	cases := []struct {
		name string
		run  func() error
	}{
		{"engine", func() error {
			if r := e.Execute(context.Background(), req); r.IsError || r.Text != "1" {
				return fmt.Errorf("%s", r.Text)
			}
			return nil
		}},
		{"engine-job", func() error {
			_, err := pool.Run(context.Background(), job, host)
			return err
		}},
		{"pool", func() error {
			_, err := pool.Run(context.Background(), v8sandbox.Job{Source: `1`, AwaitResult: true}, nil)
			return err
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for range 4 { // every worker prepared for this job's shape
				if err := c.run(); err != nil {
					b.Fatal(err)
				}
			}
			var cpu, wall []time.Duration
			for b.Loop() {
				b.StopTimer()
				time.Sleep(3 * time.Millisecond) // at rest: the previous run's tidy-up is done
				b.StartTimer()
				c0, w0 := threadCPU(), time.Now()
				if err := c.run(); err != nil {
					b.Fatal(err)
				}
				cpu, wall = append(cpu, threadCPU()-c0), append(wall, time.Since(w0))
			}
			b.ReportMetric(float64(median(cpu).Nanoseconds())/1e3, "cpu-µs")
			b.ReportMetric(float64(median(wall).Nanoseconds())/1e3, "wall-µs")
		})
	}
}

// benchCatalog is n tools spread over 10 backends.
func benchCatalog(n int) *catalog.Catalog {
	cat := catalog.New()
	perBackend := max(n/10, 1)
	for be := 0; be*perBackend < n; be++ {
		var tools []*mcp.Tool
		for i := 0; i < perBackend && be*perBackend+i < n; i++ {
			tools = append(tools, &mcp.Tool{Name: fmt.Sprintf("tool-%d", i), Description: "A tool.",
				InputSchema: map[string]any{"type": "object"}})
		}
		cat.SetBackend(fmt.Sprintf("backend-%d", be), nil, tools)
	}
	return cat
}

// jobCapture remembers the last job and host it ran.
type jobCapture struct {
	v8sandbox.Runner
	mu   sync.Mutex
	job  v8sandbox.Job
	host v8sandbox.Host
}

func (c *jobCapture) Run(ctx context.Context, job v8sandbox.Job, host v8sandbox.Host) (v8sandbox.Result, error) {
	c.mu.Lock()
	c.job, c.host = job, host
	c.mu.Unlock()
	return c.Runner.Run(ctx, job, host)
}

func (c *jobCapture) last() (v8sandbox.Job, v8sandbox.Host) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.job, c.host
}

// threadCPU is the CPU time the calling OS thread has used.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic(err)
	}
	return time.Duration(ts.Nano())
}

func median(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// BenchmarkEngineWrapperGo is the Go side of a trivial tier-3 run alone:
// Engine.Execute on a runner that answers at once (1), so that every
// nanosecond and allocation measured is the engine's own wrapper
// (classification, compile, slot, host table, shaping, record, log line).
//
//	go test -run '^$' -bench EngineWrapperGo -benchmem ./internal/codemode/
func BenchmarkEngineWrapperGo(b *testing.B) {
	e, err := New(Options{Runner: instantRunner{}, Catalog: FromCatalog(benchCatalog(10)), Caller: sessionCaller{},
		Output: output.DefaultOptions(), Logger: discardLogger()})
	if err != nil {
		b.Fatal(err)
	}
	req := Request{Code: "const x = 1;\nreturn x"}
	b.ReportAllocs()
	for b.Loop() {
		if r := e.Execute(context.Background(), req); r.IsError || r.Text != "1" {
			b.Fatalf("%s %s", r.Tier, r.Text)
		}
	}
}

// instantRunner answers every job with the value 1 without running it.
type instantRunner struct{ v8sandbox.Runner }

func (instantRunner) Run(context.Context, v8sandbox.Job, v8sandbox.Host) (v8sandbox.Result, error) {
	return v8sandbox.Result{Value: []byte("1")}, nil
}
