package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// rssProbeArg is the first argument that makes a binary calling
// [ServeWorkerIfRequested] measure concurrent runs' RSS and exit.
const rssProbeArg = "rss-probe"

// rssProbeSpan is how long the 8 concurrent runs last.
const rssProbeSpan = 3 * time.Second

// rssProbe is the outcome of an RSS measurement.
type rssProbe struct {
	Peak, Base, Runs int64
	// Fresh is true when it ran in a process of its own.
	Fresh bool
}

// probeCapable is set when this binary serves the probe (its main calls
// ServeWorkerIfRequested), so the report can start it as a child.
var probeCapable bool

func runRSSProbeIfRequested() {
	probeCapable = true
	if len(os.Args) < 2 || os.Args[1] != rssProbeArg {
		return
	}
	peak, base, runs, err := concurrentRSS(context.Background(), rssProbeSpan)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rss-probe:", err)
		os.Exit(1)
	}
	_ = json.NewEncoder(os.Stdout).Encode(rssProbe{Peak: peak, Base: base, Runs: runs, Fresh: true})
	os.Exit(0)
}

// rssInFreshProcess measures in a child process when this binary can serve
// the probe (benchreport does), so the figure is not inflated by what
// earlier sections left in this process's heap; elsewhere (go test) it
// measures in this process.
func rssInFreshProcess(ctx context.Context) (rssProbe, error) {
	if !probeCapable {
		peak, base, runs, err := concurrentRSS(ctx, rssProbeSpan)
		return rssProbe{Peak: peak, Base: base, Runs: runs}, err
	}
	self, err := os.Executable()
	if err != nil {
		return rssProbe{}, fmt.Errorf("rss probe: %w", err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, self, rssProbeArg)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return rssProbe{}, fmt.Errorf("rss probe: %w: %s", err, stderr.Bytes())
	}
	var p rssProbe
	if err := json.Unmarshal(stdout.Bytes(), &p); err != nil {
		return rssProbe{}, fmt.Errorf("rss probe output %q: %w", stdout.Bytes(), err)
	}
	return p, nil
}
