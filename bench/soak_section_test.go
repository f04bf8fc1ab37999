package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/isogate/isogate/config"
)

// The soak is opt-in: a report selecting no section leaves it out, one
// naming it runs it.
func TestSoakSectionIsOptIn(t *testing.T) {
	var soak Section
	for _, s := range Sections() {
		if s.Name == "soak" {
			soak = s
		}
	}
	if !soak.OptIn {
		t.Fatal("the soak section is not registered as opt-in")
	}
	if sectionSelected(nil, nil, soak) {
		t.Fatal("a report without -sections runs the soak")
	}
	if !sectionSelected([]string{"soak"}, nil, soak) {
		t.Fatal("-sections soak does not run it")
	}
	if !sectionSelected(nil, []string{"soak"}, soak) {
		t.Fatal("a whole report -with soak does not run it")
	}
	for _, s := range Sections() {
		if !s.OptIn && !sectionSelected(nil, []string{"soak"}, s) {
			t.Fatalf("section %q left out of the default report", s.Title)
		}
	}
}

// A sample falls on the reference run count, and the ratios compare the
// end with it.
func TestSoakReportRatios(t *testing.T) {
	for runs, want := range map[int64]int64{40000: 2000, 300000: 10000, 20000: 1000, 30000: 1000, 100: 1} {
		if got := soakEvery(runs); got != want || soakReference%got != 0 {
			t.Errorf("soakEvery(%d) = %d, want %d", runs, got, want)
		}
	}
	samples := []soakSample{{Runs: 0, RSS: 100 << 20}, {Runs: 10000, RSS: 200 << 20, PSS: 100 << 20, HeapInuse: 50 << 20, HeapAlloc: 40 << 20},
		{Runs: 20000, RSS: 300 << 20, PSS: 120 << 20, HeapInuse: 60 << 20, HeapAlloc: 60 << 20}}
	out := soakReport(soakConfig{Runs: 20000, Sessions: 64, Every: 10000}, samples)
	for _, want := range []string{"| RSS (all) | ×1.50 | ≤ ×1.3 | not met | ×1.50 |", "| PSS (all) | ×1.20 | ≤ ×1.3 | met | ×1.20 |",
		"| gateway heap in use | ×1.20 |  |  | ×1.20 |", "| gateway live heap | ×1.50 |  |  | ×1.50 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// A short soak runs end to end: every program answers over HTTP from a
// process-isolation gateway in a child process, and the memory samples
// are read.
func TestSoakShort(t *testing.T) {
	samples, err := runSoak(context.Background(), soakConfig{Mode: config.IsolationProcess, Sessions: 4, Runs: 80, Every: 40}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 3 || samples[2].Runs != 80 {
		t.Fatalf("samples %+v, want at 0, 40 and 80 runs", samples)
	}
	for _, s := range samples {
		if s.RSS <= 0 || s.PSS <= 0 || s.HeapInuse == 0 || s.Procs < 2 {
			t.Fatalf("sample without memory figures: %+v", s)
		}
	}
}
