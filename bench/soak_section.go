package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/isogate/isogate/config"
)

func init() {
	RegisterSection(Section{Title: "Soak memory (issue 38)", Name: "soak", Order: 30, OptIn: true, Run: soakSection})
}

// Soak defaults: ISOGATE_SOAK_RUNS and ISOGATE_SOAK_SESSIONS override them.
const (
	defaultSoakRuns     = 40000
	defaultSoakSessions = 64
	// soakReference is the run count whose memory the end is compared with.
	soakReference = 10000
	// soakGoal is the largest end ÷ reference ratio the issue accepts.
	soakGoal = 1.3
)

// soakSection runs the soak (opt-in: minutes long) and reports the memory
// after soakReference runs against the end.
func soakSection(ctx context.Context, cfg ReportConfig) (string, error) {
	sc := soakConfig{Mode: config.IsolationProcess, Sessions: envInt("ISOGATE_SOAK_SESSIONS", defaultSoakSessions),
		Runs: int64(envInt("ISOGATE_SOAK_RUNS", defaultSoakRuns))}
	sc.Every = soakEvery(sc.Runs)
	samples, err := runSoak(ctx, sc, func(s soakSample) {
		cfg.progress("soak: %d runs: RSS %d MB, PSS %d MB, gateway RSS %d MB, heap in use %d MB, live heap %d MB",
			s.Runs, s.RSS>>20, s.PSS>>20, s.GatewayRSS>>20, s.HeapInuse>>20, s.HeapAlloc>>20)
	})
	if err != nil {
		return "", err
	}
	if ref, end, ok := soakEnds(samples); ok {
		cfg.Figures.Set(figSoakRatio("rss"), float64(end.RSS)/float64(ref.RSS))
		cfg.Figures.Set(figSoakRatio("pss"), float64(end.PSS)/float64(ref.PSS))
	}
	return soakReport(sc, samples), nil
}

// soakReport renders the samples, and the end ÷ reference ratios.
func soakReport(sc soakConfig, samples []soakSample) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d `call_tool_chain` runs over %d streamable-HTTP sessions (go-sdk clients, one program at a time each, cycling through %d programs: tiers 1–3, an error, a 12 kB result kept in the result store) against a gateway with the defaults (process isolation) in a child process. After every %d runs the clients pause, the gateway collects garbage, and the memory is sampled: RSS and PSS of the gateway and its sandbox worker processes summed, the gateway's own RSS, its Go heap in use (`runtime.MemStats.HeapInuse`, spans holding objects) and its live objects (`HeapAlloc`). It is opt-in: `make bench` adds it (`-with soak`); alone, `go run ./cmd/benchreport -sections soak` (`ISOGATE_SOAK_RUNS`, `ISOGATE_SOAK_SESSIONS` change its size).\n\n",
		sc.Runs, sc.Sessions, len(soakPrograms), sc.Every)
	b.WriteString("| runs | RSS (all) | PSS (all) | gateway RSS | gateway heap in use | gateway live heap | processes |\n|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range samples {
		fmt.Fprintf(&b, "| %d | %d MB | %d MB | %d MB | %.1f MB | %.1f MB | %d |\n", s.Runs, s.RSS>>20, s.PSS>>20, s.GatewayRSS>>20,
			float64(s.HeapInuse)/(1<<20), float64(s.HeapAlloc)/(1<<20), s.Procs)
	}
	ref, end, ok := soakEnds(samples)
	if !ok {
		fmt.Fprintf(&b, "\nFewer than %d runs: no ratio against the memory after %d runs.\n", soakReference, soakReference)
		return b.String()
	}
	half := soakAt(samples, end.Runs/2)
	fmt.Fprintf(&b, "\n| | end ÷ after %d runs | goal | | end ÷ after %d runs (levelling) |\n|---|---:|---:|---|---:|\n", soakReference, half.Runs)
	for _, r := range []struct {
		name            string
		ref, half, last float64
		goal            bool // the goal (the soak's memory); else where it goes
	}{
		{"RSS (all)", float64(ref.RSS), float64(half.RSS), float64(end.RSS), true},
		{"PSS (all)", float64(ref.PSS), float64(half.PSS), float64(end.PSS), true},
		{"gateway heap in use", float64(ref.HeapInuse), float64(half.HeapInuse), float64(end.HeapInuse), false},
		{"gateway live heap", float64(ref.HeapAlloc), float64(half.HeapAlloc), float64(end.HeapAlloc), false},
	} {
		ratio, goal, met := r.last/r.ref, "", ""
		if r.goal {
			goal, met = fmt.Sprintf("≤ ×%.1f", soakGoal), "met"
			if ratio > soakGoal {
				met = "not met"
			}
		}
		fmt.Fprintf(&b, "| %s | ×%.2f | %s | %s | ×%.2f |\n", r.name, ratio, goal, met, r.last/r.half)
	}
	b.WriteString("\nThe goal (issue 38) is on the soak's memory, gateway and workers together; the heap rows say where it goes. The stores of results and run records fill to their budgets (`sandbox.output.result_store_bytes` each, counted as what their entries hold) and then stay there: the gateway's heap levels once they are full, however many runs follow (the last column: the end against half-way). The Go collector lets the heap grow to about twice what is live before it collects (`GOGC=100`): `GOMEMLIMIT` caps that ([operations.md](../docs/operations.md#what-holds-the-gateways-memory)).\n")
	return b.String()
}

// soakEvery is the sampling interval of a soak of runs runs: about a
// twentieth of it, a divisor of soakReference so that one sample falls on it.
func soakEvery(runs int64) int64 {
	every := int64(1)
	for _, d := range []int64{10, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000} {
		if d <= max(runs/20, 1) {
			every = d
		}
	}
	return every
}

// soakAt returns the first sample at or past runs.
func soakAt(samples []soakSample, runs int64) soakSample {
	for _, s := range samples {
		if s.Runs >= runs {
			return s
		}
	}
	return samples[len(samples)-1]
}

// soakEnds returns the sample at soakReference runs (the first at or past
// it) and the last one.
func soakEnds(samples []soakSample) (ref, end soakSample, ok bool) {
	if len(samples) == 0 {
		return ref, end, false
	}
	ref, end = soakAt(samples, soakReference), samples[len(samples)-1]
	return ref, end, ref.Runs >= soakReference && end.Runs > ref.Runs
}

// envInt reads a positive integer from the environment, or def.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
