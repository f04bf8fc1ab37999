package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/v8sandbox"
)

func init() {
	RegisterSection(Section{Title: "Engine wrapper and the startup snapshot (issue 38)", Name: "engine", Order: 12, Run: engineSection})
}

// The engine's contenders, side by side per isolation mode: the direct call
// of `big.small` on the backend manager (the floor), the pool's own trivial
// run (the report's `v8-pool`, `v8-proc` in process mode), a trivial run
// through Engine.Execute (tier 3) and one tool call through tier 3.
const (
	engineDirect  = "direct"
	enginePool    = "pool"
	engineTrivial = "trivial"
	engineOne     = "one"
)

// figEngine is the p50 of one of the engine's contenders in an isolation
// mode, from the engine section (nanoseconds).
func figEngine(contender, mode string) string { return "engine/" + contender + "/" + mode }

// figSnapshot is the per-run cost of a snapshot probe's measurement
// ("context": a trivial run back to back, its next context made on the
// path; "isolate": a fresh isolate per run) with the startup snapshot "on"
// or "off" (nanoseconds).
func figSnapshot(what, state string) string { return "snapshot/" + what + "/" + state }

// engineSection measures issue 38's engine rows with the contenders taking
// turns, in each isolation mode, then the startup snapshot's gain in fresh
// processes with and without it.
func engineSection(ctx context.Context, cfg ReportConfig) (string, error) {
	var b strings.Builder
	b.WriteString("Through the real gateway engine (`Engine.Execute`, tier 3 forced, an in-process go-sdk backend), the four contenders taking turns in rotating rounds (5ms apart): the direct call on the backend manager (the floor), the pool's own trivial run (the report's `v8-pool`; `v8-proc` in process mode), a trivial tier-3 run and a run making one tool call.\n\n")
	b.WriteString("| isolation | direct call | pool trivial | engine trivial | engine, one call | engine trivial ÷ pool | one call minus direct |\n|---|---:|---:|---:|---:|---:|---:|\n")
	rounds, per := 4, max(iterations(cfg)/4, 10)
	if cfg.Smoke {
		rounds, per = 1, 2
	}
	for _, mode := range []config.Isolation{config.IsolationThread, config.IsolationProcess} {
		p50, err := engineContenders(ctx, cfg, mode, rounds, per)
		if err != nil {
			return "", fmt.Errorf("engine contenders (%s): %w", mode, err)
		}
		for name, d := range p50 {
			cfg.Figures.SetDuration(figEngine(name, string(mode)), d)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | ×%.2f | %s |\n", mode, fmtDur(p50[engineDirect]), fmtDur(p50[enginePool]),
			fmtDur(p50[engineTrivial]), fmtDur(p50[engineOne]), float64(p50[engineTrivial])/float64(p50[enginePool]),
			fmtDur(max(p50[engineOne]-p50[engineDirect], 0)))
	}

	b.WriteString("\nThe startup snapshot (`v8sandbox/snapshot.go`): the same trivial workload on a one-thread pool, in fresh processes of this binary started alternately with and without it (`ISOGATE_V8_SNAPSHOT=off`), 3 of each; each figure is the median of the three processes' per-run cost, runs back to back (1 ÷ throughput over 0.6 s after a warm-up).\n\n")
	probes := 3
	if cfg.Smoke {
		probes = 1
	}
	snap, err := snapshotProbes(ctx, probes)
	if err != nil {
		b.WriteString("Not measured: " + mdEscape(err.Error()) + "\n")
		return b.String(), nil
	}
	b.WriteString("| per run | with the snapshot | without | with ÷ without |\n|---|---:|---:|---:|\n")
	for _, row := range []struct{ what, label string }{
		{"context", "trivial run, a fresh context each (the pool's path; making the next context is on it when runs come back to back)"},
		{"isolate", "trivial run, a fresh isolate each (`RecycleAfter: 1`, the `v8-fresh` variant)"},
	} {
		on, off := snap[row.what+"/on"], snap[row.what+"/off"]
		cfg.Figures.SetDuration(figSnapshot(row.what, "on"), on)
		cfg.Figures.SetDuration(figSnapshot(row.what, "off"), off)
		fmt.Fprintf(&b, "| %s | %s | %s | ×%.2f |\n", row.label, fmtDur(on), fmtDur(off), float64(on)/float64(off))
	}
	return b.String(), nil
}

// engineContenders samples the four contenders in turns on a gateway in
// mode and returns each one's p50.
func engineContenders(ctx context.Context, cfg ReportConfig, mode config.Isolation, rounds, per int) (map[string]time.Duration, error) {
	g, err := benchGateway(ctx, mode, bigBackend())
	if err != nil {
		return nil, err
	}
	defer g.Close()
	pool := NewV8Pool(8)
	if mode == config.IsolationProcess {
		if pool, err = NewV8Proc(8, cfg.WorkerCommand); err != nil {
			return nil, err
		}
	}
	defer pool.Close()
	trivial := WorkloadByName(WorkloadTrivial)
	run := func(code, want string) func() error {
		return func() error {
			if r := g.Engine.Execute(ctx, codemode.Request{Code: code}); r.IsError || r.Text != want {
				return fmt.Errorf("%s: %.200s", code, r.Text)
			}
			return nil
		}
	}
	names := []string{engineDirect, enginePool, engineTrivial, engineOne}
	samples, err := sampleInTurns(ctx, []func() error{
		func() error {
			_, err := g.Backends.Call(ctx, "big", &mcp.CallToolParams{Name: "small", Arguments: map[string]any{}})
			return err
		},
		func() error {
			_, err := pool.Run(ctx, trivial)
			return err
		},
		run("const x = 1;\nreturn x", "1"),
		run("const r = await big.small({});\nreturn r.ok", "true"),
	}, 10, rounds, per)
	if err != nil {
		return nil, err
	}
	p50 := map[string]time.Duration{}
	for i, s := range samples {
		slices.Sort(s)
		p50[names[i]] = s[len(s)/2]
	}
	return p50, nil
}

// snapshotProbeArg is the first argument that makes a binary calling
// [ServeWorkerIfRequested] measure the snapshot probe and exit.
const snapshotProbeArg = "snapshot-probe"

// snapshotProbeSpan is how long each of the probe's measurements runs.
const snapshotProbeSpan = 600 * time.Millisecond

// snapshotProbe is what one probe process measured: per-run cost in
// nanoseconds of "context" and "isolate" runs.
type snapshotProbe map[string]time.Duration

// runSnapshotProbeIfRequested serves the probe in a child process.
func runSnapshotProbeIfRequested() {
	if len(os.Args) < 2 || os.Args[1] != snapshotProbeArg {
		return
	}
	p, err := measureSnapshotProbe(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "snapshot-probe:", err)
		os.Exit(1)
	}
	_ = json.NewEncoder(os.Stdout).Encode(p)
	os.Exit(0)
}

// measureSnapshotProbe measures, in this process (with or without the
// snapshot, as its environment says), the per-run cost of trivial runs
// back to back on a one-thread pool and on a fresh-isolate pool.
func measureSnapshotProbe(ctx context.Context) (snapshotProbe, error) {
	w := WorkloadByName(WorkloadTrivial)
	p := snapshotProbe{}
	for _, v := range []struct {
		what string
		make func(int) *RunnerVariant
	}{{"context", NewV8Pool}, {"isolate", NewV8Fresh}} {
		variant := v.make(1)
		per, err := backToBack(ctx, variant, w)
		variant.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.what, err)
		}
		p[v.what] = per
	}
	return p, nil
}

// backToBack is the per-run cost of w on v, runs back to back for
// snapshotProbeSpan after a warm-up.
func backToBack(ctx context.Context, v Variant, w *Workload) (time.Duration, error) {
	for range 20 {
		if _, err := v.Run(ctx, w); err != nil {
			return 0, err
		}
	}
	start, runs := time.Now(), 0
	for time.Since(start) < snapshotProbeSpan {
		if _, err := v.Run(ctx, w); err != nil {
			return 0, err
		}
		runs++
	}
	return time.Since(start) / time.Duration(runs), nil
}

// snapshotProbes starts n probe processes with the snapshot and n without,
// alternately, and returns the median of each figure ("context/on", …).
func snapshotProbes(ctx context.Context, n int) (map[string]time.Duration, error) {
	if !probeCapable {
		return nil, errors.New("this binary does not serve the probe (its main does not call bench.ServeWorkerIfRequested)")
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this binary: %w", err)
	}
	got := map[string][]time.Duration{}
	for range n {
		for _, state := range []string{"on", "off"} {
			cmd := exec.CommandContext(ctx, exe, snapshotProbeArg)
			setting := "" // the snapshot on, whatever this process was started with
			if state == "off" {
				setting = "off"
			}
			cmd.Env = append(os.Environ(), v8sandbox.SnapshotEnv+"="+setting)
			var out, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &stderr
			if err := cmd.Run(); err != nil {
				return nil, fmt.Errorf("snapshot probe (%s): %w: %s", state, err, strings.TrimSpace(stderr.String()))
			}
			var p snapshotProbe
			if err := json.Unmarshal(out.Bytes(), &p); err != nil {
				return nil, fmt.Errorf("snapshot probe (%s) output: %w", state, err)
			}
			for what, d := range p {
				got[what+"/"+state] = append(got[what+"/"+state], d)
			}
		}
	}
	med := map[string]time.Duration{}
	for k, ds := range got {
		slices.Sort(ds)
		med[k] = ds[len(ds)/2]
	}
	return med, nil
}
