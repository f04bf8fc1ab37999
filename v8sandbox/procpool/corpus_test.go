package procpool

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/procpool/corpus"
)

// hangSlack is how long past its deadline a case may take before the test
// calls it a hang. It is a guard, not a performance assertion: generous
// enough for a loaded 2-core machine running -race (the cases that ignore
// termination would otherwise run for tens of seconds).
const hangSlack = 15 * time.Second

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

// TestHostileCorpus runs every case through the process pool, and the cases
// that are safe in-process through a plain v8sandbox.Pool, checking the
// typed outcome, a hang guard and that a normal job works right after.
func TestHostileCorpus(t *testing.T) {
	cases := loadCorpus(t)
	t.Run("process", func(t *testing.T) {
		t.Parallel()
		pool := newTestPool(t, Options{Workers: 2, SlotsPerWorker: 2})
		runCorpus(t, pool, cases, false)
		st := pool.Stats()
		t.Logf("process pool: %d spawned, %d crashed, %d killed, %d recycled", st.Spawned, st.Crashed, st.Killed, st.Recycled)
	})
	t.Run("thread", func(t *testing.T) {
		t.Parallel()
		pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 2, Logger: quietLogger(t)})
		defer pool.Close()
		runCorpus(t, pool, cases, true)
	})
}

func runCorpus(t *testing.T, runner v8sandbox.Runner, cases []corpus.Case, inProcess bool) {
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if inProcess && c.ProcessOnly {
				t.Skip("process-only: would abort or wedge the test process")
			}
			host := corpus.NewHost()
			start := time.Now()
			res, err := runner.Run(context.Background(), c.Job(), host)
			elapsed := time.Since(start)
			if cerr := c.Check(res, err); cerr != nil {
				t.Errorf("%s: %v", c.Name, cerr)
			}
			if limit := c.Timeout + hangSlack; elapsed > limit {
				t.Errorf("%s took %v, over its deadline %v + %v", c.Name, elapsed.Round(time.Millisecond), c.Timeout, hangSlack)
			}
			if testing.Verbose() {
				t.Logf("%-40s %-14s %6v", c.Name, outcomeCode(err), elapsed.Round(time.Millisecond))
			}
			res, err = runner.Run(context.Background(), v8sandbox.Job{Source: `[1, 2, 3].map((x) => x * 2)`, AwaitResult: true}, nil)
			if err != nil || string(res.Value) != `[2,4,6]` {
				t.Fatalf("normal job after %s: %s %v", c.Name, res.Value, err)
			}
		})
	}
}

func outcomeCode(err error) v8sandbox.Code {
	if err == nil {
		return corpus.OK
	}
	return v8sandbox.CodeOf(err)
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
