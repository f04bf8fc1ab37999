package gateway

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/typecheck/checkworker"
)

// In process isolation the TypeScript compiler parses programs in a
// confined checker worker process of its own: a strict-mode refusal works
// as in process (no backend call made); a checker worker SIGKILLed while
// it checks a program refuses that program with TYPECHECK_UNAVAILABLE
// (issue 42: strict never runs a program unchecked); the replacement
// worker checks the next program.
func TestTypecheckInCheckerWorker(t *testing.T) {
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Sandbox.Isolation = config.IsolationProcess
	cfg.Sandbox.MaxConcurrent = 1 // one sandbox worker
	cfg.Sandbox.Typecheck = "strict"
	cfg.Sandbox.TypecheckTimeout = time.Minute // a loaded machine must not turn a check into "unchecked"
	rec := &recorder{}
	g := startHealthy(t, cfg, app.Options{ExtraSpecs: []backend.Spec{rec.spec()}})
	checker, ok := g.app.Typecheck.(*checkworker.Checker)
	if !ok {
		t.Fatalf("process isolation checks with %T, want *checkworker.Checker", g.app.Typecheck)
	}
	if err := checker.Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, g, nil)
	refuses := func() {
		t.Helper()
		for _, p := range wrongPrograms {
			text, isErr, _ := callText(t, cs, "call_tool_chain", map[string]any{"code": p.code})
			if !isErr || !strings.HasPrefix(text, "TYPECHECK_FAILED") || !strings.Contains(text, p.hint) {
				t.Errorf("%s: got (error %v):\n%s\nwant TYPECHECK_FAILED with %q", p.name, isErr, text, p.hint)
			}
		}
	}
	refuses()
	if calls := rec.got(); len(calls) != 0 {
		t.Fatalf("the backend received %v; want no call", calls)
	}

	// Stopped, the worker cannot answer: the check is surely in progress
	// once it is on the worker; then it is killed. A check that still
	// ended before the kill (seen once on a loaded machine: the program
	// ran checked, no notice) is tried again on the replacement worker.
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	var pid int
	var made []string
	for attempt := 1; ; attempt++ {
		if err := checker.Warm(t.Context()); err != nil {
			t.Fatal(err)
		}
		pid = checker.Stats().Workers[0].PID
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("k%d", attempt)
		made = append(made, id)
		answered := make(chan answer, 1)
		go func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain",
				Arguments: map[string]any{"code": "await counter.bump({id:'" + id + "'}); return 'ran'"}})
			answered <- answer{res, err}
		}()
		tick := time.NewTicker(time.Millisecond)
		for st := checker.Stats(); len(st.Workers) != 1 || st.Workers[0].Runs != 1; st = checker.Stats() {
			select {
			case <-tick.C: // no event says a check reached the worker
			case a := <-answered:
				t.Fatalf("answered before the check reached the checker worker: %+v %v", a.res, a.err)
			}
		}
		tick.Stop()
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		a := <-answered
		if a.err != nil {
			t.Fatal(a.err)
		}
		text := a.res.Content[0].(*mcp.TextContent).Text
		if !a.res.IsError && text == "ran" && attempt < 5 {
			continue // checked before the kill struck: again
		}
		if !a.res.IsError || !strings.HasPrefix(text, "TYPECHECK_UNAVAILABLE") || !strings.Contains(text, "SANDBOX_CRASHED") {
			t.Fatalf("with the checker worker killed mid-check (error %v):\n%s\nwant TYPECHECK_UNAVAILABLE naming the crash", a.res.IsError, text)
		}
		break
	}
	made = made[:len(made)-1] // the refused program made no call
	if calls := rec.got(); strings.Join(calls, ",") != strings.Join(made, ",") {
		t.Fatalf("calls = %v; want %v", calls, made)
	}

	if err := checker.Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st := checker.Stats(); len(st.Workers) != 1 || st.Workers[0].PID == pid {
		t.Fatalf("checker workers %+v; want one replacing %d", st.Workers, pid)
	}
	refuses()
	if calls := rec.got(); strings.Join(calls, ",") != strings.Join(made, ",") {
		t.Fatalf("calls = %v; want only %v", calls, made)
	}
}
