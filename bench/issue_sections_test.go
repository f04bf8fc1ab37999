package bench

import (
	"context"
	"strings"
	"testing"
)

// TestSectionsAlone: with ReportConfig.Sections only the sections named
// (by Name or a part of the title) run, nothing of the workload grid is
// measured, and the report says it is partial.
func TestSectionsAlone(t *testing.T) {
	registryMu.Lock()
	saved := sections
	sections = nil
	registryMu.Unlock()
	defer func() {
		registryMu.Lock()
		sections = saved
		registryMu.Unlock()
	}()
	ran := map[string]bool{}
	for _, s := range []Section{{Title: "First thing (issue 1)", Name: "first"}, {Title: "Second thing"}, {Title: "Third thing", Name: "third"}} {
		RegisterSection(Section{Title: s.Title, Name: s.Name, Run: func(context.Context, ReportConfig) (string, error) {
			ran[s.Title] = true
			return "body of " + s.Title, nil
		}})
	}
	cfg := DefaultReportConfig(true)
	cfg.Sections = []string{"first", "SECOND"}
	r, err := Collect(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !ran["First thing (issue 1)"] || !ran["Second thing"] || ran["Third thing"] {
		t.Fatalf("sections run: %v; want the first (by name) and the second (by title) only", ran)
	}
	if len(r.Measurements) > 0 || len(r.Memory) > 0 || len(r.Conformance) > 0 {
		t.Fatalf("the grid was measured: %d workloads, %d memory, %d conformance", len(r.Measurements), len(r.Memory), len(r.Conformance))
	}
	md := r.Markdown(cfg)
	for _, want := range []string{"-sections first,SECOND", "## Machine and versions", "Only the sections selected", "## First thing (issue 1)", "body of Second thing"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	for _, unwanted := range []string{"## Headline", "## Third thing", "## Method and caveats"} {
		if strings.Contains(md, unwanted) {
			t.Errorf("report has %q", unwanted)
		}
	}
}

// TestIssueSectionsRender runs the sections of issues 32, 35, 36 and 38 (the engine's) once,
// a sample or two each (ReportConfig.Smoke), so they stay green and render
// their tables with the ratio columns; the figures are for RESULTS.md.
func TestIssueSectionsRender(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox worker processes, V8 pools and the type checker")
	}
	cfg := DefaultReportConfig(true)
	cfg.Smoke = true
	for _, c := range []struct {
		name string
		run  func(context.Context, ReportConfig) (string, error)
		want []string
	}{
		{"principals", principalsSection, []string{"| worker start", "first run, pool at rest, 2 spares", "| 64 |", "÷ 1 principal", "An agent's pace", "p50 ÷ one principal alone", "fair shares, 64 principals", "÷ channel", "×1.00", "worker: V8 platform initialised", "worker CPU once ready"}},
		{"durable", durableSection, []string{"| off:", "| paused:", "| all, memory store:", "| resume by replay:", "÷ off", "journaling per host call", "×1.00", "Redis"}},
		{"engine", engineSection, []string{"| thread |", "| process |", "engine trivial ÷ pool", "one call minus direct", "with the snapshot | without", "a fresh isolate each"}},
		{"typecheck", typecheckSection, []string{"run unchecked", "run checked first", "warm check alone", "÷ unchecked run", "≤ 10.0 ms", "≤ 500 ms", "≤ 80 MB", "once the compiler has loaded", "first 2 checks of the program after its load"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			body, err := c.run(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range c.want {
				if !strings.Contains(body, want) {
					t.Errorf("lacks %q:\n%s", want, body)
				}
			}
			t.Logf("\n%s", body)
		})
	}
}
