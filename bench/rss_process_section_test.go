package bench

import (
	"testing"
	"time"

	"github.com/isogate/isogate/config"
)

// TestProcessRSSProbeCountsWorkers: in process mode the probe sums the
// gateway process and its sandbox worker processes, so it counts more than
// one process and more memory than the gateway's own.
func TestProcessRSSProbeCountsWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a gateway with sandbox worker processes")
	}
	p, err := concurrentRSS(t.Context(), config.IsolationProcess, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", p)
	if p.Procs < 2 || p.Peak <= p.Gateway || p.Gateway <= 0 || p.Peak < p.Base {
		t.Fatalf("probe %+v: want ≥ 2 processes and the workers' memory on top of the gateway's", p)
	}
	f := NewFigures()
	p.record(f, config.IsolationProcess)
	if v, ok := f.Get(figRSSPeak("process")); !ok || v != float64(p.Peak) {
		t.Fatalf("recorded peak %v, %v", v, ok)
	}
}
