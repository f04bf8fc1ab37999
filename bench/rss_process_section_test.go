package bench

import (
	"os"
	"strconv"
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
	// PSS counts a shared page 1/n in each of its n processes: never more
	// than RSS summed, which counts it n times.
	if p.PeakPSS <= 0 || p.GatewayPSS <= 0 || p.PeakPSS > p.Peak || p.PeakPSS <= p.GatewayPSS {
		t.Fatalf("probe %+v: want a PSS peak above the gateway's own PSS and at most the RSS peak", p)
	}
	f := NewFigures()
	p.record(f, config.IsolationProcess)
	if v, ok := f.Get(figRSSPeak("process")); !ok || v != float64(p.Peak) {
		t.Fatalf("recorded peak %v, %v", v, ok)
	}
	if v, ok := f.Get(figPSSPeak("process")); !ok || v != float64(p.PeakPSS) {
		t.Fatalf("recorded PSS peak %v, %v", v, ok)
	}
}

// TestPSSOfThisProcess: smapsPSS reads this process's proportional set
// size, which is positive and at most its resident set.
func TestPSSOfThisProcess(t *testing.T) {
	pid := strconv.Itoa(os.Getpid())
	pss, rss := smapsPSS(pid), statusRSS(pid)
	t.Logf("PSS %d KB, RSS %d KB", pss>>10, rss>>10)
	if pss <= 0 || pss > rss {
		t.Fatalf("PSS %d, RSS %d: want 0 < PSS ≤ RSS", pss, rss)
	}
}
