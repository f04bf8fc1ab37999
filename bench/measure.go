package bench

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// MeasureConfig bounds one measurement. Latency sampling stops at
// whichever of the count or the time budget comes first, but never below
// MinRuns.
//
// Variants measured side by side ([MeasureSideBySide]) take turns: each
// budget is split into Rounds slices and every round runs each variant for
// one slice (in a rotating order), so a burst of load from elsewhere on the
// machine hits every variant rather than one.
//
// Pooled variants hand consecutive runs to their workers in turn, so the
// warm-up ends with one concurrent round at the highest concurrency: every
// isolate exists and has compiled the workload before sampling starts.
type MeasureConfig struct {
	// Warmup sequential runs are made first and not recorded, followed by
	// a concurrent round (see above) when Warmup > 0.
	Warmup int
	// MinRuns and MaxRuns bound the latency samples.
	MinRuns, MaxRuns int
	// LatencyBudget is the time spent sampling latency, per variant.
	LatencyBudget time.Duration
	// Concurrency lists the throughput levels (goroutines issuing runs).
	Concurrency []int
	// ThroughputBudget is the time spent at each concurrency level, per
	// variant.
	ThroughputBudget time.Duration
	// Rounds is how many turns variants take (default 1).
	Rounds int
	// Gap is the pause before each latency sample (zero: back to back).
	// An agent's requests arrive far apart, with a model turn between
	// them, and a runner does its between-run work (the V8 pools prepare
	// the next context after replying) in that pause; back to back, that
	// work competes with the next run and latency measures throughput
	// instead. Throughput is always measured back to back.
	Gap time.Duration
}

// Measurement is one workload measured on one variant.
type Measurement struct {
	Variant, Workload string
	// Runs is the number of latency samples.
	Runs int
	// P50, P99 and Mean are run latencies at concurrency 1 (P99 is the
	// nearest-rank percentile: with few samples it is the maximum).
	P50, P99, Mean time.Duration
	// Throughput maps a concurrency level to completed runs per second.
	Throughput map[int]float64
	// AllocsPerRun and BytesPerRun are Go heap allocations per run (the
	// whole process, from runtime.MemStats, over the latency samples). They
	// include goja's JavaScript heap, which lives in Go, but not V8's.
	AllocsPerRun, BytesPerRun float64
	// Err is the first failure (error or wrong result), if any.
	Err string
}

// Measure runs w on v: warm-up, latency samples at concurrency 1, then
// throughput at each concurrency level. Every result is checked.
func Measure(ctx context.Context, v Variant, w *Workload, cfg MeasureConfig) Measurement {
	return MeasureSideBySide(ctx, []Variant{v}, w, cfg)[0]
}

// subject is one variant's measurement in progress.
type subject struct {
	v       Variant
	m       Measurement
	samples []time.Duration
	mallocs uint64
	bytes   uint64
	runs    map[int]int64         // concurrency → completed runs
	elapsed map[int]time.Duration // concurrency → time spent
}

func (s *subject) once(ctx context.Context, w *Workload) error {
	got, err := s.v.Run(ctx, w)
	if err != nil {
		return err
	}
	return w.Check(got)
}

func (s *subject) fail(err error) {
	if s.m.Err == "" && err != nil {
		s.m.Err = err.Error()
	}
}

// MeasureSideBySide measures w on every variant, taking turns (see
// [MeasureConfig]). A variant that fails stops being measured; the others
// go on.
func MeasureSideBySide(ctx context.Context, vs []Variant, w *Workload, cfg MeasureConfig) []Measurement {
	rounds := max(cfg.Rounds, 1)
	subs := make([]*subject, len(vs))
	for i, v := range vs {
		subs[i] = &subject{v: v, m: Measurement{Variant: v.Name(), Workload: w.Name, Throughput: map[int]float64{}},
			runs: map[int]int64{}, elapsed: map[int]time.Duration{}}
	}
	// turn calls f for every healthy subject, rotating the order by round.
	turn := func(round int, f func(s *subject)) {
		for i := range subs {
			s := subs[(i+round)%len(subs)]
			if s.m.Err == "" && ctx.Err() == nil {
				f(s)
			}
		}
	}

	top := slices.Max(append([]int{1}, cfg.Concurrency...))
	turn(0, func(s *subject) {
		for range cfg.Warmup {
			if err := s.once(ctx, w); err != nil {
				s.fail(err)
				return
			}
		}
		if cfg.Warmup > 0 && top > 1 {
			_, _, err := throughput(ctx, top, 0, func() error { return s.once(ctx, w) })
			if err != nil {
				s.fail(fmt.Errorf("warm-up: %w", err))
			}
		}
	})

	minPerRound := (cfg.MinRuns + rounds - 1) / rounds
	maxPerRound := max((cfg.MaxRuns+rounds-1)/rounds, 1)
	for round := range rounds {
		turn(round, func(s *subject) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			n := 0
			start := time.Now()
			for n < minPerRound || (n < maxPerRound && time.Since(start) < cfg.LatencyBudget/time.Duration(rounds)) {
				if err := pause(ctx, cfg.Gap); err != nil {
					s.fail(err)
					return
				}
				t0 := time.Now()
				if err := s.once(ctx, w); err != nil {
					s.fail(err)
					return
				}
				s.samples = append(s.samples, time.Since(t0))
				n++
				if ctx.Err() != nil {
					s.fail(ctx.Err())
					return
				}
			}
			runtime.ReadMemStats(&after)
			s.mallocs += after.Mallocs - before.Mallocs
			s.bytes += after.TotalAlloc - before.TotalAlloc
		})
	}

	for _, c := range cfg.Concurrency {
		for round := range rounds {
			turn(round, func(s *subject) {
				runs, elapsed, err := throughput(ctx, c, cfg.ThroughputBudget/time.Duration(rounds),
					func() error { return s.once(ctx, w) })
				if err != nil {
					s.fail(fmt.Errorf("concurrency %d: %w", c, err))
					return
				}
				s.runs[c] += runs
				s.elapsed[c] += elapsed
			})
		}
	}

	out := make([]Measurement, len(subs))
	for i, s := range subs {
		m := s.m
		if ctx.Err() != nil && m.Err == "" {
			m.Err = ctx.Err().Error()
		}
		if m.Err == "" && len(s.samples) > 0 {
			m.Runs = len(s.samples)
			m.AllocsPerRun = float64(s.mallocs) / float64(m.Runs)
			m.BytesPerRun = float64(s.bytes) / float64(m.Runs)
			sorted := slices.Clone(s.samples)
			sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
			m.P50 = Percentile(sorted, 50)
			m.P99 = Percentile(sorted, 99)
			var sum time.Duration
			for _, d := range sorted {
				sum += d
			}
			m.Mean = sum / time.Duration(len(sorted))
			for c, runs := range s.runs {
				if s.elapsed[c] > 0 {
					m.Throughput[c] = float64(runs) / s.elapsed[c].Seconds()
				}
			}
		}
		out[i] = m
	}
	return out
}

// throughput runs once from c goroutines for budget (each makes at least
// one run) and returns the completed runs and the time they took.
func throughput(ctx context.Context, c int, budget time.Duration, once func() error) (int64, time.Duration, error) {
	var (
		count    atomic.Int64
		firstErr error
		errOnce  sync.Once
		wg       sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(budget)
	for range c {
		wg.Go(func() {
			for {
				if err := once(); err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				count.Add(1)
				if time.Now().After(deadline) || ctx.Err() != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return 0, 0, firstErr
	}
	return count.Load(), time.Since(start), nil
}

// Percentile returns the nearest-rank percentile p (0–100) of sorted.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// pause waits for d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sampleInTurns times runs that take turns: each is warmed up warmup
// times, then in each of rounds rounds (the order rotating, so that a
// burst of load from elsewhere hits them all) each runs perRound times,
// SampleGap apart. It returns each run's samples, in the order of runs.
func sampleInTurns(ctx context.Context, runs []func() error, warmup, rounds, perRound int) ([][]time.Duration, error) {
	for _, run := range runs {
		for range warmup {
			if err := run(); err != nil {
				return nil, err
			}
		}
	}
	samples := make([][]time.Duration, len(runs))
	for round := range rounds {
		for k := range runs {
			i := (k + round) % len(runs)
			for range perRound {
				if err := pause(ctx, SampleGap); err != nil {
					return nil, err
				}
				t0 := time.Now()
				if err := runs[i](); err != nil {
					return nil, err
				}
				samples[i] = append(samples[i], time.Since(t0))
			}
		}
	}
	return samples, nil
}
