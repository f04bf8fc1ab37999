package bench

import (
	"math"
	"strings"
	"time"

	"github.com/isogate/isogate/config"
)

// The issue-38 targets table ("V8 ahead of goja on every row"): every goal
// of the issue, computed from figures other parts of the report measured in
// this run ([Figures]), with those figures beside it. Nothing here
// measures.

// kindRatio is the geometric mean of two p50 ratios, the headline's
// "overhead" kind: in is (trivial of the variant, trivial of the baseline,
// sequential-1000 of the variant, sequential-1000 of the baseline).
func kindRatio(in []float64) float64 { return math.Sqrt(in[0] / in[1] * in[2] / in[3]) }

// overheadInputs are kindRatio's inputs for variant against base.
func overheadInputs(variant, base string) []string {
	return []string{figP50(WorkloadTrivial, variant), figP50(WorkloadTrivial, base),
		figP50(WorkloadSeq1000, variant), figP50(WorkloadSeq1000, base)}
}

// figSoakRatio is the soak's memory at its end ÷ after soakReference runs,
// for "rss" or "pss" (gateway and workers summed), from the soak section
// (opt-in: `make bench` adds it).
func figSoakRatio(what string) string { return "soak/" + what }

// issue38Rows are the rows of the issue's goals, in its order.
func issue38Rows() []targetRow {
	thread, process := string(config.IsolationThread), string(config.IsolationProcess)
	p50 := func(w, v string) shown { return shown{"`" + w + "` `" + v + "`", figP50(w, v), millis} }
	eng := func(c, mode, label string) shown { return shown{label, figEngine(c, mode), micros} }
	rows := []targetRow{
		{
			name:   "headline \"overhead\" kind, `goja-sync` ÷ `v8-pool` (v8-pool no slower than goja)",
			inputs: overheadInputs(VariantGojaSync, VariantV8Pool), compute: kindRatio, unit: ratio,
			goal: goal{atLeast: true, bound: 1},
			beside: []shown{p50(WorkloadTrivial, VariantGojaSync), p50(WorkloadTrivial, VariantV8Pool),
				p50(WorkloadSeq1000, VariantGojaSync), p50(WorkloadSeq1000, VariantV8Pool)},
			today: "×0.62",
		},
		{
			name:   "headline \"overhead\" kind, `v8-proc` ÷ `v8-pool`",
			inputs: overheadInputs(VariantV8Proc, VariantV8Pool), compute: kindRatio, unit: ratio,
			goal:   goal{bound: 1.3},
			beside: []shown{p50(WorkloadTrivial, VariantV8Proc), p50(WorkloadSeq1000, VariantV8Proc)},
			today:  "trivial ×1.79 (0.161 / 0.090 ms)",
		},
		{
			name:   "trivial run through `Engine.Execute` ÷ the pool's trivial run (thread, side by side)",
			inputs: []string{figEngine(engineTrivial, thread), figEngine(enginePool, thread)}, compute: quotient, unit: ratio,
			goal:   goal{bound: 1.2},
			beside: []shown{eng(engineTrivial, thread, "engine"), eng(enginePool, thread, "pool"), eng(engineTrivial, process, "process: engine"), eng(enginePool, process, "pool (`v8-proc`)")},
			today:  "×1.6 (146 µs)",
		},
	}
	for _, m := range []struct {
		mode, today string
		bound       time.Duration
	}{{thread, "342 µs", 150 * time.Microsecond}, {process, "458 µs", 250 * time.Microsecond}} {
		rows = append(rows, targetRow{
			name:   "one tool call via tier 3 minus the direct call (" + m.mode + ", side by side)",
			inputs: []string{figEngine(engineOne, m.mode), figEngine(engineDirect, m.mode)}, compute: difference, unit: micros,
			goal:   goal{bound: float64(m.bound)},
			beside: []shown{eng(engineOne, m.mode, "one call"), eng(engineDirect, m.mode, "direct"), eng(engineTrivial, m.mode, "trivial run")},
			today:  m.today,
		})
	}
	rows = append(rows, targetRow{
		name:   "1 MB result through tier 3 minus the direct call (process)",
		inputs: []string{figBigTier3(process), figBigDirect(process)}, compute: difference, unit: millis,
		goal: goal{bound: float64(15 * time.Millisecond)},
		beside: []shown{{"tier 3", figBigTier3(process), millis}, {"direct call", figBigDirect(process), millis},
			{"thread: tier 3", figBigTier3(thread), millis}, {"thread: direct", figBigDirect(thread), millis}},
		today: "46 ms",
	})
	direct := shown{"direct", figEcho("direct"), millis}
	for _, m := range []struct{ mode, today string }{{process, "×2.72"}, {thread, ""}} {
		tier3 := shown{"tier 3", figEcho(m.mode + "/tier 3"), millis}
		rows = append(rows, targetRow{
			name:   "one `echo` via tier 3 over stdio ÷ direct (" + m.mode + ")",
			inputs: []string{tier3.figure, direct.figure}, compute: quotient, unit: ratio, goal: goal{bound: 1.8},
			beside: []shown{tier3, direct, {"tier 2", figEcho(m.mode + "/tier 2"), millis}}, today: m.today,
		})
	}
	for _, m := range []struct{ mode, today string }{{process, "+0.35 ms"}, {thread, ""}} {
		pass := shown{"passthrough", figEcho(m.mode + "/passthrough"), millis}
		rows = append(rows, targetRow{
			name:   "passthrough over stdio minus direct (" + m.mode + ")",
			inputs: []string{pass.figure, direct.figure}, compute: difference, unit: millis,
			goal:   goal{bound: float64(300 * time.Microsecond)},
			beside: []shown{pass, direct}, today: m.today,
		})
	}
	for _, u := range []struct{ program, today string }{
		{"trivial", "×3.32"}, {"one call", "×4.24"}, {"five parallel calls", "×2.30"}, {"10k-object compute", "×2.31"},
	} {
		utcp := shown{"UTCP", figUTCP(u.program, utcpContender), millis}
		iso := shown{"isogate process", figUTCP(u.program, isogateContender(process)), millis}
		rows = append(rows, targetRow{
			name:   "UTCP ÷ isogate (process), " + u.program + " (over stdio)",
			inputs: []string{utcp.figure, iso.figure}, compute: quotient, unit: ratio,
			goal:   goal{atLeast: true, bound: 3},
			beside: []shown{utcp, iso}, today: u.today,
		})
	}
	return append(rows,
		targetRow{
			name:   "PSS, 8 concurrent trivial runs, process (gateway + workers, peak)",
			inputs: []string{figPSSPeak(process)}, compute: first, unit: megabytes, goal: goal{bound: 150},
			beside: []shown{{"RSS", figRSSPeak(process), megabytes}, {"processes", figRSSProcs(process), number}},
			today:  "RSS 255 MB",
		},
		targetRow{
			name:   "soak: memory at the end ÷ after 10 000 runs (RSS, gateway + workers)",
			inputs: []string{figSoakRatio("rss")}, compute: first, unit: ratio, goal: goal{bound: soakGoal},
			beside: []shown{{"PSS", figSoakRatio("pss"), ratio}},
			today:  "233 → ~720 MB",
		},
	)
}

// issue38Table renders the targets table of issue 38 from f.
func issue38Table(f *Figures) string {
	var b strings.Builder
	b.WriteString("Issue 38's goals, each computed from figures measured in this run by the sections named below, with those figures beside it. The \"today\" column is the issue's own reference (its `make bench` of 2026-11-26 22:21), **not** side by side with this run.\n\n")
	writeTargetRows(&b, "issue 38", issue38Rows(), f)
	b.WriteString("\nSources: the \"overhead\" kind from the workload tables (p50 at concurrency 1); the engine rows from \"Engine wrapper and the startup snapshot (issue 38)\" (contenders taking turns); 1 MB from \"Code-mode targets (issue 13)\"; `echo` and passthrough from \"End-to-end call_tool_chain over stdio\"; UTCP from \"End to end against UTCP code-mode\"; PSS from \"RSS under process isolation (issue 26)\"; the soak from \"Soak memory (issue 38)\" (opt-in, minutes long: `make bench` adds it with `-with soak`), not measured when it did not run. Where a row is not met, [design/speed.md](../design/speed.md) says where the time goes (profiles).\n")
	return b.String()
}
