package bench

import (
	"context"
	"strings"
	"testing"
)

// TestGatewaySections runs the code-mode sections once, quickly, so they
// stay green; the figures themselves are for bench/RESULTS.md.
func TestGatewaySections(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and serves the gateway")
	}
	cfg := DefaultReportConfig(true)
	cfg.Figures = NewFigures()
	for name, run := range map[string]func(context.Context, ReportConfig) (string, error){
		"tiers": tiersSection, "end-to-end": endToEndSection,
	} {
		body, err := run(t.Context(), cfg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.Contains(body, "×1.00") && !strings.Contains(body, "skipped") {
			t.Fatalf("%s: no baseline row:\n%s", name, body)
		}
		t.Logf("%s:\n%s", name, body)
	}
	// The end-to-end figures the issue-26 and issue-38 goals divide are
	// recorded (or why they are missing): passthrough's too.
	for _, path := range []string{"direct", "process/tier 3", "process/passthrough", "thread/passthrough"} {
		if _, ok := cfg.Figures.Get(figEcho(path)); !ok && cfg.Figures.Why(figEcho(path)) == "" {
			t.Errorf("end-to-end %s: no figure recorded", path)
		}
	}
}
