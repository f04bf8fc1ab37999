package procpool

import (
	"os"
	"testing"

	"github.com/isogate/isogate/v8sandbox/procpool/corpus"
)

// The corpus runs against both runners in TestRunnerSuite (package
// sandboxtest); this file checks that it loads as described.

func loadCorpus(t *testing.T) []corpus.Case {
	t.Helper()
	cases, err := corpus.Load("testdata/hostile")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 40 {
		t.Fatalf("corpus has %d cases, want at least 40", len(cases))
	}
	return cases
}

func TestCorpusLoads(t *testing.T) {
	cases := loadCorpus(t)
	byName := map[string]corpus.Case{}
	processOnly := 0
	for _, c := range cases {
		byName[c.Name] = c
		if c.ProcessOnly {
			processOnly++
		}
	}
	if processOnly == 0 {
		t.Error("no process-only case")
	}
	if c := byName["host_tick_loop"]; len(c.Uses) != 1 || c.Uses[0] != "tick" {
		t.Errorf("host_tick_loop uses %v", c.Uses)
	}
	// The lead's tests find the corpus from any package through corpus.Dir.
	if _, err := os.Stat(corpus.Dir()); err != nil {
		t.Errorf("corpus.Dir: %v", err)
	}
}
