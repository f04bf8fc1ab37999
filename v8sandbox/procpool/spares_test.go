package procpool

import (
	"context"
	"testing"
)

// spareStats returns the spares of a snapshot.
func spareStats(st Stats) []WorkerStats {
	var out []WorkerStats
	for _, w := range st.Workers {
		if w.Spare {
			out = append(out, w)
		}
	}
	return out
}

// TestANewPrincipalTakesASpare: one principal alone starts no spare; once
// a worker has been retired for another principal, the pool keeps a spare
// ready, and the next new principal's run goes to that spare (a process
// started before the run was queued, so it waits for no start), which had
// never run anything; the spare is then replaced by a fresh one.
func TestANewPrincipalTakesASpare(t *testing.T) {
	p := newTestPool(t, Options{Workers: 1, SlotsPerWorker: 1, SpareWorkers: 1})
	h := newPIDHost(false)
	run := func(who string) int {
		t.Helper()
		o := <-runAsync(context.Background(), p, principalJob(who), h)
		if o.err != nil {
			t.Fatalf("%s's run failed: %v", who, o.err)
		}
		pid := 0
		for worker, principals := range h.snapshot() {
			if principals[len(principals)-1] == who {
				pid = worker
			}
		}
		return pid
	}
	used := map[int]bool{}
	for range 5 {
		used[run("alice")] = true
	}
	if st := p.Stats(); st.Spawned != 1 || len(spareStats(st)) != 0 {
		t.Fatalf("one principal alone started spares: %+v", st)
	}
	used[run("bob")] = true // alice's worker is retired: spares are wanted from now on

	var spare WorkerStats
	waitState(t, p, workerStartTimeout, "a spare ready", func() bool {
		s := spareStats(p.Stats())
		if len(s) == 1 {
			spare = s[0]
		}
		return len(s) == 1
	})
	t.Logf("a spare's RSS: %.1f MB", float64(spare.RSSBytes)/(1<<20))
	if used[spare.PID] || spare.Completed != 0 || spare.Bound {
		t.Fatalf("the spare %+v is not a fresh process (workers used so far %v)", spare, used)
	}
	carol := run("carol")
	if carol != spare.PID {
		t.Fatalf("carol's run went to worker %d, not to the spare %d that was ready before it was queued; stats %+v", carol, spare.PID, p.Stats())
	}
	used[carol] = true
	waitState(t, p, workerStartTimeout, "the spare replaced", func() bool {
		s := spareStats(p.Stats())
		return len(s) == 1 && !used[s[0].PID]
	})
	h.checkNoMixing(t)
	if st := p.Stats(); len(st.Workers) > 2*1+1 {
		t.Errorf("%d processes alive, the bound is twice Workers plus SpareWorkers: %+v", len(st.Workers), st)
	}
}
