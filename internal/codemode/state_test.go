package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/codemode/output"
	"github.com/isogate/isogate/internal/kv"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/state"
	"github.com/isogate/isogate/internal/typecheck"
)

// countingState is a real state store (internal/state on a kv.Memory)
// that counts the operations reaching it.
type countingState struct {
	st *state.State
	mu sync.Mutex
	op map[string]int
}

func newCountingState(t testing.TB) *countingState {
	st, err := state.New(state.Options{Store: kv.NewMemory(), MaxKeys: 5})
	if err != nil {
		t.Fatal(err)
	}
	return &countingState{st: st, op: map[string]int{}}
}

func (c *countingState) Call(ctx context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
	c.mu.Lock()
	c.op[op]++
	c.mu.Unlock()
	return c.st.Call(ctx, op, args)
}

func (c *countingState) count(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.op[op]
}

// TestStateInPrograms: programs keep values between runs with state.*,
// each principal its own; failures reach the program as errors with their
// code; a write the program forgot to await is still made.
func TestStateInPrograms(t *testing.T) {
	e, _ := durableEngine(t)
	st := newCountingState(t)
	e.opts.State = st
	alice := authn.WithPrincipal(context.Background(), &authn.Principal{Name: "alice"})
	bob := authn.WithPrincipal(context.Background(), &authn.Principal{Name: "bob"})
	run := func(ctx context.Context, code string) string {
		t.Helper()
		resp := e.Execute(ctx, Request{Code: code})
		if resp.IsError {
			t.Fatalf("%s: %s", code, resp.Text)
		}
		var v any
		_ = json.Unmarshal(resp.Value, &v)
		b, _ := json.Marshal(v)
		return string(b)
	}
	const bump = `const n = await state.get("n");
await state.set("n", (n ?? 0) + 1, {ttl: 3600});
return [n === undefined, await state.get("n"), await state.list({prefix: "n"})];`
	if got := run(alice, bump); got != `[true,1,["n"]]` {
		t.Fatalf("alice's first run: %s", got)
	}
	if got := run(alice, bump); got != `[false,2,["n"]]` {
		t.Fatalf("alice's second run: %s", got)
	}
	if got := run(bob, bump); got != `[true,1,["n"]]` {
		t.Fatalf("bob's first run sees alice's state: %s", got)
	}
	// A one-call program of the shape the fast path serves without V8
	// (b.t({...})) reaches the state object in V8, not a backend.
	if got := run(alice, `return await state.list({prefix: "n"})`); got != `["n"]` {
		t.Fatalf("a one-call program: %s", got)
	}
	if got := run(alice, `return [await state.delete("n"), await state.delete("n"), await state.get("n") === undefined]`); got != `[true,false,true]` {
		t.Fatalf("delete: %s", got)
	}
	for code, want := range map[string]string{
		`try { await state.set("k"); } catch (e) { return e.code; }`:                                                                     `"STATE_INVALID"`,
		`try { await state.set("k", 1, {ttl: -5}); } catch (e) { return e.code; }`:                                                       `"STATE_INVALID"`,
		`for (let i = 0; i < 9; i++) { try { await state.set("q" + i, i); } catch (e) { return [i, e.code, e.message.slice(0, 20)]; } }`: `[4,"STATE_QUOTA_EXCEEDED","STATE_QUOTA_EXCEEDED"]`,
		`return typeof state.get`:                `"function"`,
		`state.get = 1; return typeof state.get`: `"function"`,
	} {
		if got := run(bob, code); got != want {
			t.Errorf("%s: %s, want %s", code, got, want)
		}
	}
	if got := run(alice, `state.set("late", 7); return 1`); got != `1` {
		t.Errorf("a program that does not await its write: %s", got)
	}
	if got := run(alice, `return await state.get("late")`); got != `7` {
		t.Errorf("a write the program did not await: %s", got)
	}
	// Without a store, state calls fail closed with a retryable code.
	e.opts.State = nil
	if got := run(alice, `try { await state.get("n"); return "read" } catch (e) { return e.code }`); got != `"STORE_UNAVAILABLE"` {
		t.Errorf("no store: %s", got)
	}
}

// stateReplayProgram reads a counter, writes it back increased, then
// calls a tool: the write is a side effect a replay must not repeat.
const stateReplayProgram = `
const n = (await state.get("count")) ?? 0;
await state.set("count", n + 1);
const r = await counter.bump({n});
return [n, r.n, await state.get("count")];`

// TestStateReplayWritesOnce: in a durable run state calls are journalled
// like tool calls. A replay of the whole journal reads what the original
// run read and writes nothing; a replay of a journal cut after the write
// started without an outcome (its replica died mid-write) writes the same
// value again (state calls are idempotent): the counter is 1 whatever
// the replays, where a replay that re-ran the read would find 1 and
// diverge writing 2.
func TestStateReplayWritesOnce(t *testing.T) {
	e, caller := durableEngine(t)
	st := newCountingState(t)
	e.opts.State = st
	ctx := authn.WithPrincipal(context.Background(), &authn.Principal{Name: "alice"})
	d := NewDurableRun(NewJournal(stateReplayProgram, 0, 0, ""), DurableLimits{}, nil)
	first := e.Execute(ctx, Request{Code: stateReplayProgram, Durable: d})
	entries, err := journalEntries(d)
	if err != nil || first.IsError {
		t.Fatalf("first run: %s %v", first.Text, err)
	}
	j, err := ParseJournal(entries)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Calls) != 4 || j.Calls[1].Backend != stateBackend || j.Calls[1].Tool != "set" {
		t.Fatalf("journal: %+v", j.Calls)
	}
	count := func() string {
		v, _, err := st.st.Get(ctx, "alice", "count")
		if err != nil {
			t.Fatal(err)
		}
		return string(v)
	}
	replay := func(jj *Journal) Response {
		t.Helper()
		return e.Execute(ctx, Request{Code: jj.Code, Durable: NewDurableRun(jj, DurableLimits{}, nil)})
	}
	again := replay(j)
	if again.IsError || string(again.Value) != string(first.Value) || st.count("set") != 1 || st.count("get") != 2 || caller.total() != 1 || count() != "1" {
		t.Fatalf("replay: %s; %d sets, %d gets, %d tool calls, count %s (want the first run's %s, 1, 2, 1, 1)",
			again.Text, st.count("set"), st.count("get"), caller.total(), count(), first.Value)
	}
	// Killed while the write was in flight: the journal has it started.
	cut := *j
	cut.Calls = append([]JournalCall(nil), j.Calls[:2]...)
	cut.Calls[1].State, cut.Calls[1].Reply = callStarted, nil
	resumed := replay(&cut)
	if resumed.IsError || st.count("set") != 2 || count() != "1" || !strings.Contains(string(resumed.Value), "[0,") {
		t.Fatalf("resumed after a write in flight: %s; %d sets, count %s", resumed.Text, st.count("set"), count())
	}
	// A program that reads again instead of the journalled write diverges
	// and writes nothing.
	changed := *j
	changed.Code = strings.Replace(stateReplayProgram, `await state.set("count", n + 1);`, `await state.set("count", n + 2);`, 1)
	diverged := replay(&changed)
	if diverged.Code != CodeReplayDiverged || !strings.Contains(diverged.Text, "isogate.state.set") || st.count("set") != 2 {
		t.Fatalf("changed write: %s %s; %d sets", diverged.Code, diverged.Text, st.count("set"))
	}
}

// TestStateDeclaredToTheChecker: the checker knows the state object, so a
// checked program that uses it draws no diagnostic, and one that misuses
// it is told how (sandbox.typecheck: warn).
func TestStateDeclaredToTheChecker(t *testing.T) {
	if err := typecheck.Shared().Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, Options{Typecheck: typecheck.Shared(), TypecheckMode: TypecheckWarn, TypecheckTimeout: time.Minute,
		State: newCountingState(t)})
	r := f.ok(t, `const s = await everything.get_sum({a: 1, b: 2});
await state.set("sum", s, {ttl: 60});
const keys: string[] = await state.list({prefix: "s"});
const v = await state.get<string>("sum");
return [keys, v, await state.delete("sum")];`)
	if len(r.Notices) > 0 {
		t.Fatalf("notices on a correct use of state: %q", r.Notices)
	}
	r = f.exec(t, `await state.set(5, 1, {ttl: "soon"}); return await state.lst()`)
	joined := strings.Join(r.Notices, "\n")
	for _, want := range []string{"'number' is not assignable to parameter of type 'string'", "Property 'lst' does not exist on type 'IsogateState'"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notices lack %q:\n%s", want, joined)
		}
	}
}

// TestBackendNamedStateKeepsItsName: a configured backend called "state"
// is what `state` names in programs (as before state existed), and the
// checker is not told otherwise.
func TestBackendNamedStateKeepsItsName(t *testing.T) {
	cat := catalog.New()
	cat.SetBackend("state", nil, []*mcp.Tool{{Name: "get", InputSchema: map[string]any{"type": "object"}}})
	caller := &countingCaller{}
	st := newCountingState(t)
	e, err := New(Options{Runner: sharedPool(), Catalog: FromCatalog(cat), Caller: caller, State: st,
		Output: output.DefaultOptions(), Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	resp := e.Execute(context.Background(), Request{Code: `const r = await state.get({}); const s = await state.get({}); return [r.n, s.n]`})
	if resp.IsError || string(resp.Value) != "[1, 2]" && string(resp.Value) != "[1,2]" || caller.total() != 2 || st.count("get") != 0 {
		t.Fatalf("%s %s; %d backend calls, %d state reads", resp.Text, resp.Value, caller.total(), st.count("get"))
	}
	if d := declarationsOf(e.view()); strings.Contains(d, "IsogateState") {
		t.Errorf("the checker is told state is the store:\n%s", d)
	}
}

// TestStateWritesInThePlan: the checker follows the state object as it
// follows a backend, so a checked program's plan lists its state writes
// (not its reads) with their lines and loops, shown with the plan; they
// are no tools to policy.
func TestStateWritesInThePlan(t *testing.T) {
	if err := typecheck.Shared().Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	var seen *pipeline.Plan
	f := newFixture(t, Options{Typecheck: typecheck.Shared(), TypecheckMode: TypecheckStrict, TypecheckTimeout: time.Minute,
		State: newCountingState(t), AdmitPlan: func(_ context.Context, plan *pipeline.Plan, _ bool) error {
			seen = plan
			return nil
		}})
	r := f.ok(t, `const n = (await state.get("n")) ?? 0;
for (const k of ["a", "b"]) await state.set(k, n);
await state.delete("a");
const s = await everything.get_sum({a: 1, b: 2});
return [n, s];`)
	if r.IsError || seen == nil {
		t.Fatalf("%s; plan %+v", r.Text, seen)
	}
	var ops []string
	for _, w := range seen.State {
		ops = append(ops, fmt.Sprintf("%s@%v:%s", w.Name(), w.Lines, w.Loop))
	}
	if got := strings.Join(ops, " "); got != "state.set@[2]:yes state.delete@[3]:no" {
		t.Errorf("state writes in the plan: %q", got)
	}
	if len(seen.Tools) != 1 || seen.Tools[0].Name() != "everything.get-sum" || seen.Partial {
		t.Errorf("tools in the plan: %+v (partial %v)", seen.Tools, seen.Partial)
	}
	if text := seen.Text(); !strings.Contains(text, "- state.set: writes the caller's own state (line 2; in a loop: yes)") {
		t.Errorf("the plan as shown:\n%s", text)
	}
}
