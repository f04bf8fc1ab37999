package procpool

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/isogate/isogate/v8sandbox"
)

// BenchmarkTrivialRunThread and BenchmarkTrivialRunProcess compare the
// per-run cost of thread isolation (v8sandbox.Pool) and process isolation
// (this package) for a trivial script, one run at a time.
func BenchmarkTrivialRunThread(b *testing.B) {
	pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 1, Logger: quietLogger(b)})
	defer pool.Close()
	benchTrivial(b, pool)
}

func BenchmarkTrivialRunProcess(b *testing.B) {
	benchTrivial(b, newTestPool(b, Options{Workers: 1, SlotsPerWorker: 1}))
}

func benchTrivial(b *testing.B, r v8sandbox.Runner) {
	job := v8sandbox.Job{Source: `1 + 1`, AwaitResult: true}
	b.ReportAllocs()
	for b.Loop() {
		if res, err := r.Run(context.Background(), job, nil); err != nil || string(res.Value) != "2" {
			b.Fatal(res.Value, err)
		}
	}
}

// BenchmarkHostCall{Thread,Process}: 100 sequential sync host calls per run;
// ns/call is the bridge's per-call cost.
func BenchmarkHostCallThread(b *testing.B) {
	pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 1, Logger: quietLogger(b)})
	defer pool.Close()
	benchHostCalls(b, pool)
}

func BenchmarkHostCallProcess(b *testing.B) {
	benchHostCalls(b, newTestPool(b, Options{Workers: 1, SlotsPerWorker: 1}))
}

// BenchmarkAsyncHostCall{Thread,Process}: 100 sequential awaited async host
// calls per run (code mode's tools are async); ns/call is the round trip.
func BenchmarkAsyncHostCallThread(b *testing.B) {
	pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 1, Logger: quietLogger(b)})
	defer pool.Close()
	benchAsyncHostCalls(b, pool)
}

func BenchmarkAsyncHostCallProcess(b *testing.B) {
	benchAsyncHostCalls(b, newTestPool(b, Options{Workers: 1, SlotsPerWorker: 1}))
}

func benchHostCalls(b *testing.B, r v8sandbox.Runner) {
	job := v8sandbox.Job{Source: `let s = 0; for (let i = 0; i < 100; i++) s += echo(i)[0]; s`, AwaitResult: true,
		Functions: []v8sandbox.Function{{Name: "echo"}}}
	benchCalls(b, r, job)
}

func benchAsyncHostCalls(b *testing.B, r v8sandbox.Runner) {
	job := v8sandbox.Job{Source: `(async () => { let s = 0; for (let i = 0; i < 100; i++) s += (await echo(i))[0]; return s })()`,
		AwaitResult: true, Functions: []v8sandbox.Function{{Name: "echo", Async: true}}}
	benchCalls(b, r, job)
}

func benchCalls(b *testing.B, r v8sandbox.Runner, job v8sandbox.Job) {
	host := v8sandbox.HostFunc(func(_ context.Context, _ string, args json.RawMessage) (json.RawMessage, error) {
		return args, nil
	})
	for b.Loop() {
		if res, err := r.Run(context.Background(), job, host); err != nil || string(res.Value) != "4950" {
			b.Fatal(res.Value, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/call")
}

// BenchmarkLargeHostValueProcess: one sync host call per run returning a
// 1 MB JSON value, in a worker process (the value crosses the pipe).
func BenchmarkLargeHostValueProcess(b *testing.B) {
	p := newTestPool(b, Options{Workers: 1, SlotsPerWorker: 1})
	v := json.RawMessage(`{"items":[` + strings.Repeat(`{"id":12345,"name":"some name here","tags":["a","b"]},`, 20000) + `{}]}`)
	host := v8sandbox.HostFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) { return v, nil })
	job := v8sandbox.Job{Source: `big().items.length`, AwaitResult: true, Functions: []v8sandbox.Function{{Name: "big"}}}
	b.SetBytes(int64(len(v)))
	for b.Loop() {
		if res, err := p.Run(context.Background(), job, host); err != nil || string(res.Value) != "20001" {
			b.Fatal(res.Value, err)
		}
	}
}

// TestSoak runs 10 000 mixed runs through a default-sized process pool and
// reports the RSS of the parent and the workers at start and end. It is
// skipped unless ISOGATE_SOAK=1 (it takes about a minute or two).
//
//	ISOGATE_SOAK=1 go test -run TestSoak -v -timeout 30m ./v8sandbox/procpool/
func TestSoak(t *testing.T) {
	if os.Getenv("ISOGATE_SOAK") != "1" {
		t.Skip("set ISOGATE_SOAK=1 to run the soak test")
	}
	total := 10000
	if n, err := fmt.Sscan(os.Getenv("ISOGATE_SOAK_RUNS"), &total); n != 1 || err != nil {
		total = 10000
	}
	p := newTestPool(t, Options{})
	report := func(when string) {
		parent, _ := readRSS(os.Getpid())
		st := p.Stats()
		var workers []string
		var sum int64
		for _, w := range st.Workers {
			workers = append(workers, fmt.Sprintf("%d:%dMB", w.PID, w.RSSBytes>>20))
			sum += w.RSSBytes
		}
		t.Logf("%-5s parent RSS %d MB; workers %v (total %d MB); spawned %d crashed %d killed %d recycled %d",
			when, parent>>20, workers, sum>>20, st.Spawned, st.Crashed, st.Killed, st.Recycled)
	}
	report("start")

	host := v8sandbox.HostFunc(func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
		return args, nil
	})
	kinds := []struct {
		name   string
		weight int
		job    v8sandbox.Job
		want   v8sandbox.Code
	}{
		{"trivial", 80, v8sandbox.Job{Source: `[1, 2, 3].map((x) => x * 2)`, AwaitResult: true}, corpusOK},
		{"host calls", 14, v8sandbox.Job{Source: `(async () => { let s = 0; for (let i = 0; i < 20; i++) s += (await a(i))[0] + s2(i)[0]; return s })()`,
			AwaitResult: true, Functions: []v8sandbox.Function{{Name: "a", Async: true}, {Name: "s2"}}}, corpusOK},
		{"timeout", 4, v8sandbox.Job{Source: `for (;;) {}`, Limits: v8sandbox.Limits{Timeout: 50 * time.Millisecond}}, v8sandbox.CodeTimeout},
		{"heap bomb", 2, v8sandbox.Job{Source: `const a = []; for (;;) a.push(new Array(100).fill(1.5))`,
			Limits: v8sandbox.Limits{HeapMB: 16, Timeout: 20 * time.Second}}, v8sandbox.CodeHeapLimit},
	}
	var picks []int
	for i, k := range kinds {
		for range k.weight {
			picks = append(picks, i)
		}
	}
	var (
		next     atomic.Int64
		mu       sync.Mutex
		counts   = map[string]int{}
		failures = map[string]int{}
		wg       sync.WaitGroup
	)
	start := time.Now()
	for range 8 { // as many callers as the pool has slots
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(total) {
				k := kinds[picks[rand.IntN(len(picks))]]
				_, err := p.Run(context.Background(), k.job, host)
				got := corpusOK
				if err != nil {
					got = cmp.Or(v8sandbox.CodeOf(err), v8sandbox.CodeInternal)
				}
				mu.Lock()
				counts[k.name]++
				if got != k.want {
					key := fmt.Sprintf("%s→%s", k.name, got)
					if failures[key] == 0 {
						t.Logf("first %s: %v", key, err)
					}
					failures[key]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("%d runs in %v: %v", total, time.Since(start).Round(time.Millisecond), counts)
	report("end")
	if len(failures) > 0 {
		t.Errorf("unexpected outcomes: %v", failures)
	}
}

const corpusOK v8sandbox.Code = "OK"

// BenchmarkTrivialSpaced{Thread,Process}: trivial runs 2 ms apart, as
// benchreport samples latency (every thread asleep when a run starts);
// p50-µs is the median run.
func BenchmarkTrivialSpacedThread(b *testing.B) {
	pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 1, Logger: quietLogger(b)})
	defer pool.Close()
	benchSpaced(b, pool)
}

func BenchmarkTrivialSpacedProcess(b *testing.B) {
	benchSpaced(b, newTestPool(b, Options{Workers: 1, SlotsPerWorker: 1}))
}

func benchSpaced(b *testing.B, r v8sandbox.Runner) {
	job := v8sandbox.Job{Source: `1 + 1`, AwaitResult: true}
	var took []time.Duration
	for b.Loop() {
		b.StopTimer()
		time.Sleep(2 * time.Millisecond) // pacing, as benchreport's latency sampling
		b.StartTimer()
		start := time.Now()
		if res, err := r.Run(context.Background(), job, nil); err != nil || string(res.Value) != "2" {
			b.Fatal(res.Value, err)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
}
