package bench

import (
	"context"
	"fmt"
	"strings"
	"time"
)

func init() {
	RegisterSection(Section{Title: "Host-call bridge cost", Order: 0, Run: bridgeSection})
}

// bridgeSection breaks down the sequential-1000 workload: the cost of one
// awaited zero-cost host call on each bridge, including V8 with sync host
// functions (not what code mode uses, shown to locate the cost).
func bridgeSection(ctx context.Context, cfg ReportConfig) (string, error) {
	w := WorkloadByName(WorkloadSeq1000)
	if w == nil {
		return "", fmt.Errorf("workload %s is not registered", WorkloadSeq1000)
	}
	type entry struct {
		variant, label string
		build          func() (Variant, error)
		// figure names the per-call figure recorded for other tables
		// ("": not recorded).
		figure string
	}
	all := []entry{
		{VariantV8Pool, "`v8-pool`, async host functions (code mode)", func() (Variant, error) { return NewV8Pool(1), nil }, figBridge(VariantV8Pool)},
		{VariantV8Pool, "`v8-pool`, sync host functions", func() (Variant, error) { return NewV8Pool(1).SyncTools("v8-pool-sync"), nil }, ""},
		{VariantV8Proc, "`v8-proc`, async host functions", func() (Variant, error) { return NewV8Proc(1, cfg.WorkerCommand) }, figBridge(VariantV8Proc)},
		{VariantGojaSync, "`goja-sync`", func() (Variant, error) { return NewGojaSync(), nil }, figBridge(VariantGojaSync)},
		{VariantGojaLoop, "`goja-loop`", func() (Variant, error) { return NewGojaLoop(), nil }, figBridge(VariantGojaLoop)},
	}
	var entries []entry
	for _, e := range all {
		if selected(cfg.Variants, e.variant) {
			entries = append(entries, e)
		}
	}
	mc := cfg.Measure
	mc.Concurrency = nil
	var b strings.Builder
	b.WriteString("`" + WorkloadSeq1000 + "` (1 000 sequential `await echo(i)`) on one worker, divided by 1 000: the round trip of one host call through each bridge, script → Go → script.\n\n")
	b.WriteString("| bridge | µs per call (p50) | µs per call (p99) |\n|---|---:|---:|\n")
	for _, e := range entries {
		v, err := e.build()
		if err != nil {
			fmt.Fprintf(&b, "| %s | not available: %s | |\n", e.label, mdEscape(err.Error()))
			continue
		}
		m := Measure(ctx, v, w, mc)
		v.Close()
		if m.Err != "" {
			fmt.Fprintf(&b, "| %s | error: %s | |\n", e.label, mdEscape(truncate(m.Err, 80)))
			continue
		}
		if e.figure != "" {
			cfg.Figures.SetDuration(e.figure, m.P50/1000)
		}
		fmt.Fprintf(&b, "| %s | %.1f | %.1f |\n", e.label, perCall(m.P50), perCall(m.P99))
	}
	b.WriteString("\nAn async V8 host call completes on another goroutine and is handed back to the isolate's pinned OS thread, which must be woken by the kernel; goja's event loop hands results to a goroutine, which the Go scheduler runs without a thread wake-up. The difference grows with CPU contention (see the load average).\n")
	return b.String(), nil
}

func perCall(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) / 1000 }
