package bench

import (
	"fmt"
	"strings"
	"testing"
)

// TestProgramsSectionSmoke runs the saved-programs section once, shrunk:
// the saved program answers what the inline code answers (the section
// refuses otherwise), the table has both contenders, and a repeat by the
// saved program sends at least 90 % fewer bytes than re-sending the code.
func TestProgramsSectionSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a gateway")
	}
	cfg := DefaultReportConfig(true)
	cfg.Smoke = true
	body, err := programsSection(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| `call_tool_chain`, the code each time |", "| `program_restock_report`, saved once |", "| 20 saved programs visible |"} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in:\n%s", want, body)
		}
	}
	var ratio float64
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, "| saved ÷ code each time | "); ok {
			if _, err := fmt.Sscan(rest, &ratio); err != nil {
				t.Fatalf("ratio row %q: %v", line, err)
			}
		}
	}
	if ratio <= 0 || ratio > 0.1 {
		t.Errorf("saved sends %.3f of the inline bytes, want ≤ 0.1:\n%s", ratio, body)
	}
}
