package checkworker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/testutil"
	"github.com/isogate/isogate/internal/typecheck"
	"github.com/isogate/isogate/v8sandbox/procpool"
)

var checkerDecls = typecheck.Declarations{ID: "counter-1", Text: `
interface CounterBumpInput { id: string; by?: number }
interface IsogateBackend_counter { bump(args: CounterBumpInput): Promise<any>; }
declare var counter: IsogateBackend_counter;
`}

// wrongProgram has a certain mistake on its second line.
const wrongProgram = "await counter.bump({id:'p1'});\nawait counter.bump({ident:'p3'});"

// newTestChecker starts a checker whose worker is this test binary and
// waits until it serves.
func newTestChecker(t *testing.T) *Checker {
	t.Helper()
	c := NewChecker(CheckerOptions{Command: workerCommand(t), Logger: testutil.QuietLogger(t), Timeout: time.Minute})
	t.Cleanup(c.Close)
	if c.Ready() {
		t.Fatal("ready before it was started")
	}
	if err := c.Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !c.Ready() {
		t.Fatal("not ready after Warm")
	}
	return c
}

// wantRefusal checks wrongProgram and wants its one certain mistake, with
// the fix, at its place in the program as written.
func wantRefusal(t *testing.T, c *Checker) {
	t.Helper()
	rep, err := c.Check(t.Context(), checkerDecls, wrongProgram, false)
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	certain := rep.Certain()
	if len(certain) != 1 || certain[0].Line != 2 || certain[0].Column != 21 ||
		!strings.Contains(certain[0].Hint(), "`ident` is not a parameter of counter.bump; did you mean `id`?") {
		t.Fatalf("certain = %+v (all %+v)", certain, rep.Diagnostics)
	}
}

// The checker worker checks as the in-process checker does, is sent a
// catalogue version's declarations once, not with every check, and is
// confined like a sandbox worker: the same layers at the same levels.
func TestCheckerWorker(t *testing.T) {
	c := newTestChecker(t)
	p, err := procpool.New(procpool.Options{Command: workerCommand(t), Logger: testutil.QuietLogger(t), Workers: 1, SlotsPerWorker: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	got, want := c.Confinement(), p.Confinement()
	if got.String() != want.String() || len(got.Layers) == 0 {
		t.Fatalf("checker worker: %s\nsandbox worker: %s", got, want)
	}
	t.Logf("checker worker: %s", got)
	wantRefusal(t, c)
	rep, err := c.Check(t.Context(), checkerDecls, "return await counter.bump({id: 'a', by: 2})", false)
	if err != nil || len(rep.Diagnostics) != 0 || rep.Plan == nil || len(rep.Plan.Calls) != 1 {
		t.Fatalf("a valid program: %+v %v", rep, err)
	}
	wantRefusal(t, c)
	if n := c.declsSent.Load(); n != 1 {
		t.Errorf("the declarations' text went with %d checks; want 1", n)
	}
	// Another catalogue version is sent once more.
	other := typecheck.Declarations{ID: "counter-2", Text: checkerDecls.Text + "declare var extra: any;\n"}
	if _, err := c.Check(t.Context(), other, "return extra.x", false); err != nil {
		t.Fatal(err)
	}
	if n := c.declsSent.Load(); n != 2 {
		t.Errorf("the declarations' text went with %d checks; want 2", n)
	}
}

// A checker worker SIGKILLed while it has a check fails that check as
// unchecked (the program then runs unchecked); its replacement is
// started, asks for the declarations again and checks. A check that the
// worker does not answer by its deadline (a hung checker) fails as
// unchecked too, and the worker is replaced.
func TestCheckerWorkerDeaths(t *testing.T) {
	c := newTestChecker(t)
	wantRefusal(t, c)
	// Stopped, the worker cannot answer: the check is surely in progress
	// once the pool has it on the worker. A check that still ended before
	// the kill (seen on a loaded machine) is tried again on the
	// replacement worker.
	var pid, attempts int
	for attempt := 1; ; attempt++ {
		attempts = attempt
		pid = c.Stats().Workers[0].PID
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		errc := make(chan error, 1)
		go func() {
			_, err := c.Check(context.Background(), checkerDecls, wrongProgram, false)
			errc <- err
		}()
		testutil.Eventually(t, time.Minute, func() bool {
			st := c.Stats()
			return len(st.Workers) == 1 && st.Workers[0].Runs == 1
		}, "the check on the worker")
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		err := <-errc
		if err == nil && attempt < 5 {
			if err := c.Warm(t.Context()); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if !errors.Is(err, typecheck.ErrUnchecked) || !strings.Contains(err.Error(), "SANDBOX_CRASHED") {
			t.Fatalf("check on a killed worker: %v; want ErrUnchecked, SANDBOX_CRASHED", err)
		}
		break
	}
	if err := c.Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	if np := c.Stats().Workers[0].PID; np == pid {
		t.Fatalf("still worker %d", pid)
	}
	wantRefusal(t, c)
	// At most once to each worker (attempts killed ones and the last), and
	// at least to the first and the last: a worker killed while its check
	// waited to be sent (a retried attempt on a loaded machine) may never
	// have been sent it.
	if n := c.declsSent.Load(); n < 2 || n > uint64(attempts)+1 {
		t.Errorf("the declarations' text went %d times; want 2 to %d (at most once to each worker)", n, attempts+1)
	}

	for attempt := 1; ; attempt++ { // again when the stopped worker still answered (as above)
		pid = c.Stats().Workers[0].PID
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		_, err := c.Check(ctx, checkerDecls, wrongProgram, false)
		cancel()
		if err == nil && attempt < 5 {
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if !errors.Is(err, typecheck.ErrUnchecked) {
			t.Fatalf("check on a hung worker: %v; want ErrUnchecked", err)
		}
		break
	}
	if err := c.Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	if np := c.Stats().Workers[0].PID; np == pid {
		t.Fatalf("the hung worker %d still serves", pid)
	}
	wantRefusal(t, c)
}

// A catalogue with no tool (no backend yet, or a principal the policy
// lets see none) has empty declarations: the worker checks against them
// as against any other, rather than asking for them again and failing
// every check of that catalogue as unchecked.
func TestCheckerWorkerEmptyDeclarations(t *testing.T) {
	c := newTestChecker(t)
	empty := typecheck.Declarations{ID: "empty-1", Text: ""}
	for range 2 {
		rep, err := c.Check(t.Context(), empty, "let s = 0; for (let i = 1; i <= 10; i++) s += i; return s", false)
		if err != nil {
			t.Fatalf("check against empty declarations: %v", err)
		}
		if len(rep.Diagnostics) != 0 {
			t.Fatalf("diagnostics %+v", rep.Diagnostics)
		}
	}
	if n := c.declsSent.Load(); n != 1 {
		t.Errorf("the empty declarations went %d times; want 1", n)
	}
}

// A checker whose worker could not start is not ready, and says why; it is
// started again (after a backoff) when something next asks for it, and
// serves once a start succeeds.
func TestCheckerStartRetried(t *testing.T) {
	link := filepath.Join(t.TempDir(), "worker")
	cmd := workerCommand(t)
	c := NewChecker(CheckerOptions{Command: append([]string{link}, cmd[1:]...), Logger: testutil.QuietLogger(t), Timeout: time.Minute})
	c.retryBase = time.Millisecond
	t.Cleanup(c.Close)
	if err := c.Warm(t.Context()); err == nil {
		t.Fatal("a checker whose worker binary is missing started")
	}
	if st := c.Status(); c.Ready() || st.State != typecheck.StateFailed || !strings.Contains(st.Error, "could not start") {
		t.Fatalf("after a failed start: ready %v, %+v; want failed, why", c.Ready(), st)
	}
	if err := os.Symlink(cmd[0], link); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, time.Minute, func() bool { return c.Warm(t.Context()) == nil }, "a start to succeed")
	if st := c.Status(); !c.Ready() || st.State != typecheck.StateReady || st.Error != "" || st.Worker == nil {
		t.Fatalf("after a start succeeded: ready %v, %+v", c.Ready(), st)
	}
	wantRefusal(t, c)
}
