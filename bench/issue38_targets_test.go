package bench

import (
	"testing"
	"time"
)

func TestIssue38TableComputesFiguresAndGoals(t *testing.T) {
	f := NewFigures()
	us := func(v float64) time.Duration { return time.Duration(v * float64(time.Microsecond)) }
	mss := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	// Overhead kind: goja-sync ÷ v8-pool = √(0.2/0.1 × 8/32) = ×0.71 (not met);
	// v8-proc ÷ v8-pool = √(0.13/0.1 × 41.6/32) = ×1.30 (met, bound included).
	f.SetDuration(figP50(WorkloadTrivial, VariantV8Pool), mss(0.1))
	f.SetDuration(figP50(WorkloadSeq1000, VariantV8Pool), mss(32))
	f.SetDuration(figP50(WorkloadTrivial, VariantGojaSync), mss(0.2))
	f.SetDuration(figP50(WorkloadSeq1000, VariantGojaSync), mss(8))
	f.SetDuration(figP50(WorkloadTrivial, VariantV8Proc), mss(0.13))
	f.SetDuration(figP50(WorkloadSeq1000, VariantV8Proc), mss(41.6))
	f.SetDuration(figEngine(engineTrivial, "thread"), us(150))
	f.SetDuration(figEngine(enginePool, "thread"), us(100)) // ×1.5: not met
	f.SetDuration(figEngine(engineOne, "thread"), us(500))
	f.SetDuration(figEngine(engineDirect, "thread"), us(400)) // 100 µs: met
	f.SetDuration(figEngine(engineOne, "process"), us(900))
	f.SetDuration(figEngine(engineDirect, "process"), us(400)) // 500 µs: not met
	f.SetDuration(figEcho("direct"), mss(1))
	f.SetDuration(figEcho("process/passthrough"), mss(1.25)) // +0.25 ms: met
	f.SetDuration(figEcho("process/tier 3"), mss(2))         // ×2: not met
	f.Set(figPSSPeak("process"), 144)                        // met
	table := issue38Table(f)
	for _, c := range []struct{ row, value, met string }{
		{"headline \"overhead\" kind, `goja-sync`", "**×0.71**", "**no**"},
		{"headline \"overhead\" kind, `v8-proc`", "**×1.30**", "yes"},
		{"trivial run through `Engine.Execute`", "**×1.50**", "**no**"},
		{"one tool call via tier 3 minus the direct call (thread", "**100.0 µs**", "yes"},
		{"one tool call via tier 3 minus the direct call (process", "**500.0 µs**", "**no**"},
		{"passthrough over stdio minus direct (process)", "**0.250 ms**", "yes"},
		{"one `echo` via tier 3 over stdio ÷ direct (process)", "**×2.00**", "**no**"},
		{"PSS, 8 concurrent", "**144 MB**", "yes"},
		{"soak:", notMeasured, "–"},
		{"1 MB result", notMeasured, "–"},
	} {
		cells := targetLine(t, table, c.row)
		if cells[colValue] != c.value || cells[colMet] != c.met {
			t.Errorf("%s: figure %q met %q, want %q %q", c.row, cells[colValue], cells[colMet], c.value, c.met)
		}
	}
	if got := targetLine(t, table, "UTCP ÷ isogate (process), 10k-object compute")[colGoal]; got != "≥ ×3.00" {
		t.Errorf("UTCP compute goal %q, issue 38 asks ≥ ×3 on all four", got)
	}
	f.Set(figSoakRatio("rss"), 1.4)
	if cells := targetLine(t, issue38Table(f), "soak:"); cells[colValue] != "**×1.40**" || cells[colMet] != "**no**" {
		t.Errorf("soak row once measured: %q", cells)
	}
	if t.Failed() {
		t.Log(table)
	}
}
