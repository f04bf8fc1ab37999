package procpool

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/v8sandbox"
)

// BenchmarkPrincipals measures what keeping principals on workers of their
// own costs (issue 32): a worker's start (spawn, confinement, V8 up, the
// handshake: what a principal waits for when it gets a fresh worker), and
// trivial runs round-robin over 1, 8 and 64 principals on the default pool
// (2 workers × 4 slots, the defaults of sandbox.spare_workers and
// sandbox.idle_workers_mb), one run
// at a time ("seq") and eight at once ("par"). One principal is the old
// behaviour: the pool never retires a worker for it, and chooses workers as
// it always did (and starts no spare).
//
//	go test -run '^$' -bench Principals -benchtime 200x ./v8sandbox/procpool/
func BenchmarkPrincipals(b *testing.B) {
	b.Run("start", func(b *testing.B) {
		p := newTestPool(b, Options{Workers: 1, SlotsPerWorker: DefaultSlotsPerWorker})
		for b.Loop() {
			pr, err := p.start(0)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			pr.shutdown()
			b.StartTimer()
		}
	})
	// A new principal's first run on a pool at rest (every slot serving,
	// the spares ready, nothing draining): what spares hide. The pool has
	// moved between principals once before, so spares are wanted.
	b.Run("first-run", func(b *testing.B) {
		spares := config.DefaultSpareWorkers
		p := newTestPool(b, Options{Workers: DefaultProcesses, SlotsPerWorker: DefaultSlotsPerWorker, SpareWorkers: spares})
		atRest := func() bool {
			st := p.Stats()
			for _, w := range st.Workers {
				if w.Draining {
					return false
				}
			}
			return len(st.Workers) == DefaultProcesses+spares
		}
		i := 0
		run := func() {
			i++
			job := v8sandbox.Job{Source: `1 + 1`, AwaitResult: true, Principal: fmt.Sprint("new", i)}
			if res, err := p.Run(context.Background(), job, nil); err != nil || string(res.Value) != "2" {
				b.Fatal(res.Value, err)
			}
		}
		for range DefaultProcesses + 1 {
			run()
		}
		for b.Loop() {
			b.StopTimer()
			if !awaitState(p, workerStartTimeout, atRest) {
				b.Fatalf("the pool never came to rest: %+v", p.Stats())
			}
			b.StartTimer()
			run()
		}
	})
	for _, n := range []int{1, 8, 64} {
		for _, mode := range []string{"seq", "par"} {
			b.Run(fmt.Sprintf("%s/principals=%d", mode, n), func(b *testing.B) {
				p := newTestPool(b, Options{Workers: DefaultProcesses, SlotsPerWorker: DefaultSlotsPerWorker, SpareWorkers: config.DefaultSpareWorkers,
					IdleWorkersMB: config.DefaultIdleWorkersMB})
				jobs := make([]v8sandbox.Job, n)
				for i := range jobs {
					jobs[i] = v8sandbox.Job{Source: `1 + 1`, AwaitResult: true, Principal: fmt.Sprint("p", i)}
				}
				var next atomic.Uint64
				run := func() {
					job := jobs[(next.Add(1)-1)%uint64(n)]
					if res, err := p.Run(context.Background(), job, nil); err != nil || string(res.Value) != "2" {
						b.Fatal(res.Value, err)
					}
				}
				if mode == "seq" {
					for b.Loop() {
						run()
					}
				} else {
					b.SetParallelism(4) // 8 goroutines on 2 CPUs: the pool's 8 slots
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							run()
						}
					})
				}
				st := p.Stats()
				b.ReportMetric(float64(st.Rebound)/float64(b.N), "rebinds/op")
				b.ReportMetric(float64(st.Spawned)/float64(b.N), "spawns/op")
				b.ReportMetric(float64(st.Resumed)/float64(b.N), "resumes/op")
			})
		}
	}
}
