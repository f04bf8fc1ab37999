package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/procpool"
	"github.com/isogate/isogate/v8sandbox/sandboxtest"
)

// dir holds the isogate-worker binary built once for the tests.
var dir string

// TestMain builds the binary; this test binary serves as the fallback
// worker (its own sandbox-worker command).
func TestMain(m *testing.M) {
	procpool.RunWorkerIfRequested()
	var err error
	if dir, err = os.MkdirTemp("", "isogate-worker"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, procpool.WorkerBinary), ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building isogate-worker:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// A pool without a Command finds the dedicated binary in WorkerDir and its
// workers are that binary, confined layer for layer as workers started
// from the pool's own binary are, and serve runs: host calls, a V8 abort
// typed HEAP_LIMIT, a run after it.
func TestDedicatedWorkerBinary(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	p, err := procpool.New(procpool.Options{WorkerDir: dir, Workers: 1, SlotsPerWorker: 2, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	self, err := procpool.New(procpool.Options{Command: []string{os.Args[0], procpool.WorkerCommand}, Workers: 1, SlotsPerWorker: 2, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer self.Close()

	want := filepath.Join(dir, procpool.WorkerBinary)
	for _, w := range p.Stats().Workers {
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", w.PID)); err != nil || exe != want {
			t.Errorf("worker %d runs %q (%v), want %s", w.PID, exe, err, want)
		}
	}
	got, base := p.Confinement(), self.Confinement()
	if len(got.Layers) == 0 || len(got.Layers) != len(base.Layers) {
		t.Fatalf("confinement %v, the pool's own binary's %v", got, base)
	}
	for _, l := range base.Layers {
		if got.Level(l.Name) != l.Level {
			t.Errorf("layer %s: %q from the dedicated binary, %q from the pool's own", l.Name, got.Level(l.Name), l.Level)
		}
	}

	echo := v8sandbox.HostFunc(func(_ context.Context, _ string, args json.RawMessage) (json.RawMessage, error) { return args, nil })
	res, err := p.Run(context.Background(), v8sandbox.Job{Source: `(async () => [await a(1), s(2)])()`, AwaitResult: true,
		Functions: []v8sandbox.Function{{Name: "a", Async: true}, {Name: "s"}}}, echo)
	if err != nil || string(res.Value) != `[[1],[2]]` {
		t.Fatalf("run: %s %v", res.Value, err)
	}
	_, err = p.Run(context.Background(), v8sandbox.Job{Source: `'x'.repeat(2**27).split('')`}, nil)
	sandboxtest.WantCode(t, err, v8sandbox.CodeHeapLimit)
	if res, err := p.Run(context.Background(), v8sandbox.Job{Source: `"again"`, AwaitResult: true}, nil); err != nil || string(res.Value) != `"again"` {
		t.Fatalf("after the abort: %s %v", res.Value, err)
	}
}

// Run by hand (a character device on stdin, like a terminal), it refuses.
func TestByHand(t *testing.T) {
	tty, err := os.Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	for _, args := range [][]string{{procpool.WorkerCommand}, nil} {
		cmd := exec.Command(filepath.Join(dir, procpool.WorkerBinary), args...)
		cmd.Stdin = tty
		out, err := cmd.CombinedOutput()
		if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 2 || !strings.Contains(string(out), "internal") {
			t.Errorf("%v by hand: %v %s", args, err, out)
		}
	}
}

// A pool of checker workers never tries the dedicated binary (it has no
// checker): trying it failed, was logged as a dead worker, and was
// remembered, so that a pool of programs made after it (the gateway makes
// its checker's pool first when sandbox.typecheck is on) started from the
// gateway's own binary instead.
func TestCheckerPoolLeavesDedicatedBinaryAlone(t *testing.T) {
	var logs strings.Builder
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	// This test binary registers no checker either: the pool may fail to
	// start, what matters is which binary it tried and what it left behind.
	if cp, err := procpool.New(procpool.Options{WorkerDir: dir, Checker: true, Workers: 1, SlotsPerWorker: 1, Logger: logger}); err == nil {
		cp.Close()
	}
	if strings.Contains(logs.String(), "dedicated worker binary did not start") {
		t.Errorf("the checker pool tried the dedicated binary:\n%s", logs.String())
	}
	p, err := procpool.New(procpool.Options{WorkerDir: dir, Workers: 1, SlotsPerWorker: 1, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	want := filepath.Join(dir, procpool.WorkerBinary)
	for _, w := range p.Stats().Workers {
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", w.PID)); err != nil || exe != want {
			t.Errorf("after a checker pool, worker %d runs %q (%v), want %s", w.PID, exe, err, want)
		}
	}
}
