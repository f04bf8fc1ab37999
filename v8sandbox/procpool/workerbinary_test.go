package procpool

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/isogate/isogate/v8sandbox"
)

// A worker refuses to serve when its parent's startup key differs from its
// own (a dedicated worker binary of another build), and the pool does not
// start; with its own key it serves.
func TestWorkerRefusesAnotherStartupKey(t *testing.T) {
	other := bytes.Clone(v8sandbox.StartupKey())
	other[0] ^= 1
	var log bytes.Buffer
	p, err := New(Options{Command: workerCommand(t), Workers: 1, SlotsPerWorker: 1, startupKey: other, Logger: slogTo(&log)})
	if err == nil {
		p.Close()
		t.Fatal("a worker served under another startup key")
	}
	if !strings.Contains(log.String(), "startup scripts differ from its parent") {
		t.Errorf("the worker's refusal is not in the log: %v\n%s", err, log.String())
	}
	p = newTestPool(t, Options{Workers: 1, SlotsPerWorker: 1, startupKey: v8sandbox.StartupKey()})
	if got := runValue(t, p, `6 * 7`); got != "42" {
		t.Fatalf("with its own key: %s", got)
	}
}

// Without a Command, a pool looks for the dedicated worker binary in
// WorkerDir: none there, or one that does not start (a stale build), and
// its workers start from this binary, saying why in the log.
func TestDedicatedWorkerBinaryFallsBack(t *testing.T) {
	stale := t.TempDir()
	if err := os.WriteFile(filepath.Join(stale, WorkerBinary), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dir, want string }{
		{t.TempDir(), "no dedicated worker binary"},
		{stale, "the dedicated worker binary did not start"},
	} {
		var log bytes.Buffer
		p, err := New(Options{WorkerDir: c.dir, Workers: 1, SlotsPerWorker: 1, Logger: slogTo(&log)})
		if err != nil {
			t.Fatalf("%s: %v", c.dir, err)
		}
		if got := runValue(t, p, `6 * 7`); got != "42" {
			t.Errorf("%s: %s", c.dir, got)
		}
		p.Close()
		if !strings.Contains(log.String(), c.want) || p.opts.Command[0] == filepath.Join(c.dir, WorkerBinary) {
			t.Errorf("%s: command %q, want this binary and %q in the log:\n%s", c.dir, p.opts.Command, c.want, log.String())
		}
	}
}

// runValue runs source on p and returns its value (the test fails on an
// error).
func runValue(t *testing.T, p *Pool, source string) string {
	t.Helper()
	res, err := p.Run(t.Context(), v8sandbox.Job{Source: source, AwaitResult: true}, nil)
	if err != nil {
		t.Fatalf("run %q: %v", source, err)
	}
	return string(res.Value)
}

// A dedicated worker binary that never answers the handshake costs the
// first pool its start timeout only: every later pool of the process starts
// from this binary at once, without spawning the hanging one again (the
// gateway builds two pools; each waited 20 s for it).
func TestHangingWorkerBinaryIsTriedOnce(t *testing.T) {
	dir := t.TempDir()
	spawned := filepath.Join(dir, "spawned")
	script := "#!/bin/sh\necho started >> '" + spawned + "'\nexec sleep 3600\n"
	if err := os.WriteFile(filepath.Join(dir, WorkerBinary), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		var log bytes.Buffer
		// The timeout only bounds the wait for a script that never answers.
		p, err := New(Options{WorkerDir: dir, Workers: 1, SlotsPerWorker: 1, Logger: slogTo(&log), startTimeout: time.Second})
		if err != nil {
			t.Fatalf("pool %d: %v", i, err)
		}
		if got := runValue(t, p, `6 * 7`); got != "42" {
			t.Errorf("pool %d: %s", i, got)
		}
		p.Close()
		if p.opts.Command[0] == filepath.Join(dir, WorkerBinary) {
			t.Errorf("pool %d runs the hanging binary", i)
		}
		if !strings.Contains(log.String(), "did not") {
			t.Errorf("pool %d does not say why it starts from this binary:\n%s", i, log.String())
		}
	}
	b, err := os.ReadFile(spawned)
	if err != nil {
		t.Fatalf("the hanging binary never started: %v", err)
	}
	if n := strings.Count(string(b), "started"); n != 1 {
		t.Errorf("the hanging binary was started %d times, want once", n)
	}
}
