package procpool

import (
	"context"
	"testing"

	"github.com/isogate/isogate/v8sandbox"
)

// Workers after the first of a command start from the V8 startup snapshot
// the first one made (its ready frame), instead of each making its own,
// and serve runs from it; a checker worker is neither asked for one nor
// given one.
func TestWorkersShareTheStartupSnapshot(t *testing.T) {
	first := newTestPool(t, Options{Workers: 1, SlotsPerWorker: 1})
	if blob, want := first.snapshotFor(); want || len(blob) == 0 {
		t.Fatalf("no snapshot kept after a worker started (want=%v, %d bytes)", want, len(blob))
	}
	p := newTestPool(t, Options{Workers: 3, SlotsPerWorker: 2})
	p.mu.Lock()
	for pr := range p.procs {
		if !pr.snapshotLoaded || pr.snapshotAsked {
			t.Errorf("worker %d: started from the kept snapshot %v, asked for one %v; want true, false", pr.pid, pr.snapshotLoaded, pr.snapshotAsked)
		}
	}
	p.mu.Unlock()
	for i := range 6 {
		res, err := p.Run(context.Background(), v8sandbox.Job{Source: `[1, 2].map(x => x * 21).at(-1)`, AwaitResult: true, Principal: "p"}, nil)
		if err != nil || string(res.Value) != "42" {
			t.Fatalf("run %d: %s %v", i, res.Value, err)
		}
	}
	if blob, want := (&Pool{opts: Options{Checker: true, Command: p.opts.Command}}).snapshotFor(); want || blob != nil {
		t.Errorf("a checker worker would get a snapshot (%d bytes) or be asked for one (%v)", len(blob), want)
	}
}
