package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/v8sandbox/procpool"
)

// agentEvery is an agent's pace (issue 44): each principal sends a
// program about every agentEvery.
const agentEvery = 2 * time.Second

// agentPaceBudget is the time each of the two scenarios is measured,
// spread over rounds, and how many principals send at an agent's pace (64;
// 8 in a smoke run, which only checks the section renders).
func agentPaceBudget(cfg ReportConfig) (budget time.Duration, rounds, principals int) {
	switch {
	case cfg.Smoke:
		return 400 * time.Millisecond, 1, 8
	case cfg.Quick:
		return 12 * time.Second, 2, 64
	}
	return 40 * time.Second, 4, 64
}

// paceScenario is one side of the comparison: principals each sending a
// trivial program every every (±10 %, from a random offset).
type paceScenario struct {
	name       string
	principals int
	every      time.Duration
	pool       *procpool.Pool
	latencies  []time.Duration
	before     procpool.Stats
}

// agentPace measures issue 44's goal: the p50 latency of trivial runs when
// 64 principals each send one every ~2 s, against one principal alone
// sending at the same total rate (one every 2 s ÷ 64), each on a default
// pool (idle workers and spares at their defaults) whose principals have
// all run once; the two take turns in rounds. It reports the latencies
// and what the 64 principals' pool holds in parked workers at the end.
func agentPace(ctx context.Context, cfg ReportConfig) (string, error) {
	budget, rounds, agentPrincipals := agentPaceBudget(cfg)
	scenarios := []*paceScenario{
		{name: "1 principal alone, one program every " + ms(agentEvery/time.Duration(agentPrincipals)) + " ms", principals: 1, every: agentEvery / time.Duration(agentPrincipals)},
		{name: fmt.Sprintf("%d principals, each one program every %s", agentPrincipals, agentEvery), principals: agentPrincipals, every: agentEvery},
	}
	for _, s := range scenarios {
		p, err := newBenchProcPool(cfg.WorkerCommand, config.DefaultSpareWorkers, config.DefaultIdleWorkersMB)
		if err != nil {
			return "", err
		}
		defer p.Close()
		s.pool = p
		for j := range s.principals { // each principal has run once: its worker is warm (in a slot or parked)
			if err := trivialRun(ctx, p, fmt.Sprint("a", j)); err != nil {
				return "", err
			}
		}
		s.before = p.Stats()
	}
	for round := range rounds {
		for k := range scenarios {
			s := scenarios[(k+round)%len(scenarios)]
			lat, err := paceRound(ctx, s, budget/time.Duration(rounds))
			if err != nil {
				return "", fmt.Errorf("%s: %w", s.name, err)
			}
			s.latencies = append(s.latencies, lat...)
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "\nAn agent's pace (issue 44): trivial runs (`1 + 1`) from %d principals each sending one about every %s (±10 %%, random offsets), against one principal alone sending at the same total rate; each on its own default pool whose principals have all run once; the two take turns in %d rounds, %s each in all. A run's latency is `Pool.Run`'s.\n\n",
		agentPrincipals, agentEvery, rounds, budget)
	b.WriteString("| scenario | runs | p50 | p99 | p50 ÷ one principal alone | workers started | parked workers resumed | ended beyond the idle budget |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	base := Percentile(sorted(scenarios[0].latencies), 50)
	for _, s := range scenarios {
		l := sorted(s.latencies)
		st := s.pool.Stats()
		fmt.Fprintf(&b, "| %s | %d | %s ms | %s ms | %s | %d | %d | %d |\n", s.name, len(l), ms(Percentile(l, 50)), ms(Percentile(l, 99)),
			times(float64(Percentile(l, 50))/float64(base)), st.Spawned-s.before.Spawned, st.Resumed-s.before.Resumed, st.Evicted-s.before.Evicted)
	}
	many := scenarios[len(scenarios)-1].pool
	idle := parkedWorkers(many)
	if idle.n > 0 {
		fmt.Fprintf(&b, "\nAt the end, %d workers of the %d principals were parked (idle workers), counted for %.1f MB against the %d MB budget (`sandbox.idle_workers_mb`): per idle warm worker %.1f MB of its own memory, %.1f MB RSS and %.1f MB PSS (`/proc/<pid>/smaps_rollup`).\n",
			idle.n, agentPrincipals, float64(idle.own)/(1<<20), config.DefaultIdleWorkersMB,
			float64(idle.own)/float64(idle.n)/(1<<20), float64(idle.rss)/float64(idle.n)/(1<<20), float64(idle.pss)/float64(idle.n)/(1<<20))
	}
	return b.String(), nil
}

// paceRound runs s's principals at their pace for d and returns the
// latencies of the runs sent within it.
func paceRound(ctx context.Context, s *paceScenario, d time.Duration) ([]time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu   sync.Mutex
		lat  []time.Duration
		errs []error
		runs sync.WaitGroup
		wg   sync.WaitGroup
	)
	end := time.Now().Add(d)
	for j := range s.principals {
		principal := fmt.Sprint("a", j)
		wg.Go(func() {
			next := time.Now().Add(time.Duration(rand.Int64N(int64(s.every))))
			for {
				if next.After(end) || pause(ctx, time.Until(next)) != nil {
					return
				}
				runs.Go(func() {
					t0 := time.Now()
					err := trivialRun(ctx, s.pool, principal)
					took := time.Since(t0)
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						errs = append(errs, err)
						cancel()
						return
					}
					lat = append(lat, took)
				})
				next = next.Add(s.every*9/10 + time.Duration(rand.Int64N(int64(s.every/5))))
			}
		})
	}
	wg.Wait()
	runs.Wait()
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return lat, nil
}
