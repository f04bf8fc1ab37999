package typecheck

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/testutil"
)

// An in-process checker reports its state as operators see it: not
// started, then ready once loaded, in the gateway's process, its heap
// after a check, its code cache file (missed, then written).
func TestCheckerStatus(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "typecheck")
	c := New(Options{Timeout: time.Minute, CacheDir: dir})
	defer c.Close()
	if st := c.Status(); st.State != StateNotStarted || st.Where != WhereInProcess || st.Worker != nil {
		t.Fatalf("before the load: %+v", st)
	}
	if err := c.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Check(context.Background(), counterDecls, certainCases[0].program, false); err != nil {
		t.Fatal(err)
	}
	st := c.Status()
	cc := st.CodeCache
	if st.State != StateReady || st.Error != "" || st.HeapUsedBytes <= 0 || st.Restarts != 0 {
		t.Errorf("loaded: %+v; want ready, its heap, no restart", st)
	}
	if cc.Path != filepath.Join(dir, codeCacheFileName()) || cc.SizeBytes <= 0 || cc.Misses != 1 || cc.Written != 1 || cc.Hits != 0 {
		t.Errorf("code cache %+v; want %s missed, then written", cc, dir)
	}
}

// A checker whose load failed says so, and why.
func TestCheckerStatusFailed(t *testing.T) {
	c := New(Options{Timeout: time.Minute})
	defer c.Close()
	c.res.Close() // nothing can load now
	if err := c.Warm(context.Background()); err == nil {
		t.Fatal("a closed checker loaded")
	}
	if st := c.Status(); st.State != StateFailed || !strings.Contains(st.Error, "closed") {
		t.Errorf("after a failed load: %+v; want failed, why", st)
	}
}

// Tally counts checks by outcome; the mean is over the checks answered.
func TestTally(t *testing.T) {
	var tl Tally
	tl.Record(OutcomeOK, 10*time.Millisecond, nil)
	tl.Record(OutcomeRefused, 30*time.Millisecond, nil)
	tl.Record(OutcomeTimeout, 2*time.Second, errors.New("deadline"))
	tl.Record(OutcomeSkipped, 0, nil)
	tl.Record(OutcomeFailed, time.Millisecond, errors.New("worker died"))
	tl.Record(OutcomeCancelled, time.Millisecond, nil)
	got := tl.Checks()
	want := Checks{OK: 1, Refused: 1, Failed: 1, Timeout: 1, Skipped: 1, Cancelled: 1, MeanMS: 20, LastError: "worker died"}
	if got != want {
		t.Errorf("%+v, want %+v", got, want)
	}
}

// A checker whose background load failed (here its heap cap is too small
// for the compiler) loads again when a run next asks for it, once the
// backoff has passed, instead of leaving the process unchecked for good.
func TestCheckerLoadRetried(t *testing.T) {
	c := New(Options{Timeout: time.Minute, HeapMB: 8})
	c.retryBase = time.Millisecond
	defer c.Close()
	c.WarmInBackground()
	testutil.Eventually(t, time.Minute, func() bool { return c.Status().State == StateFailed }, "the load to fail")
	if st := c.Status(); c.Ready() || !strings.Contains(st.Error, "heap") {
		t.Fatalf("after a failed load: %+v; want failed, why", st)
	}
	first := c.res.Stats().Builds
	testutil.Eventually(t, time.Minute, func() bool {
		c.WarmInBackground() // as each run does while the checker is not ready
		return c.res.Stats().Builds > first
	}, "a second load")
}
