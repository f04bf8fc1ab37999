package bench

import (
	"context"
	"fmt"
	"strings"

	"github.com/isogate/isogate/config"
)

func init() {
	RegisterSection(Section{Title: "RSS under process isolation (issue 26)", Order: 9, Run: processRSSSection})
}

// processRSSSection measures the resident memory of 8 concurrent trivial
// runs in process mode, the gateway and its sandbox worker processes
// together (the thread-mode figure is the issue-13 targets row), and
// records it for the issue-26 table.
func processRSSSection(ctx context.Context, cfg ReportConfig) (string, error) {
	mode := config.IsolationProcess
	p, err := rssInFreshProcess(ctx, mode)
	if err != nil {
		return "", err
	}
	p.record(cfg.Figures, mode)
	where := "a fresh probe process"
	if !p.Fresh {
		where = "this process (earlier sections' Go heap included)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "8 goroutines run trivial tier-3 programs (`Engine.Execute`) for %s on a gateway in process isolation with the default `sandbox.max_concurrent` (its runs spread over sandbox worker processes), in %s. Resident memory of the gateway process and all its descendants, summed, sampled every 50 ms (a page the processes share, such as the binary's code, counts once per process). Beside it, PSS (`Pss` of `/proc/<pid>/smaps_rollup`, summed the same way): a page shared by n processes counts 1/n in each, so the sum is what the host really pays.\n\n", rssProbeSpan, where)
	b.WriteString("| | before the runs | peak | gateway process at the peak | processes | runs |\n|---|---:|---:|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| RSS | %d MB | **%d MB** | %d MB | %d | %d |\n", p.Base, p.Peak, p.Gateway, p.Procs, p.Runs)
	fmt.Fprintf(&b, "| PSS | %d MB | **%d MB** | %d MB | | |\n", p.BasePSS, p.PeakPSS, p.GatewayPSS)
	return b.String(), nil
}
