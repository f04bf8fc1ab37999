package procpool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/testutil"
	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/sandboxtest"
)

// sharedPool serves the tests that do not kill or reconfigure workers.
var (
	sharedOnce sync.Once
	shared     *Pool
	sharedErr  error
)

func sharedPool(t *testing.T) *Pool {
	t.Helper()
	sharedOnce.Do(func() {
		shared, sharedErr = New(Options{Command: workerCommand(t), Workers: 2, SlotsPerWorker: 4, Logger: quietLogger(t)})
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

// gate is a host whose "wait" calls block until released; each arrival is
// announced on arrived.
type gate struct {
	arrived chan string
	release chan struct{}
}

func newGate() *gate { return &gate{arrived: make(chan string, 16), release: make(chan struct{})} }

func (g *gate) Call(ctx context.Context, c v8sandbox.HostCall) v8sandbox.HostReply {
	g.arrived <- string(c.Args)
	select {
	case <-g.release:
		return v8sandbox.HostReply{Value: c.Args}
	case <-ctx.Done():
		return v8sandbox.Reply(nil, ctx.Err())
	}
}

func (g *gate) await(t *testing.T) {
	t.Helper()
	select {
	case <-g.arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("host call never arrived")
	}
}

var waitJob = v8sandbox.Job{
	Source:      `(async () => (await wait("x"))[0])()`,
	Functions:   []v8sandbox.Function{{Name: "wait", Async: true}},
	AwaitResult: true,
	Limits:      v8sandbox.Limits{Timeout: 20 * time.Second},
}

// runAsync starts a run and returns its outcome channel.
func runAsync(ctx context.Context, p *Pool, job v8sandbox.Job, host v8sandbox.Host) <-chan outcomeT {
	ch := make(chan outcomeT, 1)
	go func() {
		res, err := p.Run(ctx, job, host)
		ch <- outcomeT{res, err}
	}()
	return ch
}

type outcomeT struct {
	res v8sandbox.Result
	err error
}

func (o outcomeT) value() string { return string(o.res.Value) }

func receive(t *testing.T, ch <-chan outcomeT, within time.Duration) outcomeT {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(within):
		t.Fatalf("run did not end within %v", within)
		return outcomeT{}
	}
}

// busyPIDs returns the PIDs of the workers that have a run in progress.
func busyPIDs(p *Pool) []int {
	var pids []int
	for _, w := range p.Stats().Workers {
		if w.Runs > 0 {
			pids = append(pids, w.PID)
		}
	}
	return pids
}

func TestCancellation(t *testing.T) {
	p := newTestPool(t, Options{Workers: 1, SlotsPerWorker: 2, Grace: 300 * time.Millisecond})
	t.Run("busy loop: the worker stops it", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		_, err := p.Run(ctx, v8sandbox.Job{Source: `for(;;){}`, Limits: v8sandbox.Limits{Timeout: 20 * time.Second}}, nil)
		sandboxtest.WantCode(t, err, v8sandbox.CodeCancelled)
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("cancel took %v", d) // the bound that matters: far less than the 20 s deadline
		}
	})
	t.Run("waiting on the host", func(t *testing.T) {
		g := newGate()
		ctx, cancel := context.WithCancel(context.Background())
		ch := runAsync(ctx, p, waitJob, g)
		g.await(t)
		cancel()
		sandboxtest.WantCode(t, receive(t, ch, 10*time.Second).err, v8sandbox.CodeCancelled)
	})
	// The host call fails because of the cancellation and the script does
	// not catch it: the script's error must not win over the stop reason,
	// whichever of the reply and the cancel frame reaches the worker first.
	t.Run("host error caused by the cancellation", func(t *testing.T) {
		for range 200 {
			ctx, cancel := context.WithCancel(context.Background())
			host := v8sandbox.HostFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
				cancel()
				return nil, context.Canceled
			})
			_, err := p.Run(ctx, waitJob, host)
			sandboxtest.WantCode(t, err, v8sandbox.CodeCancelled)
		}
	})
	t.Run("caller deadline maps to TIMEOUT", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := p.Run(ctx, v8sandbox.Job{Source: `for(;;){}`, Limits: v8sandbox.Limits{Timeout: 20 * time.Second}}, nil)
		sandboxtest.WantCode(t, err, v8sandbox.CodeTimeout)
	})
	t.Run("stuck builtin: killed after grace", func(t *testing.T) {
		killed := p.Stats().Killed
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err := p.Run(ctx, v8sandbox.Job{Source: `Array.from({length: 2**27}).length`, Limits: v8sandbox.Limits{Timeout: 20 * time.Second}}, nil)
		sandboxtest.WantCode(t, err, v8sandbox.CodeCancelled)
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("cancel of a stuck run took %v", d) // far less than the 20 s deadline
		}
		if got := p.Stats().Killed; got != killed+1 {
			t.Errorf("killed = %d, want %d", got, killed+1)
		}
		if got := sandboxtest.Value(t, p, v8sandbox.Job{Source: `"after"`}, nil); got != `"after"` {
			t.Fatal(got)
		}
	})
	t.Run("while waiting for a slot", func(t *testing.T) {
		g := newGate()
		a, b := runAsync(context.Background(), p, waitJob, g), runAsync(context.Background(), p, waitJob, g)
		g.await(t)
		g.await(t)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := p.Run(ctx, v8sandbox.Job{Source: `1`}, nil)
		if e := sandboxtest.WantCode(t, err, v8sandbox.CodeTimeout); !strings.Contains(e.Message, "waiting for a free sandbox worker") {
			t.Errorf("message = %q", e.Message)
		}
		close(g.release)
		for _, ch := range []<-chan outcomeT{a, b} {
			if o := receive(t, ch, 5*time.Second); o.err != nil || o.value() != `"x"` {
				t.Errorf("gated run: %s %v", o.value(), o.err)
			}
		}
	})
}

// TestHardDeadline: a worker stuck in a builtin that ignores termination is
// killed by the parent at deadline + grace.
func TestHardDeadline(t *testing.T) {
	const timeout, grace = 300 * time.Millisecond, 300 * time.Millisecond
	p := newTestPool(t, Options{Workers: 2, SlotsPerWorker: 1, Grace: grace})
	g := newGate()
	other := runAsync(context.Background(), p, waitJob, g)
	g.await(t)

	start := time.Now()
	_, err := p.Run(context.Background(), v8sandbox.Job{Source: `Array.from({length: 2**27}).length`, Limits: v8sandbox.Limits{Timeout: timeout}}, nil)
	elapsed := time.Since(start)
	if e := sandboxtest.WantCode(t, err, v8sandbox.CodeTimeout); e.Message != "execution exceeded 300 ms" {
		t.Errorf("message = %q", e.Message)
	}
	// The lower bound is exact; the upper one only tells a kill from a run
	// that went on (Array.from of 2**27 ignores termination for seconds and
	// would finish far later), with room for a loaded machine.
	if elapsed < timeout+grace || elapsed > timeout+grace+10*time.Second {
		t.Errorf("hard deadline fired after %v, want %v + %v (+ slack)", elapsed, timeout, grace)
	}
	if st := p.Stats(); st.Killed != 1 {
		t.Errorf("stats after the kill: %+v", st)
	}
	// The run on the other worker is untouched.
	close(g.release)
	if o := receive(t, other, 5*time.Second); o.err != nil || o.value() != `"x"` {
		t.Fatalf("run on the other worker: %s %v", o.value(), o.err)
	}
	if got := sandboxtest.Value(t, p, v8sandbox.Job{Source: `"next"`}, nil); got != `"next"` {
		t.Fatal(got)
	}
}

// TestWorkerKilledMidRun: SIGKILL from outside ends the run on that worker
// with SANDBOX_CRASHED; the other worker's run is untouched; the worker is
// respawned.
func TestWorkerKilledMidRun(t *testing.T) {
	p := newTestPool(t, Options{Workers: 2, SlotsPerWorker: 1})
	ga, gb := newGate(), newGate()
	a := runAsync(context.Background(), p, waitJob, ga)
	ga.await(t)
	victims := busyPIDs(p)
	if len(victims) != 1 {
		t.Fatalf("busy workers = %v", victims)
	}
	b := runAsync(context.Background(), p, waitJob, gb)
	gb.await(t)

	if err := syscall.Kill(victims[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	o := receive(t, a, 5*time.Second)
	if e := sandboxtest.WantCode(t, o.err, v8sandbox.CodeSandboxCrashed); !strings.Contains(e.Message, "signal: killed") {
		t.Errorf("message = %q", e.Message)
	}
	close(gb.release)
	if o := receive(t, b, 5*time.Second); o.err != nil || o.value() != `"x"` {
		t.Fatalf("run on the other worker: %s %v", o.value(), o.err)
	}
	waitState(t, p, 10*time.Second, "a respawned worker", func() bool {
		st := p.Stats()
		return len(st.Workers) == 2 && st.Spawned == 3
	})
	for _, w := range p.Stats().Workers {
		if w.PID == victims[0] {
			t.Fatalf("killed worker %d still listed", w.PID)
		}
	}
	if st := p.Stats(); st.Crashed != 1 {
		t.Errorf("crashed = %d, want 1", st.Crashed)
	}
	for i := range 4 { // both workers serve again
		if got := sandboxtest.Value(t, p, v8sandbox.Job{Source: fmt.Sprint(i)}, nil); got != fmt.Sprint(i) {
			t.Fatal(got)
		}
	}
}

// TestWorkerAbortIsHeapLimit: the V8 abort one-liner kills only its worker
// and is typed HEAP_LIMIT from the worker's stderr.
func TestWorkerAbortIsHeapLimit(t *testing.T) {
	buf := &testutil.Buffer{}
	p := newTestPool(t, Options{Workers: 1, Logger: slogTo(buf)})
	_, err := p.Run(context.Background(), v8sandbox.Job{Source: `'x'.repeat(2**27).split('')`}, nil)
	if e := sandboxtest.WantCode(t, err, v8sandbox.CodeHeapLimit); !strings.Contains(e.Message, "invalid size error") {
		t.Errorf("message = %q", e.Message)
	}
	if got := sandboxtest.Value(t, p, v8sandbox.Job{Source: `"alive"`}, nil); got != `"alive"` {
		t.Fatal(got)
	}
	// The worker's crash dump reached the logger, bounded.
	log := buf.String()
	if n := strings.Count(log, `msg="sandbox worker stderr"`); n == 0 || n > maxLoggedLines {
		t.Errorf("%d stderr lines logged, want 1..%d", n, maxLoggedLines)
	}
	if !strings.Contains(log, "stderr_lines_suppressed=") {
		t.Error("suppressed stderr lines not reported")
	}
}

// TestMalformedFrameKillsOnlyThatWorker: a worker that writes garbage is
// killed; the parent and the other worker's run carry on.
func TestMalformedFrameKillsOnlyThatWorker(t *testing.T) {
	p := newTestPool(t, Options{Workers: 2, SlotsPerWorker: 1})
	for _, kind := range []string{"oversized", "not-json", "unknown-type", "empty-result"} {
		t.Run(kind, func(t *testing.T) {
			killed := p.Stats().Killed
			g := newGate()
			other := runAsync(context.Background(), p, waitJob, g)
			g.await(t)
			_, err := p.Run(context.Background(), v8sandbox.Job{Source: "//broken:" + kind}, nil)
			if e := sandboxtest.WantCode(t, err, v8sandbox.CodeSandboxCrashed); !strings.Contains(e.Message, "protocol violation") {
				t.Errorf("message = %q", e.Message)
			}
			close(g.release)
			if o := receive(t, other, 5*time.Second); o.err != nil || o.value() != `"x"` {
				t.Fatalf("run on the other worker: %s %v", o.value(), o.err)
			}
			if got := p.Stats().Killed; got != killed+1 {
				t.Errorf("killed = %d, want %d", got, killed+1)
			}
			waitState(t, p, 10*time.Second, "two serving workers", func() bool { return len(p.Stats().Workers) == 2 })
		})
	}
}

// TestRSSRecycling: a worker over MaxRSSMB is drained and replaced between
// runs; no run fails because of it.
func TestRSSRecycling(t *testing.T) {
	p := newTestPool(t, Options{Workers: 1, SlotsPerWorker: 1, MaxRSSMB: 1, KillRSSMB: -1})
	first := p.Stats().Workers[0].PID
	if got := sandboxtest.Value(t, p, v8sandbox.Job{Source: `"one"`}, nil); got != `"one"` {
		t.Fatal(got)
	}
	waitState(t, p, 10*time.Second, "a recycle", func() bool {
		st := p.Stats()
		return st.Recycled >= 1 && len(st.Workers) >= 1 && st.Workers[0].PID != first
	})
	for i := range 3 {
		if got := sandboxtest.Value(t, p, v8sandbox.Job{Source: fmt.Sprint(i)}, nil); got != fmt.Sprint(i) {
			t.Fatal(got)
		}
	}
	if st := p.Stats(); st.Crashed != 0 || st.Killed != 0 {
		t.Errorf("recycling crashed or killed workers: %+v", st)
	}
}

// TestKillRSS: a builtin that allocates gigabytes while ignoring termination
// is stopped by the hard RSS limit and typed HEAP_LIMIT.
func TestKillRSS(t *testing.T) {
	p := newTestPool(t, Options{Workers: 1, KillRSSMB: 250})
	start := time.Now()
	// JSON.parse of 20 M numbers is not interruptible and passes 250 MB RSS
	// in about a second.
	_, err := p.Run(context.Background(), v8sandbox.Job{Source: `JSON.parse("[" + "1,".repeat(2e7) + "1]").length`, Limits: v8sandbox.Limits{Timeout: 30 * time.Second}}, nil)
	if e := sandboxtest.WantCode(t, err, v8sandbox.CodeHeapLimit); !strings.Contains(e.Message, "hard limit") {
		t.Errorf("message = %q", e.Message)
	}
	t.Logf("killed after %v", time.Since(start))
	if got := sandboxtest.Value(t, p, v8sandbox.Job{Source: `"alive"`}, nil); got != `"alive"` {
		t.Fatal(got)
	}
}

func TestDefaultCommandInATestBinary(t *testing.T) {
	// In a test binary whose TestMain does not call RunWorkerIfRequested
	// (this one does: pretend it did not), the default Command must be
	// refused rather than start the binary's tests again.
	workerDispatch.Store(false)
	defer workerDispatch.Store(true)
	p, err := New(Options{Workers: 1, Logger: quietLogger(t)})
	if err == nil {
		p.Close()
		t.Fatal("New accepted the default command in a test binary")
	}
	if !strings.Contains(err.Error(), "RunWorkerIfRequested") {
		t.Errorf("error = %v", err)
	}
}

func TestNewFailsOnABrokenCommand(t *testing.T) {
	for name, cmd := range map[string][]string{
		"missing binary": {"/nonexistent/isogate", WorkerCommand},
		"exits at once":  {"/bin/true"},
		"not a worker":   {"/bin/cat"}, // echoes init back: a frame of the wrong type
		"dies at once":   {"/bin/sh", "-c", "echo oops >&2; exit 3"},
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			p, err := New(Options{Command: cmd, Workers: 1, Logger: quietLogger(t)})
			if err == nil {
				p.Close()
				t.Fatal("New succeeded")
			}
			if d := time.Since(start); d > 30*time.Second { // a hang guard
				t.Errorf("New took %v to fail", d)
			}
		})
	}
}

// TestCrashLoopBacksOff: workers that die on their own while idle are
// respawned with exponential backoff, and runs fail fast once every slot
// keeps failing.
func TestCrashLoopBacksOff(t *testing.T) {
	start := time.Now()
	p := newTestPool(t, Options{Command: []string{workerCommand(t)[0], "flaky-worker"}, Workers: 1})
	// Each flaky worker dies ~30 ms after starting. With backoff, the fourth
	// spawn comes after at least 100+200+400 ms of waiting; without it, at
	// once. A slow machine only makes it later, so this lower bound holds
	// at any speed.
	waitState(t, p, 20*time.Second, "four spawns", func() bool { return p.Stats().Spawned >= 4 })
	if d := time.Since(start); d < 700*time.Millisecond {
		t.Errorf("4 spawns within %v: no backoff (want at least 700 ms)", d)
	}
	// A run fails fast only while every slot is between two failed
	// workers, which no event announces: try until one does.
	testutil.Eventually(t, 10*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		_, err := p.Run(ctx, v8sandbox.Job{Source: `1`}, nil)
		return v8sandbox.CodeOf(err) == v8sandbox.CodeSandboxCrashed
	}, "a run to fail fast")
}

func TestClose(t *testing.T) {
	p, err := New(Options{Command: workerCommand(t), Workers: 1, Logger: quietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	pids := []int{p.Stats().Workers[0].PID}
	g := newGate()
	inflight := runAsync(context.Background(), p, waitJob, g)
	g.await(t)
	closed := make(chan struct{})
	go func() {
		p.Close()
		close(closed)
	}()
	waitState(t, p, 10*time.Second, "Close to start", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.closed
	})
	select {
	case <-closed:
		t.Fatal("Close did not wait for the run in progress")
	default:
	}
	close(g.release)
	if o := receive(t, inflight, 5*time.Second); o.err != nil {
		t.Fatalf("in-flight run: %v", o.err)
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close hung")
	}
	_, err = p.Run(context.Background(), v8sandbox.Job{Source: `1`}, nil)
	sandboxtest.WantCode(t, err, v8sandbox.CodeInternal)
	for _, pid := range pids {
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("worker %d still alive after Close", pid)
		}
	}
	p.Close() // idempotent
}

// TestRunReturnsBeforeItsTakenFrame: a caller gets its result without
// writing the taken frame itself (issue 44: that write woke the worker on
// the caller's CPU, where it prepared its next context before the caller
// ran again). The frame still reaches the worker: its only slot serves the
// next run once it is released.
func TestRunReturnsBeforeItsTakenFrame(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	p := newTestPool(t, Options{Workers: 1, SlotsPerWorker: 1, beforeTaken: func() { <-release }})
	job := v8sandbox.Job{Source: "1 + 1", AwaitResult: true}
	done := make(chan error, 1)
	go func() {
		_, err := p.Run(context.Background(), job, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		unblock()
		t.Fatal("Run waited for its taken frame to be written")
	}
	unblock()
	res, err := p.Run(context.Background(), job, nil)
	if err != nil || string(res.Value) != "2" {
		t.Fatalf("next run on the only slot: %s, %v", res.Value, err)
	}
}
