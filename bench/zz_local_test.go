package bench

import "testing"

func TestZZTargets(t *testing.T) {
	cfg := DefaultReportConfig(true)
	body, err := targetsSection(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + body)
}
