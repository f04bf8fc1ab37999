package codemode

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/codemode/output"
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
