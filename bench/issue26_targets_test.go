package bench

import (
	"strings"
	"testing"
	"time"
)

// targetLine returns the table line of the row whose figure starts with
// name, split into its cells.
func targetLine(t *testing.T, table, name string) []string {
	t.Helper()
	for line := range strings.Lines(table) {
		if strings.HasPrefix(line, "| "+name) {
			cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), " | ")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			return cells
		}
	}
	t.Fatalf("no row %q in\n%s", name, table)
	return nil
}

// Columns of the issue-26 table.
const (
	colFigure = iota
	colValue
	colBeside
	colGoal
	colMet
	colToday
)

// fullFigures records every input of the table, in this run's units.
func fullFigures() *Figures {
	f := NewFigures()
	us := func(v float64) time.Duration { return time.Duration(v * float64(time.Microsecond)) }
	mss := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	f.SetDuration(figBridge(VariantV8Proc), us(25))   // ≤ 30 µs: met
	f.SetDuration(figBridge(VariantV8Pool), us(10))   // 25 ÷ 10 = ×2.5 > ×2: not met
	f.SetDuration(figBridge(VariantGojaLoop), us(18)) // shown only
	f.SetDuration(figP50(WorkloadSeq1000, VariantV8Proc), mss(20))
	f.SetDuration(figP50(WorkloadSeq1000, VariantGojaLoop), mss(20))   // ×1.00: met (bound included)
	f.SetDuration(figP50(WorkloadTrivial, VariantV8Proc), mss(0.45))   // > 0.30: not met
	f.SetDuration(figP50(WorkloadTrivial, VariantV8Pool), mss(0.12))   // ≤ 0.15: met
	f.SetDuration(figP50(WorkloadTrivial, VariantGojaSync), mss(0.16)) // shown only
	f.SetDuration(figBigTier3("process"), mss(70))
	f.SetDuration(figBigDirect("process"), mss(60)) // 10 ms ≤ 15: met
	for program, p := range map[string][2]float64{
		"trivial":             {6, 2},  // ×3: met (bound included)
		"one call":            {5, 2},  // ×2.5 < 3: not met
		"five parallel calls": {9, 2},  // ×4.5: met
		"10k-object compute":  {4, 10}, // ×0.4 < 1.5: not met
	} {
		f.SetDuration(figUTCP(program, utcpContender), mss(p[0]))
		f.SetDuration(figUTCP(program, isogateContender("process")), mss(p[1]))
	}
	f.SetDuration(figEcho("process/tier 3"), mss(2))
	f.SetDuration(figEcho("direct"), mss(1)) // ×2 > ×1.5: not met
	f.Set(figRSSPeak("process"), 180)        // ≤ 200 MB: met
	f.Set(figRSSProcs("process"), 3)
	f.Set(figRSSBase("process"), 90)
	f.Set(figRSSRuns("process"), 1234)
	f.Set(figRSSPeak("thread"), 110)
	return f
}

func TestIssue26TableComputesFiguresAndGoals(t *testing.T) {
	table := issue26Table(fullFigures())
	for _, c := range []struct {
		row, value, met string
		beside          []string
	}{
		{"host call round trip, process (", "**25.0 µs**", "yes", []string{"thread (`v8-pool` async) 10.0 µs", "`goja-loop` 18.0 µs"}},
		{"host call round trip, process ÷ thread", "**×2.50**", "**no**", []string{"process (`v8-proc`) 25.0 µs"}},
		{"`sequential-1000`, process ÷ goja-loop", "**×1.00**", "yes", []string{"`v8-proc` 20.0 ms", "`goja-loop` 20.0 ms", "`v8-pool` not measured"}},
		{"trivial p50, process", "**0.450 ms**", "**no**", []string{"`goja-sync` 0.160 ms", "`v8-pool` 0.120 ms"}},
		{"trivial p50, thread", "**0.120 ms**", "yes", []string{"`goja-sync` 0.160 ms"}},
		{"1 MB result through tier 3 minus the direct call, process", "**10.0 ms**", "yes", []string{"tier 3 70.0 ms", "direct call 60.0 ms", "thread: tier 3 not measured"}},
		{"UTCP ÷ isogate (process), trivial", "**×3.00**", "yes", []string{"UTCP 6.00 ms", "isogate process 2.00 ms"}},
		{"UTCP ÷ isogate (process), one call", "**×2.50**", "**no**", nil},
		{"UTCP ÷ isogate (process), five parallel calls", "**×4.50**", "yes", nil},
		{"UTCP ÷ isogate (process), 10k-object compute", "**×0.40**", "**no**", nil},
		{"one `echo` via tier 3 over stdio ÷ direct, process", "**×2.00**", "**no**", []string{"tier 3 2.00 ms", "direct 1.00 ms"}},
		{"RSS, 8 concurrent trivial runs, process", "**180 MB**", "yes", []string{"processes 3", "before the runs 90 MB", "runs 1234", "thread mode (one process) 110 MB"}},
	} {
		cells := targetLine(t, table, c.row)
		if cells[colValue] != c.value || cells[colMet] != c.met {
			t.Errorf("%s: figure %q met %q, want %q %q", c.row, cells[colValue], cells[colMet], c.value, c.met)
		}
		for _, want := range c.beside {
			if !strings.Contains(cells[colBeside], want) {
				t.Errorf("%s: beside %q lacks %q", c.row, cells[colBeside], want)
			}
		}
	}
	for row, want := range map[string]string{
		"host call round trip, process (":                   "≤ 30.0 µs",
		"host call round trip, process ÷ thread":            "≤ ×2.00",
		"trivial p50, process":                              "≤ 0.300 ms",
		"UTCP ÷ isogate (process), 10k-object compute":      "≥ ×1.50",
		"RSS, 8 concurrent trivial runs, process":           "≤ 200 MB",
		"1 MB result through tier 3 minus the direct call,": "≤ 15.0 ms",
	} {
		if got := targetLine(t, table, row)[colGoal]; got != want {
			t.Errorf("%s: goal %q, want %q", row, got, want)
		}
	}
	if got := targetLine(t, table, "`sequential-1000`")[colToday]; got != "×7.3 (127 / 17.4 ms)" {
		t.Errorf("today column: %q", got)
	}
	if t.Failed() {
		t.Log(table)
	}
}

func TestIssue26TableSaysWhatWasNotMeasured(t *testing.T) {
	f := NewFigures()
	f.SetDuration(figBridge(VariantV8Proc), 25*time.Microsecond) // the thread bridge is missing
	utcpNotMeasured(f, utcpWorkloads(), "UTCP not installed")
	table := issue26Table(f)
	cells := targetLine(t, table, "host call round trip, process (")
	if cells[colValue] != "**25.0 µs**" || cells[colMet] != "yes" || !strings.Contains(cells[colBeside], "thread (`v8-pool` async) not measured") {
		t.Errorf("one input present: %q", cells)
	}
	for _, row := range []string{"host call round trip, process ÷ thread", "trivial p50, process", "RSS, 8 concurrent", "one `echo`"} {
		cells := targetLine(t, table, row)
		if cells[colValue] != notMeasured || cells[colMet] != "–" {
			t.Errorf("%s: %q, want %q and no verdict", row, cells, notMeasured)
		}
	}
	for _, w := range utcpWorkloads() {
		cells := targetLine(t, table, "UTCP ÷ isogate (process), "+w.name)
		if cells[colValue] != "not measured (UTCP not installed)" || cells[colMet] != "–" {
			t.Errorf("UTCP %s: %q", w.name, cells)
		}
	}
	// A nil record (a section run outside a report) renders every row as
	// not measured.
	for line := range strings.Lines(issue26Table(nil)) {
		if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| figure") && !strings.Contains(line, notMeasured) {
			t.Errorf("nil record: %s", line)
		}
	}
	if t.Failed() {
		t.Log(table)
	}
}
