package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/isogate/isogate/v8sandbox/procpool"
)

// workerCommandCase is a sandbox worker command whose start is measured.
type workerCommandCase struct {
	name    string
	command []string
	start   []time.Duration // procpool.New of one worker: until its ready frame
	first   []time.Duration // that worker's first trivial run
	// The worker's start phase by phase (procpool.WorkerStats.Start):
	// when each phase ended and the worker's CPU time by then, and its
	// CPU time once ready (all its threads, from /proc).
	phaseOrder []string
	phaseAt    map[string][]time.Duration
	phaseCPU   map[string][]time.Duration
	readyCPU   []time.Duration
}

// keepPhases records the start of p's one worker.
func (c *workerCommandCase) keepPhases(p *procpool.Pool) {
	ws := p.Stats().Workers
	if len(ws) != 1 {
		return
	}
	if c.phaseAt == nil {
		c.phaseAt, c.phaseCPU = map[string][]time.Duration{}, map[string][]time.Duration{}
	}
	for _, ph := range ws[0].Start {
		if _, seen := c.phaseAt[ph.Name]; !seen {
			c.phaseOrder = append(c.phaseOrder, ph.Name)
		}
		c.phaseAt[ph.Name] = append(c.phaseAt[ph.Name], ph.At)
		if ph.CPU >= 0 {
			c.phaseCPU[ph.Name] = append(c.phaseCPU[ph.Name], ph.CPU)
		}
	}
	if cpu, err := processCPU(ws[0].PID); err == nil {
		c.readyCPU = append(c.readyCPU, cpu)
	}
}

// processCPU is the CPU time of process pid's living threads, from their
// /proc/<pid>/task/<tid>/schedstat (nanoseconds, unlike /proc/<pid>/stat's
// clock ticks).
func processCPU(pid int) (time.Duration, error) {
	files, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(files) == 0 {
		return 0, fmt.Errorf("no threads of %d in /proc: %v", pid, err)
	}
	var total int64
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread ended
		}
		fields := strings.Fields(string(b))
		if len(fields) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", f, err)
		}
		total += ns
	}
	return time.Duration(total), nil
}

// workerPhasesTable renders the start of c's workers phase by phase: the
// p50 of when each phase ended, of the step from the phase before, and of
// the worker's CPU time by then where it could read it.
func workerPhasesTable(c *workerCommandCase) string {
	order := slices.Clone(c.phaseOrder)
	slices.SortStableFunc(order, func(a, b string) int { return int(median(c.phaseAt[a]) - median(c.phaseAt[b])) })
	var b strings.Builder
	b.WriteString("| phase (parent or worker) | ended at, p50 | step from the row above | worker CPU by then, p50 |\n|---|---:|---:|---:|\n")
	var prev time.Duration
	for _, name := range order {
		at := median(c.phaseAt[name])
		cpu := "—"
		if s := c.phaseCPU[name]; len(s) > 0 {
			cpu = ms(median(s)) + " ms"
		}
		fmt.Fprintf(&b, "| %s | %s ms | %s ms | %s |\n", name, ms(at), ms(at-prev), cpu)
		prev = at
	}
	if len(c.readyCPU) > 0 {
		fmt.Fprintf(&b, "| worker CPU once ready (all its threads, `/proc/<pid>/task/*/schedstat`) | | | %s ms |\n", ms(median(c.readyCPU)))
	}
	return b.String()
}

// workerStartCases are the worker commands compared: the bench's own (this
// binary re-executed, unless -worker-cmd), and, outside smoke runs, the
// gateway re-executing itself (`isogate sandbox-worker`) and the dedicated
// worker binary (`isogate-worker sandbox-worker`), built from the
// repository (or ISOGATE_BIN and ISOGATE_WORKER_BIN).
func workerStartCases(ctx context.Context, cfg ReportConfig) ([]*workerCommandCase, error) {
	own := cfg.WorkerCommand
	if len(own) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		own = []string{exe, procpool.WorkerCommand}
	}
	cases := []*workerCommandCase{{name: "this bench binary (`" + filepath.Base(own[0]) + " sandbox-worker`)", command: own}}
	if cfg.Smoke {
		return cases, nil
	}
	gateway, err := isogateBinary(ctx, cfg)
	if err != nil {
		return nil, err
	}
	worker, err := builtBinary(ctx, cfg, "ISOGATE_WORKER_BIN", "isogate-worker")
	if err != nil {
		return nil, err
	}
	return append(cases,
		&workerCommandCase{name: "the gateway re-executed (`isogate sandbox-worker`: no isogate-worker next to it)", command: []string{gateway, procpool.WorkerCommand}},
		&workerCommandCase{name: "the dedicated worker binary (`isogate-worker sandbox-worker`, what `make build` installs next to isogate)", command: []string{worker, procpool.WorkerCommand}}), nil
}

// builtBinary returns the binary env names, or builds cmd/name of the
// repository above the working directory into a temporary directory.
func builtBinary(ctx context.Context, cfg ReportConfig, env, name string) (string, error) {
	if bin := os.Getenv(env); bin != "" {
		return bin, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root := wd
	for ; ; root = filepath.Dir(root) {
		if _, err := os.Stat(filepath.Join(root, "cmd", name, "main.go")); err == nil {
			break
		}
		if filepath.Dir(root) == root {
			return "", fmt.Errorf("no cmd/%s above %s: set %s to a built %s", name, wd, env, name)
		}
	}
	out := filepath.Join(os.TempDir(), name+"-bench")
	cfg.progress("building %s/cmd/%s", root, name)
	if err := goBuild(ctx, root, "./cmd/"+name, out); err != nil {
		return "", err
	}
	return out, nil
}

// measureWorkerStarts takes n samples of each case, the cases taking turns;
// each command first starts one untimed worker (the one that makes the V8
// startup snapshot the later ones start from).
func measureWorkerStarts(ctx context.Context, cases []*workerCommandCase, n int) error {
	one := func(c *workerCommandCase, keep bool) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		t0 := time.Now()
		p, err := procpool.New(procpool.Options{Workers: 1, SlotsPerWorker: procpool.DefaultSlotsPerWorker, Command: c.command, Logger: quietLogger})
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		defer p.Close()
		started := time.Since(t0)
		t1 := time.Now()
		if err := trivialRun(ctx, p, ""); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		if keep {
			c.keepPhases(p)
			c.start = append(c.start, started)
			c.first = append(c.first, time.Since(t1))
		}
		return nil
	}
	for _, c := range cases {
		if err := one(c, false); err != nil {
			return err
		}
	}
	for range n {
		for _, c := range cases {
			if err := one(c, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// workerStartTable renders the cases, against the first of them that is
// the gateway re-executed (or the first).
func workerStartTable(cases []*workerCommandCase) string {
	base := cases[0]
	for _, c := range cases {
		if strings.Contains(c.name, "re-executed") {
			base = c
		}
	}
	var b strings.Builder
	b.WriteString("| worker command | samples | start p50 | its first run p50 | start ÷ the gateway re-executed |\n|---|---:|---:|---:|---:|\n")
	for _, c := range cases {
		fmt.Fprintf(&b, "| %s | %d | %s ms | %s ms | %s |\n", c.name, len(c.start), ms(median(c.start)), ms(median(c.first)),
			times(float64(median(c.start))/float64(median(base.start))))
	}
	return b.String()
}
