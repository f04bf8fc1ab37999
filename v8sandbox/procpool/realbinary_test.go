package procpool

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/sandboxtest"
)

// TestRealBinary drives workers started as `isogate sandbox-worker` from the
// real command, as the gateway will (the other tests use this test binary).
func TestRealBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/isogate")
	}
	t.Parallel() // with TestRunnerSuite (see there)
	bin := filepath.Join(t.TempDir(), "isogate")
	build := exec.Command("go", "build", "-o", bin, "github.com/isogate/isogate/cmd/isogate")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building isogate: %v\n%s", err, out)
	}

	p := newTestPool(t, Options{Command: []string{bin, WorkerCommand}, Workers: 1, SlotsPerWorker: 2})
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

	// A release binary has no escape drill: its source is a comment.
	if res, err := p.Run(context.Background(), v8sandbox.Job{Source: drillPrefix + `{"config_file":"/etc/passwd"}`, AwaitResult: true}, nil); err != nil || string(res.Value) != "null" {
		t.Errorf("escape drill reachable in a release binary: %s %v", res.Value, err)
	}

	// The same command serves as the type checker's worker: it links a
	// checker (internal/typecheck/checkworker registers it), whose worker
	// starts (its compiler loaded) and answers (a malformed request here;
	// checkworker's tests check real programs).
	checker := newTestPool(t, Options{Command: []string{bin, WorkerCommand}, Workers: 1, SlotsPerWorker: 1, Checker: true})
	if res, err := checker.Run(context.Background(), v8sandbox.Job{Source: "{", Limits: v8sandbox.Limits{Timeout: time.Minute}}, nil); err != nil ||
		!strings.Contains(string(res.Value), "malformed check request") {
		t.Errorf("checker worker of the real binary: %s %v", res.Value, err)
	}

	// Hidden from help, and refuses to run by hand.
	out, _ := exec.Command(bin, "help").CombinedOutput()
	if strings.Contains(string(out), WorkerCommand) {
		t.Errorf("help lists %s:\n%s", WorkerCommand, out)
	}
	tty, err := os.Open("/dev/null") // a character device, like a terminal
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	cmd := exec.Command(bin, WorkerCommand)
	cmd.Stdin = tty
	out, err = cmd.CombinedOutput()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 2 || !strings.Contains(string(out), "internal") {
		t.Errorf("by hand: %v %s", err, out)
	}
}
