package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/"+name)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %w: %s", name, err, b)
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
