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

// BenchmarkRunParts splits a tier-3 run on the sandbox side, each part on
// a pool of its own (so that every pool keeps a context prepared for its
// job) and the parts taking turns after a rest, measured as the calling
// thread's median CPU time:
//   - pool: `1` without prelude (the report's v8-pool);
//   - prelude: `1` with code mode's prelude and host functions: the
//     result goes through the prelude's serializer (jsvalue's kit);
//   - async: the program's async wrapper without the bridge's completion;
//   - trivial: the job Engine.Execute runs for `const x = 1; return x`
//     (the completion __isogate_finish included);
//   - host-call: the sandbox alone making one awaited async host call
//     (__isogate_call without the prelude), answered at once;
//   - call: one awaited tool call through the bridge, answered at once by
//     the host: the sandbox's and the bridge's share of a call through
//     tier 3 (call minus trivial; host-call minus pool is the sandbox's).
//
// Run it with:
//
//	go test -run '^$' -bench RunParts -benchtime 400x ./internal/codemode/
func BenchmarkRunParts(b *testing.B) {
	backends := make([]*backendView, 10)
	for i := range backends {
		backends[i] = &backendView{Name: fmt.Sprintf("backend-%d", i), Ident: fmt.Sprintf("backend_%d", i)}
	}
	backends[0].Tools = [][3]string{{"tool_0", "tool-0", "tool_0"}} // the prelude's name table
	p := prelude(backends, false)
	wrap := func(body string) string { return "(async function main() {\n" + body + "\n})()" }
	job := func(src string) v8sandbox.Job {
		return v8sandbox.Job{Source: src, Origin: origin, Prelude: p, Functions: bridgeFunctions, AwaitResult: true}
	}
	parts := []struct {
		name string
		job  v8sandbox.Job
		want string
	}{
		{"pool", v8sandbox.Job{Source: "1", AwaitResult: true}, "1"},
		{"prelude", job("1"), "1"},
		{"async", job(wrap("const x = 1;\nreturn x")), "1"},
		{"trivial", job(finishName + "(" + wrap("const x = 1;\nreturn x") + ")"), "1"},
		{"host-call", v8sandbox.Job{Source: wrap("const r = await " + fnCall + "(\"backend-0\", \"tool-0\", {}, 1, null);\nreturn r.ok"),
			Origin: origin, Functions: bridgeFunctions, AwaitResult: true}, "true"},
		{"call", job(finishName + "(" + wrap("const r = await backend_0.tool_0({});\nreturn r.ok") + ")"), "true"},
	}
	pools := make([]*v8sandbox.Pool, len(parts))
	for i := range pools {
		pools[i] = v8sandbox.NewPool(v8sandbox.Options{Workers: 1})
		defer pools[i].Close()
	}
	run := func(i int) error {
		r, err := pools[i].Run(context.Background(), parts[i].job, answerAtOnce{})
		if err == nil && string(r.Value) != parts[i].want {
			err = fmt.Errorf("%s: got %s", parts[i].name, r.Value)
		}
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for range 4 {
		for i := range parts {
			if err := run(i); err != nil {
				b.Fatal(err)
			}
		}
	}
	cpu := make([][]time.Duration, len(parts))
	for b.Loop() {
		for i := range parts {
			b.StopTimer()
			time.Sleep(2 * time.Millisecond)
			b.StartTimer()
			c0 := threadCPU()
			if err := run(i); err != nil {
				b.Fatal(err)
			}
			cpu[i] = append(cpu[i], threadCPU()-c0)
		}
	}
	for i, part := range parts {
		b.ReportMetric(float64(median(cpu[i]).Nanoseconds())/1e3, part.name+"-cpu-µs")
	}
}

// answerAtOnce answers a tool call with {"ok":true} and every other host
// function with nothing.
type answerAtOnce struct{}

func (answerAtOnce) Call(_ context.Context, c v8sandbox.HostCall) v8sandbox.HostReply {
	if c.Name == fnCall {
		return v8sandbox.HostReply{Value: []byte(`{"ok":true}`), Checked: true}
	}
	return v8sandbox.HostReply{}
}
