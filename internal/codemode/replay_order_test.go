package codemode

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/codemode/output"
	"github.com/isogate/isogate/v8sandbox"
)

// raceCaller is a countingCaller whose tool "slow" answers only once
// "same" was called: a race of slow and fast is won by fast.
type raceCaller struct {
	countingCaller
	once     sync.Once
	sameSeen chan struct{}
}

func (c *raceCaller) CallTool(ctx context.Context, backend, tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
	switch tool {
	case "slow":
		select {
		case <-c.sameSeen:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case "same":
		c.once.Do(func() { close(c.sameSeen) })
	}
	return c.countingCaller.CallTool(ctx, backend, tool, args)
}

func (c *raceCaller) count(tool string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[tool]
}

// raceEngine is a durable engine over a backend "counter" of a raceCaller.
func raceEngine(t *testing.T) (*Engine, *raceCaller) {
	t.Helper()
	cat := catalog.New()
	var tools []*mcp.Tool
	for _, name := range []string{"slow", "fast", "same", "other", "bump"} {
		tools = append(tools, &mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}})
	}
	cat.SetBackend("counter", nil, tools)
	caller := &raceCaller{sameSeen: make(chan struct{})}
	e, err := New(Options{Runner: sharedPool(), Catalog: FromCatalog(cat), Caller: caller, Durable: true,
		Output: output.DefaultOptions(), Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	return e, caller
}

// raceProgram races two calls and branches on the winner: call #4 is
// counter.other when fast won, counter.bump when slow did. Call #3 is the
// same on both branches.
const raceProgram = `
const slow = counter.slow({}).then(() => "slow");
const fast = counter.fast({}).then(() => "fast");
const w = await Promise.race([slow, fast]);
await counter.same({});
const r = w === "fast" ? await counter.other({}) : await counter.bump({});
return w;`

// ordered returns a replay latency that releases the replayed replies of
// calls first and then (by seq) in that order: then's reply returns only
// once first's has.
func ordered(first, then int) func(seq int) {
	released := make(chan struct{})
	return func(seq int) {
		switch seq {
		case first:
			close(released)
		case then:
			<-released
		}
	}
}

// A durable program that races two calls and branches on the winner
// replays the same branch from its journal whatever order the replayed
// replies come back in: the journal holds the order in which the program
// received them (fast's before the call both branches make), and the
// replay delivers them in that order. Before, a replay whose journalled
// replies came back in call order (slow's first) took the other branch
// and made a live call the first run never made (counter.bump).
func TestDurableRaceReplaysTheSameBranch(t *testing.T) {
	e, caller := raceEngine(t)
	first, j := runDurable(t, e, NewJournal(raceProgram, 0, 0, ""), DurableLimits{})
	if first.IsError || string(first.Value) != `"fast"` || caller.count("other") != 1 || caller.count("bump") != 0 {
		t.Fatalf("first run: %s %s, calls %v", first.Value, first.Text, caller.counts)
	}
	// The replica died after call #3: the journal up to it is replayed.
	cut := *j
	cut.Calls = nil
	for _, c := range j.Calls {
		if c.Seq <= 3 {
			cut.Calls = append(cut.Calls, c)
		}
	}
	for _, order := range []struct {
		name        string
		first, then int
	}{{"fast's reply first", 2, 1}, {"slow's reply first", 1, 2}} {
		t.Run(order.name, func(t *testing.T) {
			others, bumps := caller.count("other"), caller.count("bump")
			jj := cut
			d := NewDurableRun(&jj, DurableLimits{}, nil)
			d.replayLatency = ordered(order.first, order.then)
			resp := e.Execute(context.Background(), Request{Code: jj.Code, Durable: d})
			if resp.IsError || string(resp.Value) != `"fast"` {
				t.Errorf("replay returned %s %s %s, want \"fast\"", resp.Code, resp.Value, resp.Text)
			}
			if caller.count("bump") != bumps || caller.count("other") != others+1 {
				t.Errorf("replay made %d live bump calls (want 0) and %d other calls (want 1): it took another branch",
					caller.count("bump")-bumps, caller.count("other")-others)
			}
			if n := caller.count("slow") + caller.count("fast") + caller.count("same"); n != 3 {
				t.Errorf("journalled calls made again: slow, fast and same made %d times in all, want 3", n)
			}
		})
	}
}

// A call the bridge refuses before it reaches the host (arguments that do
// not serialize) has a number but no journal entry: the replay still
// answers the calls after it from the journal. Before, the journal's
// call #3 was taken for a call past its end (it holds one call) and made
// again live.
func TestDurableReplayAfterUnsentCall(t *testing.T) {
	e, caller := durableEngine(t)
	const code = `let m = "";
for (let i = 0; i < 2; i++) { try { await counter.bump({x: 1n}) } catch (e) { m += e.message.slice(0, 9) } }
return [m, (await counter.bump({})).n]`
	first, j := runDurable(t, e, NewJournal(code, 0, 0, ""), DurableLimits{})
	if first.IsError || caller.total() != 1 || len(j.Calls) != 1 || j.Calls[0].Seq != 3 {
		t.Fatalf("first run: %s %s, %d calls, journal %+v", first.Value, first.Text, caller.total(), j.Calls)
	}
	again, _ := runDurable(t, e, j, DurableLimits{})
	if again.IsError || string(again.Value) != string(first.Value) || caller.total() != 1 {
		t.Fatalf("replay: %s %s, %d calls in all (want 1: none made again)", again.Value, again.Text, caller.total())
	}
}

// A journal whose order the program cannot follow ends the replay with
// REPLAY_DIVERGED and makes no call: a call made before the reply the
// journal lists before it (checked by the host), a call the program does
// not make once the listed replies were delivered (its reply is awaited
// first: the bridge's gate), an order no run can have.
func TestDurableImpossibleOrderDiverges(t *testing.T) {
	e, caller := durableEngine(t)
	const sequential = `const a = await counter.bump({}); const b = await counter.other({}); return [a.n, b.n]`
	const together = `const p = counter.bump({}); const q = counter.other({}); await p; await q; return (await counter.same({})).n`
	const unawaited = `counter.bump({}); return (await counter.other({})).n`
	for _, c := range []struct {
		name, code string
		edit       func(j *Journal)
		want       string
	}{
		{"call made before the journal's reply", unawaited, func(j *Journal) { callOf(j, 2).After = []int{1} },
			"made call #2 (counter.other) after receiving the replies of calls none, where the journal has #1"},
		{"call not made after the journal's replies", sequential, func(j *Journal) { callOf(j, 2).After = nil },
			"the journal has call #2 (counter.other) next, made after the replies of calls none, and the program did not make it"},
		{"replies in an order the program cannot take", together, func(j *Journal) { callOf(j, 3).After = []int{2} },
			"the journal has call #3 (counter.same) next"},
		{"a reply before its call", sequential, func(j *Journal) { callOf(j, 2).After = []int{2} },
			"it lists the reply of call #2 as received before call #2 was made"},
		{"a reply twice", together, func(j *Journal) { callOf(j, 3).After = []int{1, 1} },
			"it lists the reply of call #1 as received twice"},
		{"a reply without an outcome", sequential, func(j *Journal) { callOf(j, 1).State, callOf(j, 1).Reply = callStarted, nil },
			"holds no outcome of that call"},
	} {
		t.Run(c.name, func(t *testing.T) {
			first, j := runDurable(t, e, NewJournal(c.code, 0, 0, ""), DurableLimits{})
			if first.IsError {
				t.Fatalf("first run: %s", first.Text)
			}
			c.edit(j)
			before := caller.total()
			resp, _ := runDurable(t, e, j, DurableLimits{})
			if resp.Code != CodeReplayDiverged || !strings.Contains(resp.Text, c.want) || caller.total() != before {
				t.Errorf("replay: %s %s, %d live calls; want REPLAY_DIVERGED saying %q and none", resp.Code, resp.Text, caller.total()-before, c.want)
			}
		})
	}
	// The order the journal has, one the program can take, replays.
	first, j := runDurable(t, e, NewJournal(together, 0, 0, ""), DurableLimits{})
	for _, after := range [][]int{{1, 2}, {2, 1}} {
		callOf(j, 3).After = after
		before := caller.total()
		resp, _ := runDurable(t, e, j, DurableLimits{})
		if resp.IsError || string(resp.Value) != string(first.Value) || caller.total() != before {
			t.Errorf("replay with replies %v before call #3: %s %s, %d live calls", after, resp.Value, resp.Text, caller.total()-before)
		}
	}
}

// callOf is call seq of journal j.
func callOf(j *Journal, seq int) *JournalCall {
	for i := range j.Calls {
		if j.Calls[i].Seq == seq {
			return &j.Calls[i]
		}
	}
	panic("no such call")
}

// In a durable run the clock stands still between events: every read
// before a call returns one value, the journal holds that one value (not
// one per read), and a replay returns it again. A busy wait on the clock
// ends with TIMEOUT and a hint that says why, never HEAP_LIMIT. Before,
// each read was journalled (a million reads passed the journal's bound).
func TestDurableClockPerInterval(t *testing.T) {
	e, _ := durableEngine(t)
	const code = `const reads = [];
for (let i = 0; i < 1000000; i++) { const t = Date.now(); if (i % 250000 === 0) reads.push(t, new Date().getTime()); }
const r = await counter.bump({});
return [new Set(reads).size, reads[0], Date.now() >= reads[0]]`
	first, j := runDurable(t, e, NewJournal(code, 0, 0, ""), DurableLimits{MaxBytes: 1 << 20})
	if first.IsError || j == nil || len(j.Clock) != 1 {
		t.Fatalf("first run: %s %s, record %q, journal %+v", first.Value, first.Text, first.Record.Durability, j)
	}
	var got []any
	if err := json.Unmarshal(first.Value, &got); err != nil || got[0] != float64(1) || got[1] != j.Clock[0] || got[2] != true {
		t.Fatalf("clock reads before the call: %s (journal clock %v)", first.Value, j.Clock)
	}
	again, _ := runDurable(t, e, j, DurableLimits{})
	if again.IsError || !strings.HasPrefix(string(again.Value), string(first.Value[:strings.LastIndexByte(string(first.Value), ',')])) {
		t.Fatalf("replay: %s %s, want %s", again.Value, again.Text, first.Value)
	}

	d := NewDurableRun(NewJournal("", 0, 0, ""), DurableLimits{}, nil)
	busy := e.Execute(context.Background(), Request{Code: `const t = Date.now() + 20; while (Date.now() < t) {} return 1`,
		Durable: d, Timeout: 300 * time.Millisecond})
	if busy.Code != v8sandbox.CodeTimeout || !strings.Contains(busy.Text, "the clock advances only at tool calls") {
		t.Fatalf("busy wait: %s %s", busy.Code, busy.Text)
	}
}
