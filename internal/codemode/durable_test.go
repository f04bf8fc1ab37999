package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/codemode/output"
	"github.com/isogate/isogate/v8sandbox"
)

// countingCaller counts the calls that reach the backend, per tool; each
// answers {"n": <that tool's count>, "args": <its arguments>}.
type countingCaller struct {
	mu     sync.Mutex
	counts map[string]int
}

func (c *countingCaller) CallTool(_ context.Context, backend, tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[string]int{}
	}
	c.counts[tool]++
	return &mcp.CallToolResult{StructuredContent: map[string]any{"n": c.counts[tool], "args": args}}, nil
}

func (c *countingCaller) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.counts {
		n += v
	}
	return n
}

// durableEngine is an engine with journalled Date and Math.random over a
// backend "counter" whose tools count their calls ("same" declares
// idempotentHint).
func durableEngine(t testing.TB) (*Engine, *countingCaller) {
	t.Helper()
	cat := catalog.New()
	cat.SetBackend("counter", nil, []*mcp.Tool{
		{Name: "bump", InputSchema: map[string]any{"type": "object"}},
		{Name: "other", InputSchema: map[string]any{"type": "object"}},
		{Name: "same", InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{IdempotentHint: true}},
	})
	caller := &countingCaller{}
	e, err := New(Options{Runner: sharedPool(), Catalog: FromCatalog(cat), Caller: caller, Durable: true,
		Output: output.DefaultOptions(), Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	return e, caller
}

const durableProgram = `
const seen = [];
for (let i = 1; i <= 3; i++) {
  const r = await counter.bump({i});
  seen.push([r.n, Date.now(), Math.random(), new Date().getTime()]);
}
return seen;`

// runDurable runs code journalled in j (fresh or loaded) and returns the
// response and, for a fresh journal, the journal afterwards.
func runDurable(t *testing.T, e *Engine, j *Journal, limits DurableLimits) (Response, *Journal) {
	t.Helper()
	d := NewDurableRun(j, limits, nil)
	resp := e.Execute(context.Background(), Request{Code: j.Code, Durable: d})
	entries, err := journalEntries(d)
	if err != nil || j.loaded {
		return resp, nil // not durable any more, or only the entries added by this run
	}
	after, err := ParseJournal(entries)
	if err != nil {
		t.Fatal(err)
	}
	return resp, after
}

// journalEntries are the entries of a run that wrote none to a store:
// its whole journal.
func journalEntries(d *DurableRun) ([][]byte, error) {
	var entries [][]byte
	err := d.Flush(context.Background(), func(_ context.Context, e [][]byte) error {
		entries = e
		return nil
	})
	return entries, err
}

// A run re-executed from its whole journal repeats no call and sees the
// same results, Date.now(), new Date() and Math.random() values; from a
// journal cut after its second call, the third is made live.
func TestDurableReplayRepeatsNothing(t *testing.T) {
	e, caller := durableEngine(t)
	first, j := runDurable(t, e, NewJournal(durableProgram, 0, 0, ""), DurableLimits{})
	// One clock value per interval between events: Date.now() and new
	// Date() read after the same reply are one value.
	if first.IsError || caller.total() != 3 || len(j.Calls) != 3 || len(j.Clock) != 2 {
		t.Fatalf("first run: %s, %d calls, journal %+v", first.Text, caller.total(), j)
	}
	if first.Record.Durability != "journalled" {
		t.Errorf("record durability %q", first.Record.Durability)
	}
	// The clock values read after the last call were never sent (nothing
	// needed them): a replay reads them live.
	again, _ := runDurable(t, e, j, DurableLimits{})
	if again.IsError || !sameUntilLastClock(again.Value, first.Value) || caller.total() != 3 {
		t.Fatalf("replay made %d calls in all (want 3) and returned\n%s\nwant\n%s", caller.total(), again.Value, first.Value)
	}
	if !strings.HasPrefix(again.Record.Durability, "resumed by replay (3 calls") {
		t.Errorf("replay's record durability %q", again.Record.Durability)
	}

	// The run paused after its second call: the third goes live.
	cut := *j
	cut.Calls, cut.Clock = j.Calls[:2], j.Clock[:2]
	resumed, _ := runDurable(t, e, &cut, DurableLimits{})
	var got, want [][]float64
	_ = json.Unmarshal(resumed.Value, &got)
	_ = json.Unmarshal(first.Value, &want)
	if resumed.IsError || caller.total() != 4 || len(got) != 3 || fmt.Sprint(got[:2]) != fmt.Sprint(want[:2]) ||
		got[2][0] != 4 || got[2][2] != want[2][2] {
		t.Fatalf("resumed after 2 calls: %d calls in all (want 4), value %s, first %s", caller.total(), resumed.Value, first.Value)
	}
}

// A program that asks for another call than the journal's next one ends
// with REPLAY_DIVERGED naming the call, and makes no call at all.
func TestDurableReplayDiverges(t *testing.T) {
	e, caller := durableEngine(t)
	_, j := runDurable(t, e, NewJournal(durableProgram, 0, 0, ""), DurableLimits{})
	j.Code = strings.Replace(durableProgram, "counter.bump({i})", "(i === 2 ? counter.other({i}) : counter.bump({i}))", 1)
	resp, _ := runDurable(t, e, j, DurableLimits{})
	if !resp.IsError || resp.Code != CodeReplayDiverged || !strings.Contains(resp.Text, "call #2 is counter.other") || caller.total() != 3 {
		t.Fatalf("diverging replay: %s %s, %d calls in all (want 3)", resp.Code, resp.Text, caller.total())
	}
	// Ending before a journalled call diverges too.
	j.Code = `return (await counter.bump({i: 1})).n`
	resp, _ = runDurable(t, e, j, DurableLimits{})
	if resp.Code != CodeReplayDiverged || !strings.Contains(resp.Text, "#2 (counter.bump)") || caller.total() != 3 {
		t.Fatalf("replay that ends early: %s %s, %d calls", resp.Code, resp.Text, caller.total())
	}
}

// A call journalled as started without a result is never sent again,
// unless its tool declares idempotentHint; one paused for an approval
// (not sent yet) is made.
func TestDurableIndeterminateCall(t *testing.T) {
	e, caller := durableEngine(t)
	j := NewJournal(`await counter.bump({}); return (await counter.TOOL({})).n`, 0, 0, "")
	for _, tc := range []struct {
		tool, state string
		code        string
		calls       int
	}{
		{"bump", callStarted, string(CodeCallIndeterminate), 0},
		{"same", callStarted, "", 1},
		{"bump", callAsking, "", 1},
	} {
		before := caller.total()
		jj := *j
		jj.Code = strings.Replace(j.Code, "TOOL", tc.tool, 1)
		jj.Calls = []JournalCall{
			{Seq: 1, Backend: "counter", Tool: "bump", Args: json.RawMessage(`{}`), State: callDone, Reply: replyOf(`{"n":1}`)},
			{Seq: 2, Backend: "counter", Tool: tc.tool, Args: json.RawMessage(`{}`), State: tc.state, After: []int{1}},
		}
		resp, _ := runDurable(t, e, &jj, DurableLimits{})
		if string(resp.Code) != tc.code || caller.total()-before != tc.calls {
			t.Errorf("%s %s: %s %s, %d calls (want %q, %d)", tc.tool, tc.state, resp.Code, resp.Text, caller.total()-before, tc.code, tc.calls)
		}
		if tc.code != "" && !strings.Contains(resp.Text, "call #2, counter.bump") {
			t.Errorf("the failure does not name the call: %s", resp.Text)
		}
	}
}

// A journal past its bound makes the run non-durable, said in its record,
// and holds nothing more.
func TestDurableJournalBound(t *testing.T) {
	e, _ := durableEngine(t)
	resp, after := runDurable(t, e, NewJournal(durableProgram, 0, 0, ""), DurableLimits{MaxCalls: 2})
	if resp.IsError || after != nil || !strings.Contains(resp.Record.Durability, "not durable: its journal passed 2 calls") {
		t.Fatalf("%s; record %q; journal %+v", resp.Text, resp.Record.Durability, after)
	}
}

// sameUntilLastClock compares two values of durableProgram, all but the
// clock readings after its last call.
func sameUntilLastClock(a, b json.RawMessage) bool {
	var x, y [][]float64
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil || len(x) != 3 || len(y) != 3 {
		return false
	}
	return fmt.Sprint(x[:2]) == fmt.Sprint(y[:2]) && x[2][0] == y[2][0] && x[2][2] == y[2][2]
}

func replyOf(value string) *v8sandbox.HostReply {
	return &v8sandbox.HostReply{Value: json.RawMessage(value)}
}

// A journal sink that answers ErrHalt (another replica took the run over)
// stops the run before the call it was journalling is sent, even though
// the run's context is not cancelled: no call reaches the backend after it.
func TestDurableHaltSendsNothing(t *testing.T) {
	e, caller := durableEngine(t)
	writes := 0
	sink := func(_ context.Context, _ [][]byte) error {
		writes++
		if writes == 3 { // call #2's start: taken over
			return fmt.Errorf("%w: journal fenced", ErrHalt)
		}
		return nil
	}
	d := NewDurableRun(NewJournal(durableProgram, 0, 0, ""), DurableLimits{}, sink)
	resp := e.Execute(context.Background(), Request{Code: durableProgram, Durable: d})
	if !resp.IsError || caller.total() != 1 {
		t.Fatalf("halted run: %d calls reached the backend (want 1), answer %s", caller.total(), resp.Text)
	}
}

// hostNames is a runner recording the host functions its runs call.
type hostNames struct {
	v8sandbox.Runner
	mu    sync.Mutex
	names []string
}

func (r *hostNames) Run(ctx context.Context, job v8sandbox.Job, host v8sandbox.Host) (v8sandbox.Result, error) {
	return r.Runner.Run(ctx, job, recordedHost{host, r})
}

// take returns the names recorded so far and forgets them.
func (r *hostNames) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := r.names
	r.names = nil
	return names
}

type recordedHost struct {
	v8sandbox.Host
	r *hostNames
}

func (h recordedHost) Call(ctx context.Context, c v8sandbox.HostCall) v8sandbox.HostReply {
	h.r.mu.Lock()
	h.r.names = append(h.r.names, c.Name)
	h.r.mu.Unlock()
	return h.Host.Call(ctx, c)
}

// TestRunStartAskedOnlyWhenNeeded: under the durable prelude
// (sandbox.durable other than off), a run without a journal, and a
// journalled run that replays nothing and does not call Math.random, make
// their tool calls and read the clock without asking the host for their
// start (issue 44: in a worker process that question was a round trip per
// run); a fresh run that calls Math.random asks for its seed, and a
// replay for its start. The replays themselves are
// TestDurableReplayRepeatsNothing's.
func TestRunStartAskedOnlyWhenNeeded(t *testing.T) {
	cat := catalog.New()
	cat.SetBackend("counter", nil, []*mcp.Tool{{Name: "bump", InputSchema: map[string]any{"type": "object"}}})
	runner := &hostNames{Runner: sharedPool()}
	e, err := New(Options{Runner: runner, Catalog: FromCatalog(cat), Caller: &countingCaller{}, Durable: true,
		Output: output.DefaultOptions(), Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	const noRandom = "const r = await counter.bump({});\nreturn [r.n, Date.now() > 0, new Date().getTime() > 0];"
	for _, c := range []struct {
		name    string
		code    string
		journal bool
		asks    bool
	}{
		{"no journal", noRandom + "\n// Math.random()", false, false},
		{"no journal, Math.random", "const r = await counter.bump({});\nreturn [r.n, Math.random() < 1];", false, false},
		{"fresh journal", noRandom, true, false},
		{"fresh journal, Math.random", durableProgram, true, true},
	} {
		var resp Response
		if c.journal {
			resp, _ = runDurable(t, e, NewJournal(c.code, 0, 0, ""), DurableLimits{})
		} else {
			resp = e.Execute(context.Background(), Request{Code: c.code})
		}
		names := runner.take()
		if resp.IsError || !slices.Contains(names, fnCall) || slices.Contains(names, fnDeterminism) != c.asks {
			t.Errorf("%s: called %v (%s); want %s, and %s: %v", c.name, names, resp.Text, fnCall, fnDeterminism, c.asks)
		}
	}
	_, j := runDurable(t, e, NewJournal(durableProgram, 0, 0, ""), DurableLimits{})
	runner.take()
	if replay, _ := runDurable(t, e, j, DurableLimits{}); replay.IsError || !slices.Contains(runner.take(), fnDeterminism) {
		t.Errorf("a replay did not ask for its start (%s)", replay.Text)
	}
}
