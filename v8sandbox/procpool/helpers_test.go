package procpool

import (
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/testutil"
)

// workerCommand starts this test binary as a worker (see TestMain).
func workerCommand(t testing.TB) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, WorkerCommand}
}

// quietLogger keeps the log in memory and prints it only if the test
// fails; a data race reported by a worker fails the test.
func quietLogger(t testing.TB) *slog.Logger { return testutil.QuietLogger(t) }

func slogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// newTestPool starts a pool of test-binary workers, closed with the test.
func newTestPool(t testing.TB, opts Options) *Pool {
	t.Helper()
	if opts.Command == nil {
		opts.Command = workerCommand(t)
	}
	if opts.Logger == nil {
		opts.Logger = quietLogger(t)
	}
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// awaitState waits until cond holds, checking it again each time the
// pool's state changes (p.changed is closed on every change of its
// processes, slots and counters), and reports whether it held within
// timeout.
func awaitState(p *Pool, timeout time.Duration, cond func() bool) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		// Take the channel before checking: a change after the check
		// closes it, so none is missed.
		p.mu.Lock()
		changed := p.changed
		p.mu.Unlock()
		if cond() {
			return true
		}
		select {
		case <-changed:
		case <-t.C:
			return false
		}
	}
}

// waitAllStarted waits until every slot of p holds a started worker, so
// that where a run goes does not depend on how fast the workers start.
func waitAllStarted(t testing.TB, p *Pool) {
	t.Helper()
	waitState(t, p, workerStartTimeout, "every slot's worker to start", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, s := range p.slots {
			if s.cur == nil {
				return false
			}
		}
		return true
	})
}

// waitState is awaitState failing the test on timeout.
func waitState(t testing.TB, p *Pool, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !awaitState(p, timeout, cond) {
		t.Fatalf("gave up after %v waiting for %s; stats %+v", timeout, what, p.Stats())
	}
}
