package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/fairshare"
	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/procpool"
)

func init() {
	RegisterSection(Section{Title: "Per-principal sandbox workers and fair shares (issue 32)", Name: "principals", Order: 12, Run: principalsSection})
}

// principalCounts are the numbers of principals whose runs are measured.
var principalCounts = []int{1, 8, 64}

// principalsBudget is the throughput budget per cell (principal count ×
// one-at-a-time or eight-at-once), spread over rounds.
func principalsBudget(cfg ReportConfig) (budget time.Duration, rounds, samples int) {
	switch {
	case cfg.Smoke:
		return 20 * time.Millisecond, 1, 1
	case cfg.Quick:
		return 300 * time.Millisecond, 2, 3
	}
	return 1200 * time.Millisecond, 3, 8
}

// principalsSection measures what issue 32's per-principal workers and
// fair shares cost: a worker's start, a new principal's first run (with
// and without spare workers), the throughput of trivial runs spread over
// 1, 8 and 64 principals on the default process pool, and one fair-share
// acquire/release against the channel semaphore it replaced.
func principalsSection(ctx context.Context, cfg ReportConfig) (string, error) {
	budget, rounds, samples := principalsBudget(cfg)
	var b strings.Builder
	fmt.Fprintf(&b, "Process isolation's pool as the gateway builds it by default (`procpool`: %d worker processes × %d slots, `sandbox.spare_workers` %d, `sandbox.idle_workers_mb` %d), measured through its exported API in this process. A worker holds runs of one principal for life; a principal with no worker in a slot takes back its parked idle worker, or a spare, or has an idle worker of another retired and replaced.\n\n",
		procpool.DefaultProcesses, procpool.DefaultSlotsPerWorker, config.DefaultSpareWorkers, config.DefaultIdleWorkersMB)

	startCases, err := workerStartCases(ctx, cfg) // workerstart.go
	if err != nil {
		return "", fmt.Errorf("worker start: %w", err)
	}
	if err := measureWorkerStarts(ctx, startCases, 3*samples); err != nil { // a start is noisy: more samples
		return "", fmt.Errorf("worker start: %w", err)
	}
	start := startCases[0].start
	firstSpare, err := firstRuns(ctx, cfg.WorkerCommand, config.DefaultSpareWorkers, samples)
	if err != nil {
		return "", fmt.Errorf("first run with spares: %w", err)
	}
	firstBare, err := firstRuns(ctx, cfg.WorkerCommand, 0, max(samples/2, 1))
	if err != nil {
		return "", fmt.Errorf("first run without spares: %w", err)
	}
	cells, idle, err := principalThroughput(ctx, cfg.WorkerCommand, budget, rounds)
	if err != nil {
		return "", err
	}
	oneSeq := cells[cellKey{config.DefaultIdleWorkersMB, 1, 1}]
	perRun := time.Duration(float64(time.Second) / oneSeq.rate())

	b.WriteString("| figure | p50 | ÷ a warm run of one principal |\n|---|---:|---:|\n")
	fmt.Fprintf(&b, "| warm trivial run, one principal, one at a time (1 ÷ its throughput below) | %s ms | ×1.00 |\n", ms(perRun))
	fmt.Fprintf(&b, "| worker start (`procpool.New` of one worker: spawn, confinement, V8 up from the startup snapshot the first worker made, its first isolate and context prepared, handshake; %d samples) | %s ms | %s |\n", len(start), ms(median(start)), times(float64(median(start))/float64(perRun)))
	fmt.Fprintf(&b, "| a new principal's first run, pool at rest, %d spares (%d samples) | %s ms | %s |\n", config.DefaultSpareWorkers, len(firstSpare), ms(median(firstSpare)), times(float64(median(firstSpare))/float64(perRun)))
	fmt.Fprintf(&b, "| a new principal's first run, pool at rest, no spares (%d samples) | %s ms | %s |\n", len(firstBare), ms(median(firstBare)), times(float64(median(firstBare))/float64(perRun)))

	fmt.Fprintf(&b, "\nA worker's start by command (issue 44), the commands taking turns, each after one untimed start that makes the V8 startup snapshot the later workers of that command start from: `procpool.New` of one worker until its ready frame (spawn, confinement, Go and package start-up, V8 from the snapshot, its first isolate and context prepared, handshake), then that worker's first trivial run.\n\n")
	b.WriteString(workerStartTable(startCases))
	last := startCases[len(startCases)-1] // the dedicated binary, outside smoke runs
	fmt.Fprintf(&b, "\nThe start of %s phase by phase, %d samples: each process stamps its phases with CLOCK_MONOTONIC, which both share (`procpool.WorkerStats.Start`), and the worker its own CPU time where it can read it (before its seccomp filter, which refuses the system call). Wall times grow with the machine's load; CPU times do not.\n\n", last.name, len(last.start))
	b.WriteString(workerPhasesTable(last))

	fmt.Fprintf(&b, "\nThroughput of trivial runs (`1 + 1`) whose principals take turns round-robin, one at a time and 8 at once (the pool's 8 slots), with idle workers off (`sandbox.idle_workers_mb: 0`, the behaviour before them) and at their default; each pool first runs each of its principals once, then the six pools take turns in %d rounds, %s per cell in all. \"Ended\" is the workers ended to serve another principal (each costs a worker start in the background).\n\n", rounds, budget)
	b.WriteString("| principals | idle workers | one at a time: runs/s | ÷ 1 principal | ended per 1 000 runs | 8 at once: runs/s | ÷ 1 principal | ended per 1 000 runs |\n|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for _, n := range principalCounts {
		for _, idleMB := range idleVariants {
			fmt.Fprintf(&b, "| %d | %d MB |", n, idleMB)
			for _, c := range []int{1, 8} {
				cell, base := cells[cellKey{idleMB, n, c}], cells[cellKey{idleMB, 1, c}]
				fmt.Fprintf(&b, " %s | %s | %.1f |", rate(cell.rate()), times(base.rate()/cell.rate()), cell.retiredPerThousand())
			}
			b.WriteString("\n")
		}
	}

	if idle.n > 0 {
		fmt.Fprintf(&b, "\nAfter the 64-principal cells, %d workers were parked for their principal (idle workers): each counted for %.1f MB of its own memory against the budget, %.1f MB RSS and %.1f MB PSS on average (`/proc/<pid>/smaps_rollup`; the rest of the RSS is the binary's pages shared with the other workers).\n",
			idle.n, float64(idle.own)/float64(idle.n)/(1<<20), float64(idle.rss)/float64(idle.n)/(1<<20), float64(idle.pss)/float64(idle.n)/(1<<20))
	}

	pace, err := agentPace(ctx, cfg) // principals_pace.go
	if err != nil {
		return "", fmt.Errorf("an agent's pace: %w", err)
	}
	b.WriteString(pace)

	shares := fairShareCost(ctx, budget, rounds)
	fmt.Fprintf(&b, "\nFair shares (`internal/fairshare`, the gate of V8 slots and backend call slots): one acquire and release of a slot of 8 by 8 goroutines at once, each cycling over its part of the principals (share 4), against the buffered-channel semaphore used before; they take turns in %d rounds, %s each in all.\n\n", rounds, budget)
	b.WriteString("| gate | ns per acquire + release | ÷ channel |\n|---|---:|---:|\n")
	for _, s := range shares {
		fmt.Fprintf(&b, "| %s | %.0f | %s |\n", s.name, s.nsPerOp(), times(s.nsPerOp()/shares[0].nsPerOp()))
	}
	b.WriteString("\nWith one principal, fair shares admit at most 4 of the 8 goroutines at once (its share), so that row also measures waiting; a run holds its slot for the whole run (at least the warm run above), beside which a gate's nanoseconds do not show.\n")
	return b.String(), nil
}

// newBenchProcPool is the gateway's default process pool.
func newBenchProcPool(command []string, spares, idleMB int) (*procpool.Pool, error) {
	return procpool.New(procpool.Options{Workers: procpool.DefaultProcesses, SlotsPerWorker: procpool.DefaultSlotsPerWorker,
		SpareWorkers: spares, IdleWorkersMB: idleMB, Command: command, Logger: quietLogger})
}

// trivialRun runs `1 + 1` as principal on p.
func trivialRun(ctx context.Context, p v8sandbox.Runner, principal string) error {
	res, err := p.Run(ctx, v8sandbox.Job{Source: `1 + 1`, AwaitResult: true, Principal: principal}, nil)
	if err != nil {
		return err
	}
	if string(res.Value) != "2" {
		return fmt.Errorf("trivial run returned %s", res.Value)
	}
	return nil
}

// firstRuns times n first runs of new principals on a default pool with
// spares spare workers, each with the pool at rest (every slot serving,
// the spares started, nothing draining). The pool moves between
// principals before the first sample, so spares are wanted.
func firstRuns(ctx context.Context, command []string, spares, n int) ([]time.Duration, error) {
	p, err := newBenchProcPool(command, spares, config.DefaultIdleWorkersMB)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	i := 0
	next := func() string { i++; return fmt.Sprint("new", i) }
	for range procpool.DefaultProcesses + 1 {
		if err := trivialRun(ctx, p, next()); err != nil {
			return nil, err
		}
	}
	var out []time.Duration
	for range n {
		if err := awaitRest(ctx, p, procpool.DefaultProcesses+spares); err != nil {
			return nil, err
		}
		t0 := time.Now()
		if err := trivialRun(ctx, p, next()); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}

// restTimeout bounds the wait for a pool to come to rest.
const restTimeout = 30 * time.Second

// awaitRest waits until p has want processes and none draining. The pool
// exports no change notification, so its stats are polled (every
// millisecond: the wait is outside every timed span).
func awaitRest(ctx context.Context, p *procpool.Pool, want int) error {
	deadline := time.Now().Add(restTimeout)
	for {
		st := p.Stats()
		// Workers parked for their principal (idle workers) wait outside
		// the slots and the spares: they do not count.
		live := slices.DeleteFunc(slices.Clone(st.Workers), func(w procpool.WorkerStats) bool { return w.Idle })
		if len(live) == want && !slices.ContainsFunc(live, func(w procpool.WorkerStats) bool { return w.Draining }) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the pool did not come to rest within %s: %+v", restTimeout, st.Workers)
		}
		if err := pause(ctx, time.Millisecond); err != nil {
			return err
		}
	}
}

// idleVariants are the sandbox.idle_workers_mb values compared: off (the
// behaviour before idle workers) and the default.
var idleVariants = []int{0, config.DefaultIdleWorkersMB}

// cellKey is a throughput cell: idle budget × principals × concurrency.
type cellKey struct{ idleMB, principals, concurrency int }

// cell accumulates a cell's runs over rounds.
type cell struct {
	runs    int64
	elapsed time.Duration
	retired uint64
}

func (c cell) rate() float64 {
	if c.elapsed <= 0 {
		return 0
	}
	return float64(c.runs) / c.elapsed.Seconds()
}

func (c cell) retiredPerThousand() float64 {
	if c.runs == 0 {
		return 0
	}
	return float64(c.retired) * 1000 / float64(c.runs)
}

// principalThroughput measures every cell on one default pool per idle
// budget and principal count; each pool first runs each of its principals
// once (so that idle workers measure their steady state, not their
// filling), then the pools take turns in rounds (rotating order).
func principalThroughput(ctx context.Context, command []string, budget time.Duration, rounds int) (map[cellKey]cell, idleWorkers, error) {
	type poolKey struct{ idleMB, principals int }
	var keys []poolKey
	for _, idleMB := range idleVariants {
		for _, n := range principalCounts {
			keys = append(keys, poolKey{idleMB, n})
		}
	}
	pools := make([]*procpool.Pool, len(keys))
	defer func() {
		for _, p := range pools {
			if p != nil {
				p.Close()
			}
		}
	}()
	counters := make([]atomic.Uint64, len(keys))
	for i, k := range keys {
		p, err := newBenchProcPool(command, config.DefaultSpareWorkers, k.idleMB)
		if err != nil {
			return nil, idleWorkers{}, err
		}
		pools[i] = p
		for j := range k.principals { // V8 warm in the workers; each principal seen once
			if err := trivialRun(ctx, p, fmt.Sprint("p", j)); err != nil {
				return nil, idleWorkers{}, err
			}
		}
	}
	cells := map[cellKey]cell{}
	var idle idleWorkers
	for round := range rounds {
		for k := range keys {
			i := (k + round) % len(keys)
			key, p := keys[i], pools[i]
			n := key.principals
			for _, c := range []int{1, 8} {
				before := p.Stats().Rebound
				runs, elapsed, err := throughput(ctx, c, budget/time.Duration(rounds), func() error {
					return trivialRun(ctx, p, fmt.Sprint("p", (counters[i].Add(1)-1)%uint64(n)))
				})
				if err != nil {
					return nil, idleWorkers{}, fmt.Errorf("%d principals, %d at once, idle workers %d MB: %w", n, c, key.idleMB, err)
				}
				ck := cellKey{key.idleMB, n, c}
				sum := cells[ck]
				sum.runs += runs
				sum.elapsed += elapsed
				sum.retired += p.Stats().Rebound - before
				cells[ck] = sum
			}
			if key.idleMB > 0 && n == principalCounts[len(principalCounts)-1] {
				idle = parkedWorkers(p)
			}
		}
	}
	return cells, idle, nil
}

// idleWorkers sums what a pool's parked workers hold.
type idleWorkers struct {
	n             int
	own, rss, pss int64
}

// parkedWorkers reads the memory of p's parked workers.
func parkedWorkers(p *procpool.Pool) idleWorkers {
	st := p.Stats()
	out := idleWorkers{own: st.IdleBytes}
	for _, w := range st.Workers {
		if w.Idle {
			out.n++
			out.rss += w.RSSBytes
			out.pss += readPSS(w.PID)
		}
	}
	return out
}

// readPSS returns the proportional set size of process pid (0 if unknown).
func readPSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "Pss:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// gateCost is one gate's acquire + release measurement.
type gateCost struct {
	name    string
	ops     int64
	elapsed time.Duration
}

func (g gateCost) nsPerOp() float64 {
	if g.ops == 0 {
		return 0
	}
	return float64(g.elapsed.Nanoseconds()) / float64(g.ops)
}

// gateGoroutines acquire and release at once (the pool's 8 slots).
const gateGoroutines = 8

// fairShareCost measures the channel semaphore and fair shares with 1, 8
// and 64 principals, taking turns in rounds: wall time per acquire +
// release with gateGoroutines goroutines, as Go's RunParallel reports it.
func fairShareCost(ctx context.Context, budget time.Duration, rounds int) []gateCost {
	const capacity = 8
	type gate struct {
		name    string
		acquire func(g, i int) (release func(), err error)
	}
	sem := make(chan struct{}, capacity)
	gates := []gate{{"channel semaphore (before)", func(int, int) (func(), error) {
		sem <- struct{}{}
		return func() { <-sem }, nil
	}}}
	for _, n := range principalCounts {
		s := fairshare.New(fairshare.Options{Capacity: capacity, Share: capacity / 2})
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("principal:p%d", i)
		}
		gates = append(gates, gate{fmt.Sprintf("fair shares, %d principal%s", n, plural(n)), func(g, i int) (func(), error) {
			// Goroutine g cycles over the principals g, g+8, g+16…
			mine := max((n-g+gateGoroutines-1)/gateGoroutines, 1)
			return s.Acquire(ctx, keys[(g+(i%mine)*gateGoroutines)%n])
		}})
	}
	out := make([]gateCost, len(gates))
	for i, g := range gates {
		out[i].name = g.name
	}
	for round := range rounds {
		for k := range gates {
			i := (k + round) % len(gates)
			ops, elapsed := parallelOps(budget/time.Duration(rounds), gates[i].acquire)
			out[i].ops += ops
			out[i].elapsed += elapsed
		}
	}
	return out
}

// parallelOps runs acquire and release from gateGoroutines goroutines
// until budget has passed (checking the clock every 256 operations) and
// returns the operations and the wall time.
func parallelOps(budget time.Duration, acquire func(g, i int) (func(), error)) (int64, time.Duration) {
	var (
		total atomic.Int64
		wg    sync.WaitGroup
		stop  atomic.Bool
	)
	start := time.Now()
	deadline := start.Add(budget)
	for g := range gateGoroutines {
		wg.Go(func() {
			n := 0
			for !stop.Load() {
				for range 256 {
					release, err := acquire(g, n)
					if err != nil {
						stop.Store(true)
						break
					}
					release()
					n++
				}
				if time.Now().After(deadline) {
					stop.Store(true)
				}
			}
			total.Add(int64(n))
		})
	}
	wg.Wait()
	return total.Load(), time.Since(start)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// median returns the median of samples (0 for none).
func median(samples []time.Duration) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	return s[len(s)/2]
}
