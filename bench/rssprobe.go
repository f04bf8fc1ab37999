package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/codemode"
)

// rssProbeArg is the first argument that makes a binary calling
// [ServeWorkerIfRequested] measure concurrent runs' RSS and exit; the
// second names the isolation mode (default thread).
const rssProbeArg = "rss-probe"

// rssProbeSpan is how long the 8 concurrent runs last.
const rssProbeSpan = 3 * time.Second

// rssProbe is the outcome of an RSS measurement.
type rssProbe struct {
	// Peak and Base are the resident memory in MB at the highest sample
	// and before the runs: the probe process, plus in process mode its
	// worker processes (RSS summed, so pages they share count once per
	// process).
	Peak, Base int64
	// Gateway is the probe process's own share of Peak, in MB.
	Gateway int64
	// PeakPSS and BasePSS are the proportional set size in MB at the
	// highest PSS sample and before the runs, summed like Peak and Base;
	// a page shared by n processes counts 1/n in each, so this is what
	// the host really pays. GatewayPSS is the probe process's own share
	// of PeakPSS.
	PeakPSS, BasePSS, GatewayPSS int64
	// Procs is the most processes counted in one sample.
	Procs int
	// Runs is the number of runs completed.
	Runs int64
	// Fresh is true when it ran in a process of its own.
	Fresh bool
}

// record files the probe's figures for mode in f.
func (p rssProbe) record(f *Figures, mode config.Isolation) {
	f.Set(figRSSPeak(string(mode)), float64(p.Peak))
	f.Set(figRSSBase(string(mode)), float64(p.Base))
	f.Set(figRSSProcs(string(mode)), float64(p.Procs))
	f.Set(figRSSRuns(string(mode)), float64(p.Runs))
	f.Set(figPSSPeak(string(mode)), float64(p.PeakPSS))
}

// probeCapable is set when this binary serves the probe (its main calls
// ServeWorkerIfRequested), so the report can start it as a child.
var probeCapable bool

func runRSSProbeIfRequested() {
	probeCapable = true
	if len(os.Args) < 2 || os.Args[1] != rssProbeArg {
		return
	}
	mode := config.IsolationThread
	if len(os.Args) > 2 {
		mode = config.Isolation(os.Args[2])
	}
	p, err := concurrentRSS(context.Background(), mode, rssProbeSpan)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rss-probe:", err)
		os.Exit(1)
	}
	p.Fresh = true
	_ = json.NewEncoder(os.Stdout).Encode(p)
	os.Exit(0)
}

// rssInFreshProcess measures in a child process when this binary can serve
// the probe (benchreport does), so the figure is not inflated by what
// earlier sections left in this process's heap; elsewhere (go test) it
// measures in this process.
func rssInFreshProcess(ctx context.Context, mode config.Isolation) (rssProbe, error) {
	if !probeCapable {
		return concurrentRSS(ctx, mode, rssProbeSpan)
	}
	self, err := os.Executable()
	if err != nil {
		return rssProbe{}, fmt.Errorf("rss probe: %w", err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, self, rssProbeArg, string(mode))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return rssProbe{}, fmt.Errorf("rss probe (%s): %w: %s", mode, err, stderr.Bytes())
	}
	var p rssProbe
	if err := json.Unmarshal(stdout.Bytes(), &p); err != nil {
		return rssProbe{}, fmt.Errorf("rss probe output %q: %w", stdout.Bytes(), err)
	}
	return p, nil
}

// concurrentRSS runs 8 goroutines of trivial tier-3 programs on a gateway
// in the given isolation mode for d, sampling resident memory every 50 ms
// and once after the last run: this process's in thread mode, this
// process's and its descendants' (the sandbox worker processes) in process
// mode.
func concurrentRSS(ctx context.Context, mode config.Isolation, d time.Duration) (rssProbe, error) {
	var p rssProbe
	g, err := benchGateway(ctx, mode)
	if err != nil {
		return p, err
	}
	defer g.Close()
	p.Base, _, p.Procs = sampleRSS(mode)
	p.BasePSS, _ = samplePSS(mode)
	rctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	counts := make([]int64, 8)
	for i := range 8 {
		wg.Go(func() {
			for rctx.Err() == nil {
				if r := g.Engine.Execute(ctx, codemode.Request{Code: "const x = 1;\nreturn x"}); r.IsError {
					mu.Lock()
					firstErr = errors.Join(firstErr, errors.New(r.Text))
					mu.Unlock()
					return
				}
				counts[i]++
			}
		})
	}
	p.Peak, p.Gateway = p.Base, p.Base
	p.PeakPSS, p.GatewayPSS = p.BasePSS, p.BasePSS
	sample := func() {
		total, own, procs := sampleRSS(mode)
		p.Procs = max(p.Procs, procs)
		if total > p.Peak {
			p.Peak, p.Gateway = total, own
		}
		if pss, ownPSS := samplePSS(mode); pss > p.PeakPSS {
			p.PeakPSS, p.GatewayPSS = pss, ownPSS
		}
	}
	tick := time.NewTicker(50 * time.Millisecond)
	for rctx.Err() == nil {
		select {
		case <-tick.C:
			sample()
		case <-rctx.Done():
		}
	}
	tick.Stop()
	wg.Wait()
	sample() // the last runs' memory, still held by the open gateway
	for _, c := range counts {
		p.Runs += c
	}
	return p, firstErr
}

// samplePSS is one PSS sample in MB, like [sampleRSS]: the total and
// this process's own share.
func samplePSS(mode config.Isolation) (total, own int64) {
	own = smapsPSS("self") >> 20
	if mode == config.IsolationThread {
		return own, own
	}
	return treePSS() >> 20, own
}

// sampleRSS is one RSS sample in MB for a probe in the given mode: the
// total, this process's own share and the number of processes counted.
func sampleRSS(mode config.Isolation) (total, own int64, procs int) {
	own = statusRSS("self") >> 20
	if mode == config.IsolationThread {
		return own, own, 1
	}
	tree, n := treeRSS()
	return tree >> 20, own, n
}
