package backend

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/isogate/isogate/v8sandbox"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/testutil"
)

// gatedSpec returns an in-process calc backend whose connections fail with
// "connection refused (test)" while up is false.
func gatedSpec(name string, up *atomic.Bool, dials *atomic.Int32) Spec {
	spec := inProcess(name, newCalcServer())
	dial := spec.Dial
	spec.Dial = func(ctx context.Context) (mcp.Transport, error) {
		dials.Add(1)
		if !up.Load() {
			return nil, errors.New("connection refused (test)")
		}
		return dial(ctx)
	}
	return spec
}

// heldSpec returns an in-process calc backend whose connection attempts
// block until release is closed.
func heldSpec(name string, release <-chan struct{}) Spec {
	spec := inProcess(name, newCalcServer())
	dial := spec.Dial
	spec.Dial = func(ctx context.Context) (mcp.Transport, error) {
		select {
		case <-release:
			return dial(ctx)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return spec
}

func TestWaitReadyStates(t *testing.T) {
	release := make(chan struct{})
	missing := "/nonexistent/isogate-wait-ready"
	m := startManager(t, Options{
		Specs: []Spec{
			inProcess("calc", newCalcServer()),
			heldSpec("slow", release),
			{Backend: config.Backend{Name: "dead", Transport: config.TransportStdio, Command: missing}},
		},
		StartWait:     time.Minute,
		RetryCooldown: time.Hour,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// A backend whose command does not exist: the error names the backend,
	// says it is unavailable and gives the cause.
	err := m.WaitReady(ctx, "dead")
	var ue *UnavailableError
	if !errors.As(err, &ue) || v8sandbox.CodeOf(err) != CodeUnavailable ||
		!strings.HasPrefix(err.Error(), `backend "dead" is unavailable: `) ||
		!strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("WaitReady(dead) = %v (code %q)", err, v8sandbox.CodeOf(err))
	}
	if _, err := m.CallTool(ctx, "dead", "x", nil); v8sandbox.CodeOf(err) != CodeUnavailable || !strings.Contains(err.Error(), missing) {
		t.Fatalf("call to dead backend: %v", err)
	}

	if err := m.WaitReady(ctx, "calc"); err != nil {
		t.Fatalf("WaitReady(calc) = %v", err)
	}
	if err := m.WaitReady(ctx, "nope"); v8sandbox.CodeOf(err) != CodeUnknownBackend {
		t.Fatalf("WaitReady(nope) = %v", err)
	}

	connecting, down := m.NotReady()
	if !slicesEqual(connecting, []string{"slow"}) || !slicesEqual(down, []string{"dead"}) {
		t.Fatalf("NotReady = %v, %v", connecting, down)
	}

	// A call to a starting backend waits for it, then runs.
	done := make(chan error, 1)
	go func() {
		_, err := m.CallTool(ctx, "slow", "add", map[string]any{"a": 1, "b": 2})
		done <- err
	}()
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("call to a starting backend: %v", err)
	}
	if connecting, _ := m.NotReady(); len(connecting) != 0 {
		t.Fatalf("still connecting: %v", connecting)
	}
}

func TestWaitReadyBoundedByStartWait(t *testing.T) {
	release := make(chan struct{}) // never closed
	m := startManager(t, Options{Specs: []Spec{heldSpec("slow", release)}, StartWait: 20 * time.Millisecond})
	err := m.WaitReady(context.Background(), "slow")
	var se *StartingError
	if !errors.As(err, &se) || v8sandbox.CodeOf(err) != CodeStarting || err.Error() != `backend "slow" is still starting` {
		t.Fatalf("WaitReady = %v", err)
	}
	// The caller's context bounds the wait as well.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m2 := startManager(t, Options{Specs: []Spec{heldSpec("slow2", release)}, StartWait: time.Hour})
	if err := m2.WaitReady(ctx, "slow2"); !errors.Is(err, context.Canceled) || v8sandbox.CodeOf(err) != "" {
		t.Fatalf("WaitReady with a cancelled context = %v", err)
	}
}

// waitRetryAllowed waits until an on-demand retry of b is allowed (the last
// attempt ended at least RestartBackoffBase ago).
func waitRetryAllowed(t *testing.T, m *Manager, name string) {
	b := m.current().backends[name]
	// The interval is time passing, which nothing announces.
	testutil.Eventually(t, 20*time.Second, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return !b.attempting && time.Since(b.lastAttempt) >= b.opts.RestartBackoffBase
	}, "the on-demand retry interval")
}

func TestExhaustedBudgetRetriedOnDemand(t *testing.T) {
	var up atomic.Bool
	var dials atomic.Int32
	m := startManager(t, Options{
		Specs:              []Spec{gatedSpec("flaky", &up, &dials)},
		RestartBudget:      1,
		RestartWindow:      time.Hour,
		RestartBackoffBase: time.Millisecond,
		RestartBackoffMax:  2 * time.Millisecond,
		RetryCooldown:      time.Hour,
		StartWait:          time.Minute,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.WaitHealthy(ctx); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("WaitHealthy = %v, want ErrUnavailable", err)
	}
	st := statusOf(t, m, "flaky")
	if st.NextRetry.IsZero() || time.Until(st.NextRetry) < 30*time.Minute ||
		!strings.Contains(st.LastError, "restart budget exhausted") || !strings.Contains(st.LastError, "next retry at") {
		t.Fatalf("status of an exhausted backend: %+v", st)
	}

	// Still failing: the call makes one attempt and reports its cause.
	waitRetryAllowed(t, m, "flaky")
	before := dials.Load()
	_, err := m.CallTool(ctx, "flaky", "add", nil)
	if v8sandbox.CodeOf(err) != CodeUnavailable || !strings.Contains(err.Error(), "connection refused (test)") || dials.Load() != before+1 {
		t.Fatalf("call to exhausted backend: %v (dials %d → %d)", err, before, dials.Load())
	}

	// Fixed: the next call brings it back without Restart.
	up.Store(true)
	waitRetryAllowed(t, m, "flaky")
	res, err := m.CallTool(ctx, "flaky", "add", map[string]any{"a": 2, "b": 3})
	if err != nil || resultText(t, res) != "5" {
		t.Fatalf("call after the backend recovered: %v", err)
	}
	if st := statusOf(t, m, "flaky"); st.State != StateHealthy || !st.NextRetry.IsZero() || st.LastError != "" {
		t.Fatalf("status after recovery: %+v", st)
	}
}

func TestExhaustedBudgetRetriedAfterCooldown(t *testing.T) {
	var up atomic.Bool
	var dials atomic.Int32
	m := startManager(t, Options{
		Specs:              []Spec{gatedSpec("flaky", &up, &dials)},
		RestartBudget:      1,
		RestartWindow:      time.Hour,
		RestartBackoffBase: time.Millisecond,
		RestartBackoffMax:  2 * time.Millisecond,
		RetryCooldown:      5 * time.Millisecond,
	})
	// The cool-down keeps retrying an exhausted backend; once it works, it
	// is healthy again without any call or Restart.
	testutil.Eventually(t, 20*time.Second, func() bool { return dials.Load() >= 4 }, "a retry after the cool-down")
	up.Store(true)
	waitState(t, m, "flaky", "the backend to recover", func(st Status) bool { return st.State == StateHealthy })
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
