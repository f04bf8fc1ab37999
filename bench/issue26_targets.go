package bench

import (
	"fmt"
	"strings"
	"time"

	"github.com/isogate/isogate/config"
)

// The issue-26 targets table ("Speed where the default lives"): every goal
// of the issue's table, computed from figures other parts of the report
// measured in this run ([Figures]), with those figures beside it. Nothing
// here measures.

// unit formats a figure of one kind.
type unit func(v float64) string

var (
	// micros formats nanoseconds as µs with one decimal.
	micros unit = func(v float64) string { return fmt.Sprintf("%.1f µs", v/float64(time.Microsecond)) }
	// millis formats nanoseconds as ms, three significant digits.
	millis unit = func(v float64) string { return ms(time.Duration(v)) + " ms" }
	// ratio formats a quotient.
	ratio unit = func(v float64) string { return fmt.Sprintf("×%.2f", v) }
	// megabytes formats MB.
	megabytes unit = func(v float64) string { return fmt.Sprintf("%.0f MB", v) }
	// number formats a count.
	number unit = func(v float64) string { return fmt.Sprintf("%.0f", v) }
)

// goal is a target's bound: the figure must be at most (or, when atLeast,
// at least) bound.
type goal struct {
	atLeast bool
	bound   float64
}

// met reports whether v reaches the goal.
func (g goal) met(v float64) bool {
	if g.atLeast {
		return v >= g.bound
	}
	return v <= g.bound
}

// format writes the goal in u ("≤ 30.0 µs", "≥ ×3.00").
func (g goal) format(u unit) string {
	if g.atLeast {
		return "≥ " + u(g.bound)
	}
	return "≤ " + u(g.bound)
}

// shown is a recorded figure displayed beside a row's figure.
type shown struct {
	label, figure string
	unit          unit
}

// targetRow is one row of the table.
type targetRow struct {
	// name is the figure as the issue names it.
	name string
	// inputs are the recorded figures the row's figure is computed from;
	// compute combines them (in order).
	inputs  []string
	compute func(in []float64) float64
	unit    unit
	goal    goal
	// beside are the figures shown next to the row's figure.
	beside []shown
	// today is the issue's "today" value (an earlier run, not this one).
	today string
}

// Ways to compute a row's figure from its inputs.
var (
	first      = func(in []float64) float64 { return in[0] }
	quotient   = func(in []float64) float64 { return in[0] / in[1] }
	difference = func(in []float64) float64 { return in[0] - in[1] }
)

// notMeasured is the cell of a figure whose measurement did not run.
const notMeasured = "not measured in this run"

// issue26Rows are the rows of the issue's goals table, in its order.
func issue26Rows() []targetRow {
	thread, process := string(config.IsolationThread), string(config.IsolationProcess)
	procBridge := shown{"process (`v8-proc`)", figBridge(VariantV8Proc), micros}
	threadBridge := shown{"thread (`v8-pool` async)", figBridge(VariantV8Pool), micros}
	loopBridge := shown{"`goja-loop`", figBridge(VariantGojaLoop), micros}
	p50 := func(w, v string) shown { return shown{"`" + v + "`", figP50(w, v), millis} }
	rows := []targetRow{
		{
			name:   "host call round trip, process (`sequential-1000` ÷ 1 000, one worker, p50)",
			inputs: []string{procBridge.figure}, compute: first, unit: micros,
			goal:   goal{bound: float64(30 * time.Microsecond)},
			beside: []shown{threadBridge, loopBridge}, today: "141.8 µs",
		},
		{
			name:   "host call round trip, process ÷ thread",
			inputs: []string{procBridge.figure, threadBridge.figure}, compute: quotient, unit: ratio,
			goal:   goal{bound: 2},
			beside: []shown{procBridge, threadBridge}, today: "×9.0 (141.8 / 15.8 µs)",
		},
		{
			name:    "`sequential-1000`, process ÷ goja-loop (p50, concurrency 1)",
			inputs:  []string{figP50(WorkloadSeq1000, VariantV8Proc), figP50(WorkloadSeq1000, VariantGojaLoop)},
			compute: quotient, unit: ratio, goal: goal{bound: 1},
			beside: []shown{p50(WorkloadSeq1000, VariantV8Proc), p50(WorkloadSeq1000, VariantGojaLoop),
				p50(WorkloadSeq1000, VariantV8Pool)},
			today: "×7.3 (127 / 17.4 ms)",
		},
		{
			name:    "trivial p50, process (`v8-proc`, concurrency 1)",
			inputs:  []string{figP50(WorkloadTrivial, VariantV8Proc)},
			compute: first, unit: millis, goal: goal{bound: float64(300 * time.Microsecond)},
			beside: []shown{p50(WorkloadTrivial, VariantV8Pool), p50(WorkloadTrivial, VariantGojaSync)}, today: "0.59 ms",
		},
		{
			name:    "trivial p50, thread (`v8-pool`, concurrency 1)",
			inputs:  []string{figP50(WorkloadTrivial, VariantV8Pool)},
			compute: first, unit: millis, goal: goal{bound: float64(150 * time.Microsecond)},
			beside: []shown{p50(WorkloadTrivial, VariantGojaSync)}, today: "0.20 ms",
		},
		{
			name:    "1 MB result through tier 3 minus the direct call, process (p50)",
			inputs:  []string{figBigTier3(process), figBigDirect(process)},
			compute: difference, unit: millis, goal: goal{bound: float64(15 * time.Millisecond)},
			beside: []shown{{"tier 3", figBigTier3(process), millis}, {"direct call", figBigDirect(process), millis},
				{"thread: tier 3", figBigTier3(thread), millis}},
			today: "~155 ms (219 − 57…64 ms)",
		},
	}
	for _, u := range []struct {
		program, today string
		goal           float64
	}{
		{"trivial", "×2.8", utcpGoalOverhead},
		{"one call", "×3.6", utcpGoalOverhead},
		{"five parallel calls", "×2.1", utcpGoalOverhead},
		{"10k-object compute", "×2.7", utcpGoalCompute},
	} {
		utcp := shown{"UTCP", figUTCP(u.program, utcpContender), millis}
		iso := shown{"isogate process", figUTCP(u.program, isogateContender(process)), millis}
		rows = append(rows, targetRow{
			name:   "UTCP ÷ isogate (process), " + u.program + " (p50, over stdio)",
			inputs: []string{utcp.figure, iso.figure}, compute: quotient, unit: ratio,
			goal:   goal{atLeast: true, bound: u.goal},
			beside: []shown{utcp, iso, {"isogate thread", figUTCP(u.program, isogateContender(thread)), millis}},
			today:  u.today,
		})
	}
	tier3 := shown{"tier 3", figEcho(process + "/tier 3"), millis}
	direct := shown{"direct", figEcho("direct"), millis}
	return append(rows,
		targetRow{
			name:   "one `echo` via tier 3 over stdio ÷ direct, process (p50)",
			inputs: []string{tier3.figure, direct.figure}, compute: quotient, unit: ratio, goal: goal{bound: 1.5},
			beside: []shown{tier3, direct}, today: "×3.75 (3.34 / 0.89 ms)",
		},
		targetRow{
			name:   "RSS, 8 concurrent trivial runs, process (gateway + workers, peak)",
			inputs: []string{figRSSPeak(process)}, compute: first, unit: megabytes,
			goal: goal{bound: 200},
			beside: []shown{{"processes", figRSSProcs(process), number}, {"before the runs", figRSSBase(process), megabytes},
				{"runs", figRSSRuns(process), number}, {"thread mode (one process)", figRSSPeak(thread), megabytes}},
			today: "not measured",
		},
	)
}

// issue26Table renders the targets table of issue 26 from f: a figure
// whose inputs were not all recorded says why (or "not measured in this
// run"), never fails.
func issue26Table(f *Figures) string {
	var b strings.Builder
	b.WriteString("Issue 26's goals (process isolation, bytes, UTCP), each computed from figures measured in this run by the sections named below, with those figures beside it. The \"today\" column is the issue's own reference (its `make bench` of 2026-11-24), **not** side by side with this run.\n\n")
	writeTargetRows(&b, "issue 26", issue26Rows(), f)
	b.WriteString("\nSources: host call round trip from \"Host-call bridge cost\"; `sequential-1000` and trivial from the workload tables (p50 at concurrency 1, runs 5 ms apart); 1 MB from \"Code-mode targets (issue 13)\"; UTCP from \"End to end against UTCP code-mode\"; `echo` from \"End-to-end call_tool_chain over stdio\"; RSS from \"RSS under process isolation (issue 26)\" (a fresh probe process and its worker processes, RSS summed, sampled every 50 ms; the thread figure is the issue-13 row's).\n")
	return b.String()
}

// writeTargetRows writes a targets table's header and rows; issue names
// the "today" column's reference.
func writeTargetRows(b *strings.Builder, issue string, rows []targetRow, f *Figures) {
	b.WriteString("| figure | this run | from (this run) | goal | met | today (" + issue + ") |\n|---|---:|---|---:|:---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", r.name, r.figure(f), r.besideCell(f), r.goal.format(r.unit), r.metCell(f), r.today)
	}
}

// value computes the row's figure from f; ok is false when an input is
// missing, and why then says what to show instead.
func (r targetRow) value(f *Figures) (v float64, ok bool, why string) {
	in := make([]float64, len(r.inputs))
	for i, name := range r.inputs {
		x, found := f.Get(name)
		if !found {
			if why := f.Why(name); why != "" {
				return 0, false, "not measured (" + why + ")"
			}
			return 0, false, notMeasured
		}
		in[i] = x
	}
	return r.compute(in), true, ""
}

// figure is the row's "this run" cell.
func (r targetRow) figure(f *Figures) string {
	v, ok, why := r.value(f)
	if !ok {
		return why
	}
	return "**" + r.unit(v) + "**"
}

// metCell is "yes", "**no**" or "–" (not measured).
func (r targetRow) metCell(f *Figures) string {
	v, ok, _ := r.value(f)
	switch {
	case !ok:
		return "–"
	case r.goal.met(v):
		return "yes"
	default:
		return "**no**"
	}
}

// besideCell lists the figures shown beside the row's figure.
func (r targetRow) besideCell(f *Figures) string {
	parts := make([]string, len(r.beside))
	for i, s := range r.beside {
		if v, ok := f.Get(s.figure); ok {
			parts[i] = s.label + " " + s.unit(v)
		} else {
			parts[i] = s.label + " not measured"
		}
	}
	return strings.Join(parts, "; ")
}
