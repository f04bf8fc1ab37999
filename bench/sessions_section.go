package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func init() {
	RegisterSection(Section{Title: "A thousand sessions (issue 44)", Name: "sessions", Order: 31, OptIn: true, Run: sessionsSection})
}

// Thousand-sessions defaults: ISOGATE_SESSIONS_STEPS (comma-separated),
// ISOGATE_SESSIONS_HOLD, ISOGATE_SESSIONS_EVERY, ISOGATE_SESSIONS_STATEFUL
// and ISOGATE_BIN (a built isogate binary) override them.
var (
	defaultSessionsSteps = []int{100, 250, 500, 1000}
	quickSessionsSteps   = []int{50, 100}
)

const (
	defaultSessionsHold  = 30 * time.Second
	quickSessionsHold    = 10 * time.Second
	defaultSessionsEvery = 5 * time.Second
)

// sessionsSection ramps client sessions over two isogate replicas on
// Redis (opt-in: minutes long) and reports each step.
func sessionsSection(ctx context.Context, cfg ReportConfig) (string, error) {
	sc := sessionsConfig{Steps: defaultSessionsSteps, Hold: defaultSessionsHold, Every: defaultSessionsEvery,
		Stateful: os.Getenv("ISOGATE_SESSIONS_STATEFUL") != ""}
	if cfg.Quick || cfg.Smoke {
		sc.Steps, sc.Hold = quickSessionsSteps, quickSessionsHold
	}
	if steps, err := parseSteps(os.Getenv("ISOGATE_SESSIONS_STEPS")); err != nil {
		return "", err
	} else if steps != nil {
		sc.Steps = steps
	}
	if d, err := time.ParseDuration(os.Getenv("ISOGATE_SESSIONS_HOLD")); err == nil && d > 0 {
		sc.Hold = d
	}
	if d, err := time.ParseDuration(os.Getenv("ISOGATE_SESSIONS_EVERY")); err == nil && d > 0 {
		sc.Every = d
	}
	bin, err := isogateBinary(ctx, cfg)
	if err != nil {
		return "", err
	}
	sc.Bin = bin
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "ISOGATE_SANDBOX__") || strings.HasPrefix(kv, "ISOGATE_SERVER__") || strings.HasPrefix(kv, "ISOGATE_BACKENDS__") {
			sc.Overrides = append(sc.Overrides, kv)
		}
	}
	steps, err := runSessions(ctx, sc, func(s sessionsStep) {
		cfg.progress("sessions: %d sessions: %d runs (%.0f/s), %d errors, p50 %s, p99 %s, gateway run %s, RSS %d+%d MB, fds %d+%d, CPU %.2f+%.2f, clients %.2f, machine %.0f%%, redis %d MB",
			s.Sessions, s.Runs, s.RunsPerSec, s.Errors, s.P50.Round(time.Millisecond), s.P99.Round(time.Millisecond),
			s.GatewayRun.Round(100*time.Microsecond),
			s.RSS[0]>>20, s.RSS[1]>>20, s.FDs[0], s.FDs[1], s.CPU[0], s.CPU[1], s.ClientCPU, 100*s.MachineBusy, s.RedisMemory>>20)
	})
	if err != nil {
		return "", err
	}
	return sessionsReport(sc, steps), nil
}

// parseSteps reads a comma-separated list of session counts ("" : nil).
func parseSteps(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var steps []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("ISOGATE_SESSIONS_STEPS: %q is not a positive count", f)
		}
		steps = append(steps, n)
	}
	return steps, nil
}

// isogateBinary returns ISOGATE_BIN, or builds cmd/isogate of the
// repository holding the bench module (its parent directory) into a
// temporary directory.
func isogateBinary(ctx context.Context, cfg ReportConfig) (string, error) {
	if bin := os.Getenv("ISOGATE_BIN"); bin != "" {
		return bin, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("sessions: %w", err)
	}
	root := wd
	for ; ; root = filepath.Dir(root) {
		if _, err := os.Stat(filepath.Join(root, "cmd", "isogate", "main.go")); err == nil {
			break
		}
		if filepath.Dir(root) == root {
			return "", fmt.Errorf("sessions: no cmd/isogate above %s: set ISOGATE_BIN to a built isogate", wd)
		}
	}
	out := filepath.Join(os.TempDir(), "isogate-sessions-bench")
	cfg.progress("sessions: building %s/cmd/isogate", root)
	if err := goBuild(ctx, root, "./cmd/isogate", out); err != nil {
		return "", fmt.Errorf("sessions: %w", err)
	}
	return out, nil
}

// sessionsReport renders the ramp's steps and where it stopped.
func sessionsReport(sc sessionsConfig, steps []sessionsStep) string {
	var b strings.Builder
	mode := "stateless (`server.stateless: true`: 2026-07-28 clients send each request to either replica in turn; a 2025-11-25 client, pinned to one replica, gets a temporary session per request)"
	if sc.Stateful {
		mode = "with protocol sessions (`server.stateless: false`: every client pinned to the replica it connected to, which holds its session)"
	}
	defaults := "defaults: process isolation, `sandbox.max_concurrent` 8"
	if len(sc.Overrides) > 0 {
		defaults = "defaults but for `" + strings.Join(sc.Overrides, "`, `") + "` from the environment"
	}
	fmt.Fprintf(&b, "Two replicas of the isogate binary (`isogate serve --http`, %s) on one redis-server (`store.redis_url`), %s, one principal (loopback, no authentication), an MCP backend over streamable HTTP in the bench process. go-sdk clients, half asking for MCP 2026-07-28 and half for 2025-11-25, each running a small program (one backend call and a loop: `%s`) every %s from a random offset. The sessions are ramped through %s; each step is measured for %s once its sessions are connected, and the ramp stops after a step with errors or a p99 over ten times the first step's and over a second. Errors are counted from the start of a step's ramp; latencies over its hold. RSS and file descriptors (`/proc/PID/fd`) per replica at the end of each hold (RSS: the gateway process; + workers: with its sandbox worker processes), CPU per replica with its workers over the hold (1.00 = one core), the bench process's CPU (the clients and the backend), the whole machine's busy share of its 2 cores (/proc/stat: other work on the machine included), the replicas' mean tier-3 run as they time it (`isogate_run_duration_seconds{tier=\"v8\"}`) from `/metrics`, Redis `used_memory` (INFO memory). Opt-in: `bench/sessions.sh` (or `go run ./cmd/benchreport -sections sessions`; `-quick`: %v for %s; `ISOGATE_SESSIONS_STEPS`, `ISOGATE_SESSIONS_HOLD`, `ISOGATE_SESSIONS_EVERY`, `ISOGATE_SESSIONS_STATEFUL=1`, `ISOGATE_BIN`; `ISOGATE_SANDBOX__…` and other configuration variables reach the replicas).\n\n",
		defaults, mode, sessionsProgram(1), sc.Every, joinInts(sc.Steps), sc.Hold, quickSessionsSteps, quickSessionsHold)
	b.WriteString("| sessions | runs in hold | runs/s | errors | p50 | p99 | max | run in gateway (mean) | RSS A / B | + workers A / B | fds A / B | CPU A / B | CPU clients | machine busy | Redis memory |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range steps {
		fmt.Fprintf(&b, "| %d | %d | %.1f | %d | %s | %s | %s | %s | %d / %d MB | %d / %d MB | %d / %d | %.2f / %.2f | %.2f | %.0f %% | %.1f MB |\n",
			s.Sessions, s.Runs, s.RunsPerSec, s.Errors, fmtDur(s.P50), fmtDur(s.P99), fmtDur(s.Max), fmtDur(s.GatewayRun),
			s.RSS[0]>>20, s.RSS[1]>>20, s.TreeRSS[0]>>20, s.TreeRSS[1]>>20, s.FDs[0], s.FDs[1], s.CPU[0], s.CPU[1],
			s.ClientCPU, 100*s.MachineBusy, float64(s.RedisMemory)/(1<<20))
	}
	b.WriteString("\n" + sessionsVerdict(sc, steps) + "\n")
	for _, s := range steps {
		for _, e := range s.FirstErrors {
			fmt.Fprintf(&b, "\n- at %d sessions: `%s`", s.Sessions, strings.ReplaceAll(e, "`", "'"))
		}
	}
	if strings.HasSuffix(b.String(), "`") {
		b.WriteString("\n")
	}
	return b.String()
}

// sessionsVerdict says how far the ramp got and why it stopped.
func sessionsVerdict(sc sessionsConfig, steps []sessionsStep) string {
	if len(steps) == 0 {
		return "No step was measured."
	}
	last := steps[len(steps)-1]
	switch {
	case last.Errors > 0:
		return fmt.Sprintf("The ramp stopped at %d sessions: %d errors (the first below).", last.Sessions, last.Errors)
	case sessionsExplodes(steps[0], last):
		return fmt.Sprintf("The ramp stopped at %d sessions: p99 %s against %s at %d sessions.", last.Sessions, fmtDur(last.P99), fmtDur(steps[0].P99), steps[0].Sessions)
	case len(steps) < len(sc.Steps):
		return fmt.Sprintf("The ramp ended at %d sessions (cancelled).", last.Sessions)
	}
	return fmt.Sprintf("Every step held without errors, up to %d sessions.", last.Sessions)
}

// joinInts renders counts comma-separated.
func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
