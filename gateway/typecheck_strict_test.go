package gateway

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/typecheck/checkworker"
)

// Issue 42: right after a gateway starts, its checker worker is still
// loading the compiler; sandbox.typecheck: strict must not run a program
// meanwhile without its check. Each wrong program sent at once is refused,
// by its check (TYPECHECK_FAILED: the run waited for the checker) or, when
// the checker could not load within the run's deadline, with
// TYPECHECK_UNAVAILABLE; the backend never receives a call.
func TestTypecheckStrictRightAfterStart(t *testing.T) {
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir() // no code cache: the compiler loads from source
	cfg.Sandbox.Isolation = config.IsolationProcess
	cfg.Sandbox.MaxConcurrent = 1
	cfg.Sandbox.Typecheck = "strict"
	cfg.Sandbox.TypecheckTimeout = time.Minute
	rec := &recorder{}
	g := startGateway(t, cfg, app.Options{ExtraSpecs: []backend.Spec{rec.spec()}})
	cs := connect(t, g, nil)
	for _, p := range wrongPrograms {
		text, isErr, _ := callText(t, cs, "call_tool_chain", map[string]any{"code": p.code})
		refused := strings.HasPrefix(text, "TYPECHECK_FAILED") && strings.Contains(text, p.hint) ||
			strings.HasPrefix(text, "TYPECHECK_UNAVAILABLE")
		if !isErr || !refused {
			t.Errorf("%s: got (error %v):\n%s\nwant TYPECHECK_FAILED with %q, or TYPECHECK_UNAVAILABLE", p.name, isErr, text, p.hint)
		}
	}
	if calls := rec.got(); len(calls) != 0 {
		t.Fatalf("the backend received %v; want no call", calls)
	}
}

// warn waits for a loading checker as strict does: a wrong program sent
// right after the start carries its check's diagnostic, or, when the
// checker could not load within the run's deadline, the notice that it ran
// unchecked; never neither (before issue 42 it ran at once, silently).
func TestTypecheckWarnRightAfterStart(t *testing.T) {
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Sandbox.Isolation = config.IsolationProcess
	cfg.Sandbox.MaxConcurrent = 1
	cfg.Sandbox.Typecheck = "warn"
	cfg.Sandbox.TypecheckTimeout = time.Minute
	rec := &recorder{}
	g := startGateway(t, cfg, app.Options{ExtraSpecs: []backend.Spec{rec.spec()}})
	cs := connect(t, g, nil)
	p := wrongPrograms[0]
	text, _, _ := callText(t, cs, "call_tool_chain", map[string]any{"code": p.code})
	if !strings.Contains(text, "[notice] typecheck: "+p.hint) && !strings.Contains(text, "[notice] typecheck: the program ran unchecked: ") {
		t.Errorf("got:\n%s\nwant the diagnostic %q, or the notice that the program ran unchecked", text, p.hint)
	}
}

// typeBomb is issue 42's type bomb: checking it runs far past any budget.
// Its call would reach the backend if it ran unchecked.
const typeBomb = "type R<N extends any[]> = N['length'] extends 5000 ? N : R<[...N, 1]>;\n" +
	"const x: R<[]> = null as any;\nawait counter.bump({id: 'bomb'});"

// Issue 42's attack: bob sends type bombs in a loop (two at a time) to a
// strict gateway in process isolation, over real HTTP, while alice sends
// programs strict must refuse. Each bomb is ended inside the checker
// worker (TYPECHECK_TIMEOUT, or TYPECHECK_TOO_COMPLEX when its type
// outgrows the heap cap first, or TYPECHECK_UNAVAILABLE when bob's queue
// of checks is full), the worker is never killed or replaced, every one of
// alice's programs is refused by its check (TYPECHECK_FAILED: she is
// served on the lane bob does not hold), and the backend receives no call
// from either of them. Then alice's valid program runs.
func TestTypecheckStrictTypeBombs(t *testing.T) {
	rec := &recorder{}
	h := redteamGateway(t, func(c *config.Config) {
		c.Sandbox.Isolation = config.IsolationProcess
		c.Sandbox.MaxConcurrent = 2
		c.Sandbox.Typecheck = "strict"
		c.Sandbox.TypecheckTimeout = 3 * time.Second // a bomb runs to it; alice's checks take a fraction
	}, rec.spec())
	checker, ok := h.g.app.Typecheck.(*checkworker.Checker)
	if !ok {
		t.Fatalf("process isolation checks with %T, want *checkworker.Checker", h.g.app.Typecheck)
	}
	if err := checker.Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	pid := checker.Stats().Workers[0].PID
	alice, bob := h.connectAsWith(t, "alice", "", nil), h.connectAsWith(t, "bob", "", nil)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	bombs := map[string]int{} // bob's outcomes
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := bob.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": typeBomb}})
				outcome := "transport error"
				if err == nil {
					outcome, _ = res.Meta["isogate/code"].(string)
					if !res.IsError {
						outcome = "ran"
					}
				}
				mu.Lock()
				bombs[outcome]++
				mu.Unlock()
			}
		}()
	}
	for i := range 2 {
		for _, p := range wrongPrograms {
			text, isErr, _ := callText(t, alice, "call_tool_chain", map[string]any{"code": p.code})
			if !isErr || !strings.HasPrefix(text, "TYPECHECK_FAILED") || !strings.Contains(text, p.hint) {
				t.Errorf("round %d, %s: got (error %v):\n%s\nwant TYPECHECK_FAILED with %q", i, p.name, isErr, text, p.hint)
			}
		}
	}
	close(stop)
	wg.Wait()
	if calls := rec.got(); len(calls) != 0 {
		t.Fatalf("the backend received %v; want no call", calls)
	}
	// A bomb is ended inside the checker by its budget (TYPECHECK_TIMEOUT)
	// or, on a machine fast enough to grow its type past the isolate's
	// heap cap first, by that (TYPECHECK_TOO_COMPLEX: seen on a quiet
	// machine); both are the checker ending one check, not its worker.
	ended := func(outcome string) bool {
		return outcome == string(codemode.CodeTypecheckTimeout) || outcome == string(codemode.CodeTypecheckTooComplex)
	}
	for outcome, n := range bombs {
		if !ended(outcome) && outcome != string(codemode.CodeTypecheckUnavailable) {
			t.Errorf("%d of bob's bombs ended with %q; want TYPECHECK_TIMEOUT, TYPECHECK_TOO_COMPLEX or TYPECHECK_UNAVAILABLE (all: %v)", n, outcome, bombs)
		}
	}
	if bombs[string(codemode.CodeTypecheckTimeout)]+bombs[string(codemode.CodeTypecheckTooComplex)] == 0 {
		t.Errorf("no bomb was ended inside the checker: %v", bombs)
	}
	st := checker.Stats()
	if len(st.Workers) == 0 || st.Workers[0].PID != pid || st.Spawned != 1 {
		t.Errorf("checker worker %d, spawned %d (%+v); want the first (%d) still serving: a bomb ends its check, not its worker", pid, st.Spawned, st.Workers, pid)
	}
	text, isErr, _ := callText(t, alice, "call_tool_chain", map[string]any{"code": "return await counter.bump({id:'ok'})"})
	if isErr || !strings.Contains(text, "ok") {
		t.Fatalf("alice's valid program: %s", text)
	}
	t.Logf("bob's bombs: %v", bombs)
}

// Memory a checked program can make the checker allocate (issue 42): a
// literal nested thousands deep exhausts the compiler's stack, a giant
// one (or a giant type) its isolate's heap cap. bob sends one with a call
// after it to a strict gateway over real HTTP: it is refused with
// TYPECHECK_TOO_COMPLEX, never run unchecked; alice's programs that
// strict must refuse are refused by their check right after (the checker
// recovered), and the backend receives no call.
func TestTypecheckMemoryBombs(t *testing.T) {
	rec := &recorder{}
	h := redteamGateway(t, func(c *config.Config) {
		c.Sandbox.Typecheck = "strict"
		c.Sandbox.TypecheckTimeout = time.Minute // memory, not time, ends these checks
	}, rec.spec())
	if err := h.g.app.Typecheck.Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	alice, bob := h.connectAsWith(t, "alice", "", nil), h.connectAsWith(t, "bob", "", nil)
	nested := "const x = " + strings.Repeat("{a:[1,'x',", 4000) + strings.Repeat("]}", 4000) + ";\nawait counter.bump({id: 'deep'});"
	text, isErr, res := callText(t, bob, "call_tool_chain", map[string]any{"code": nested})
	if !isErr || res.Meta["isogate/code"] != string(codemode.CodeTypecheckTooComplex) {
		t.Errorf("bob's nested literal: %s (_meta %v); want TYPECHECK_TOO_COMPLEX", text, res.Meta)
	}
	for _, p := range wrongPrograms {
		text, isErr, _ := callText(t, alice, "call_tool_chain", map[string]any{"code": p.code})
		if !isErr || !strings.HasPrefix(text, "TYPECHECK_FAILED") || !strings.Contains(text, p.hint) {
			t.Errorf("alice, %s: got (error %v):\n%s\nwant TYPECHECK_FAILED with %q", p.name, isErr, text, p.hint)
		}
	}
	if calls := rec.got(); len(calls) != 0 {
		t.Fatalf("the backend received %v; want no call", calls)
	}
}
