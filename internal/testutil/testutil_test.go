package testutil

import (
	"fmt"
	"testing"
	"time"
)

// recorder is a testing.TB whose Fatalf records instead of stopping.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestEventuallyReturnsOnceCondHolds(t *testing.T) {
	r := &recorder{TB: t}
	calls := 0
	Eventually(r, time.Hour, func() bool { calls++; return calls == 3 }, "the third call")
	if r.failed != "" || calls != 3 {
		t.Fatalf("failed %q after %d calls", r.failed, calls)
	}
}

func TestEventuallyFailsWithTheMessage(t *testing.T) {
	r := &recorder{TB: t}
	Eventually(r, time.Millisecond, func() bool { return false }, "worker %d to %s", 7, "die")
	if want := "gave up after 1ms waiting for worker 7 to die"; r.failed != want {
		t.Fatalf("failure = %q, want %q", r.failed, want)
	}
}
