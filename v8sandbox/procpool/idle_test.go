package procpool

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"
)

// runOn runs principal's wait job and returns the pid of the worker it ran
// on.
func runOn(t *testing.T, p *Pool, h *pidHost, principal string) int {
	t.Helper()
	res, err := p.Run(context.Background(), principalJob(principal), h)
	if err != nil {
		t.Fatalf("%s's run: %v", principal, err)
	}
	pid, err := strconv.Atoi(string(res.Value))
	if err != nil || pid == 0 {
		t.Fatalf("%s's run answered %s", principal, res.Value)
	}
	return pid
}

// TestIdleWorkersServeTheirPrincipalAgain: principals taking turns on one
// slot get their own warm worker back instead of a fresh one each turn
// (issue 44, 1). Red before idle workers: every turn started a process.
func TestIdleWorkersServeTheirPrincipalAgain(t *testing.T) {
	p := newTestPool(t, Options{Workers: 1, SlotsPerWorker: 4, IdleWorkersMB: 1024})
	h := newPIDHost(false)
	first := map[string]int{}
	for round := range 4 {
		for _, who := range []string{"alice", "bob", "carol"} {
			pid := runOn(t, p, h, who)
			if round == 0 {
				first[who] = pid
			} else if pid != first[who] {
				t.Errorf("round %d: %s ran on worker %d, its worker was %d", round, who, pid, first[who])
			}
		}
	}
	h.checkNoMixing(t)
	st := p.Stats()
	if st.Spawned != 3 || st.Rebound != 0 || st.Resumed != 9 {
		t.Errorf("3 principals × 4 turns: %d processes started (want 3), %d ended (want 0), %d resumed (want 9)", st.Spawned, st.Rebound, st.Resumed)
	}
	if st.IdleBytes <= 0 || st.IdleBytes > 1024<<20 {
		t.Errorf("parked workers counted for %d bytes, budget 1 GiB", st.IdleBytes)
	}
}

// TestIdleWorkersEndTheLeastRecentlyParked: with a budget that holds one
// parked worker, parking a second ends the least recently parked; its
// principal gets a fresh worker, never another principal's.
func TestIdleWorkersEndTheLeastRecentlyParked(t *testing.T) {
	p := newTestPool(t, Options{Workers: 1, SlotsPerWorker: 4, IdleWorkersMB: 1024})
	h := newPIDHost(false)
	alice := runOn(t, p, h, "alice")
	own, err := readAnonRSS(alice)
	if err != nil {
		t.Skipf("no /proc statm: %v", err)
	}
	p.mu.Lock()
	p.opts.IdleWorkersMB = int((own + own/2) >> 20) // room for one parked worker
	p.mu.Unlock()
	bob := runOn(t, p, h, "bob")     // alice parked
	carol := runOn(t, p, h, "carol") // bob parked: alice ended
	st := p.Stats()
	if st.Evicted != 1 {
		t.Fatalf("evicted %d, want alice's worker; stats %+v", st.Evicted, st)
	}
	if st.IdleBytes > int64(p.opts.IdleWorkersMB)<<20 {
		t.Errorf("parked workers counted for %d bytes, over the budget of %d MiB", st.IdleBytes, p.opts.IdleWorkersMB)
	}
	if again := runOn(t, p, h, "alice"); again == alice || again == bob || again == carol {
		t.Errorf("alice's run after her worker was ended ran on worker %d (hers %d, bob's %d, carol's %d)", again, alice, bob, carol)
	}
	// alice's run parked carol's worker and ended bob's (parked before).
	if again := runOn(t, p, h, "carol"); again != carol {
		t.Errorf("carol's worker was parked last: her run went to %d, not %d", again, carol)
	}
	if again := runOn(t, p, h, "bob"); again == bob {
		t.Errorf("bob's worker was ended beyond the budget, yet his run went to %d", again)
	}
	if st := p.Stats(); st.Evicted != 3 || st.Resumed != 1 {
		t.Errorf("evicted %d (want 3: alice's, bob's, alice's second), resumed %d (want carol's); %+v", st.Evicted, st.Resumed, st)
	}
	h.checkNoMixing(t)
}

// TestIdleWorkersNeverServeAnotherPrincipal is the attack: six principals
// alternate as fast as they can on two workers with a budget that parks
// some and ends others, each run leaving a global marked with its
// principal and looking for any other. No worker ever serves two
// principals, and no run sees another principal's mark.
func TestIdleWorkersNeverServeAnotherPrincipal(t *testing.T) {
	p := newTestPool(t, Options{Workers: 2, SlotsPerWorker: 2, IdleWorkersMB: 96, SpareWorkers: 1})
	h := newPIDHost(false)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 6 {
		who := fmt.Sprint("p", i)
		wg.Go(func() {
			for range 12 {
				job := principalJob(who)
				job.Source = fmt.Sprintf(`(async () => {
					const seen = Object.keys(globalThis).filter(k => k.startsWith("mark_") && k !== "mark_%[1]s");
					globalThis["mark_%[1]s"] = true;
					const pid = await wait(%[1]q);
					return seen.length ? "saw " + seen.join(",") : pid;
				})()`, who)
				res, err := p.Run(context.Background(), job, h)
				if err != nil {
					errs <- fmt.Errorf("%s: %v", who, err)
					return
				}
				if _, err := strconv.Atoi(string(res.Value)); err != nil {
					errs <- fmt.Errorf("%s's run %s", who, res.Value)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	h.checkNoMixing(t)
	if st := p.Stats(); st.Resumed == 0 {
		t.Errorf("no parked worker was ever given back: the attack did not reach idle workers; %+v", st)
	}
}

// TestIdleWorkersBusyVictimParkedOnceDrained: a worker taken for another
// principal while it runs leaves its slot, finishes its run, and is parked
// for its principal rather than ended. Red before: it was retired, and
// alice's next run waited for a fresh process.
func TestIdleWorkersBusyVictimParkedOnceDrained(t *testing.T) {
	p := newTestPool(t, Options{Workers: 1, SlotsPerWorker: 2, IdleWorkersMB: 1024})
	held, free := newPIDHost(true), newPIDHost(false)
	aliceRun := runAsync(context.Background(), p, principalJob("alice"), held)
	held.awaitCalls(t, 1)
	bob := runOn(t, p, free, "bob") // alice's worker, busy, leaves the slot
	close(held.release)
	o := receive(t, aliceRun, 30*time.Second)
	if o.err != nil {
		t.Fatalf("alice's held run: %v", o.err)
	}
	alice, _ := strconv.Atoi(o.value())
	if alice == 0 || alice == bob {
		t.Fatalf("alice ran on %d, bob on %d", alice, bob)
	}
	waitState(t, p, workerStartTimeout, "alice's worker parked", func() bool { return p.Stats().Parked == 1 })
	if again := runOn(t, p, free, "alice"); again != alice {
		t.Errorf("alice's next run went to %d, not her drained worker %d", again, alice)
	}
	if st := p.Stats(); st.Rebound != 0 || st.Spawned != 2 {
		t.Errorf("%d workers ended (want 0), %d started (want 2: the first, bob's)", st.Rebound, st.Spawned)
	}
	held.checkNoMixing(t)
	free.checkNoMixing(t)
}
