package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/resultstore/redistest"
	"github.com/isogate/isogate/internal/tasks"
)

// stateGateway is programsGateway (principals alice, bob, carol, root)
// with state.max_keys maxKeys (0: the default).
func stateGateway(t *testing.T, dataDir, redisURL string, maxKeys int) *httpGateway {
	t.Helper()
	return newHTTPGateway(t, func(c *config.Config) {
		c.Store.DataDir = dataDir
		c.Store.RedisURL = redisURL
		c.Server.Auth.Mode = config.AuthToken
		c.Server.Auth.Tokens = programTokens
		c.Server.Auth.Admins = []string{"root"}
		c.Backends = map[string]config.Backend{}
		if maxKeys > 0 {
			c.State.MaxKeys = maxKeys
		}
	})
}

// chainText runs a program through cs and returns its text, error flag
// and code.
func chainText(t *testing.T, cs *mcp.ClientSession, code string) (string, bool, string) {
	t.Helper()
	return callProgramTool(t, cs, "call_tool_chain", map[string]any{"code": code})
}

// visit counts the principal's visits in its state.
const visit = `const n = (await state.get("visits")) ?? 0;
await state.set("visits", n + 1);
return "visit " + (n + 1);`

// TestStateAcrossRunsReplicasAndPrincipals: programs' state is kept
// across runs and replicas (two gateways on one real redis-server) and
// across a restart (bbolt in store.data_dir); alice and bob, writing at
// once on both replicas under the same key names and under keys that name
// each other's (attack: separators, "..", a prefix of the other's name),
// never read, list or count each other's keys; a program alice saved and
// root published to bob runs on bob's state when bob calls it.
func TestStateAcrossRunsReplicasAndPrincipals(t *testing.T) {
	srv := redistest.ForTest(t)
	r1 := stateGateway(t, t.TempDir(), srv.URL(), 0)
	r2 := stateGateway(t, t.TempDir(), srv.URL(), 0)
	alice1, alice2 := r1.connectProgram(t, "alice", nil), r2.connectProgram(t, "alice", nil)
	bob1, bob2 := r1.connectProgram(t, "bob", nil), r2.connectProgram(t, "bob", nil)
	for i, cs := range []*mcp.ClientSession{alice1, alice2, alice1} {
		if text, isErr, _ := chainText(t, cs, visit); isErr || text != fmt.Sprintf("visit %d", i+1) {
			t.Fatalf("alice's visit %d: %s", i+1, text)
		}
	}

	// Both principals at once, on both replicas, under the same keys and
	// under keys that name the other's.
	write := func(who string) string {
		return fmt.Sprintf(`const keys = ["mine", "../%[2]s/mine", "%[2]s/mine", "state/%[2]s/mine", "k:mine", "u", "..", "al", "bo"];
for (let i = 0; i < 5; i++) await Promise.all(keys.map((k) => state.set(k, {who: %[1]q, i})));
return "ok";`, who, map[string]string{"alice": "bob", "bob": "alice"}[who])
	}
	var wg sync.WaitGroup
	for _, c := range []struct {
		who string
		cs  *mcp.ClientSession
	}{{"alice", alice1}, {"alice", alice2}, {"bob", bob1}, {"bob", bob2}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": write(c.who)}})
			if err != nil || res.IsError {
				t.Errorf("%s writes: %v %+v", c.who, err, res)
			}
		}()
	}
	wg.Wait()
	const read = `const keys = await state.list();
const whose = new Set();
for (const k of keys) { const v = await state.get(k); if (v && v.who) whose.add(v.who); }
return {keys: keys.length, whose: [...whose], visits: await state.get("visits") ?? null,
  cross: await state.get("../alice/visits") ?? await state.get("alice/visits") ?? null};`
	for who, cs := range map[string]*mcp.ClientSession{"alice": alice2, "bob": bob1} {
		text, isErr, _ := chainText(t, cs, read)
		var got struct {
			Keys   int      `json:"keys"`
			Whose  []string `json:"whose"`
			Visits any      `json:"visits"`
			Cross  any      `json:"cross"`
		}
		if isErr || json.Unmarshal([]byte(text), &got) != nil {
			t.Fatalf("%s reads: %s", who, text)
		}
		wantKeys, wantVisits := 9, any(nil)
		if who == "alice" {
			wantKeys, wantVisits = 10, float64(3)
		}
		if got.Keys != wantKeys || len(got.Whose) != 1 || got.Whose[0] != who || got.Visits != wantVisits || got.Cross != nil {
			t.Errorf("%s sees %+v; want %d keys, all its own, visits %v", who, got, wantKeys, wantVisits)
		}
	}

	// A published program runs on its caller's state.
	if text, isErr, _ := callProgramTool(t, alice1, "save_program", map[string]any{"name": "visit", "description": "Counts visits.", "code": visit}); isErr {
		t.Fatal(text)
	}
	root := r1.connectProgram(t, "root", nil)
	if text, isErr, _ := callProgramTool(t, root, "programs", map[string]any{"action": "publish", "owner": "alice", "name": "visit", "to": []string{"bob"}}); isErr {
		t.Fatal(text)
	}
	if text, isErr, _ := callProgramTool(t, bob2, "program_visit", map[string]any{}); isErr || !strings.Contains(text, "visit 1") {
		t.Fatalf("bob calls alice's published program: %s (want bob's first visit)", text)
	}
	if text, isErr, _ := callProgramTool(t, alice2, "program_visit", map[string]any{}); isErr || !strings.Contains(text, "visit 4") {
		t.Fatalf("alice calls her program: %s", text)
	}

	// Kept across a restart on the embedded store.
	dir := t.TempDir()
	a := stateGateway(t, dir, "", 0)
	cs := a.connectProgram(t, "carol", nil)
	if text, isErr, _ := chainText(t, cs, visit); isErr || text != "visit 1" {
		t.Fatal(text)
	}
	cs.Close()
	a.g.Close()
	b := stateGateway(t, dir, "", 0)
	if text, isErr, _ := chainText(t, b.connectProgram(t, "carol", nil), visit); isErr || text != "visit 2" {
		t.Fatalf("after a restart: %s", text)
	}
}

// TestStateQuotaRefused: a program that writes past state.max_keys fails
// with STATE_QUOTA_EXCEEDED (the run's code when uncaught), the keys
// before it kept, nothing past it, counted in
// isogate_store_refusals_total{store="state"}; another principal has its
// own quota.
func TestStateQuotaRefused(t *testing.T) {
	h := stateGateway(t, t.TempDir(), "", 3)
	alice, bob := h.connectProgram(t, "alice", nil), h.connectProgram(t, "bob", nil)
	text, isErr, code := chainText(t, alice, `for (let i = 0; i < 5; i++) await state.set("k" + i, i); return "all written"`)
	if !isErr || code != "STATE_QUOTA_EXCEEDED" || !strings.Contains(text, "state.max_keys") {
		t.Fatalf("past the quota: %q %s", code, text)
	}
	if text, _, _ := chainText(t, alice, `return await state.list()`); strings.Join(strings.Fields(text), "") != `["k0","k1","k2"]` {
		t.Fatalf("kept after the refusal: %s", text)
	}
	if text, isErr, _ := chainText(t, bob, `for (let i = 0; i < 3; i++) await state.set("k" + i, i); return (await state.list()).length`); isErr || text != "3" {
		t.Fatalf("bob's own quota: %s", text)
	}
	if got := scrape(t, strings.TrimSuffix(h.url, "/mcp"))[`isogate_store_refusals_total{store="state"}`]; got != 1 {
		t.Errorf(`isogate_store_refusals_total{store="state"} = %v, want 1`, got)
	}
}

// payOnce reads a counter from state, writes it back increased, then
// calls counter.pay (under approval: the run pauses there) and returns
// what it read and what state holds after.
const payOnce = `const n = (await state.get("paid")) ?? 0;
await state.set("paid", n + 1);
const r = await counter.pay({amount: 5});
return {n, after: await state.get("paid")};`

// TestStateWrittenOnceWhenResumedElsewhere: a durable run writes state,
// then pauses for an approval on replica A; the retry reaches replica B,
// which resumes it by replay: the read and the write come from the
// journal, so the counter is 1, not 2, and the program sees what it saw
// on A. A second run reads 1.
func TestStateWrittenOnceWhenResumedElsewhere(t *testing.T) {
	srv := redistest.ForTest(t)
	counter := newCountingBackend()
	urlA, _ := durableReplica(t, srv.URL(), counter)
	urlB, _ := durableReplica(t, srv.URL(), counter)
	a, b := roundTripClient(t, urlA), roundTripClient(t, urlB)
	res, err := a.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": payOnce}})
	if err != nil || len(res.InputRequests) != 1 {
		t.Fatalf("want a pause for the approval: %v %+v", err, res)
	}
	res, err = b.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": payOnce},
		InputResponses: mcp.InputResponseMap{"approval-1": &mcp.ElicitResult{Action: "accept"}}, RequestState: res.RequestState})
	if err != nil || res.IsError || len(res.InputRequests) > 0 {
		t.Fatalf("resumed on B: %v %+v", err, res)
	}
	if text := strings.Join(strings.Fields(res.Content[0].(*mcp.TextContent).Text), ""); text != `{"n":0,"after":1}` {
		t.Fatalf("resumed on B: %s (want the read A made, and one write)", text)
	}
	res, err = a.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": `return await state.get("paid")`}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "1" {
		t.Fatalf("the counter after the resumed run: %+v %v (want 1: written once)", res, err)
	}
}

// TestStateWrittenOnceAfterTakeover: a durable task (sandbox.durable:
// all) reads and writes state, then calls a tool; replica A is lost (as
// by SIGKILL) after the write was journalled done, or while the write was
// in flight (journalled started, no outcome), and replica B takes the
// task over by replay. Either way the task completes having written once:
// the write journalled done is not made again, the one in flight is made
// again with the same value (the read comes from the journal), and the
// tool is called once.
func TestStateWrittenOnceAfterTakeover(t *testing.T) {
	srv := redistest.ForTest(t)
	counter := newCountingBackend()
	urlA, a := leasedReplica(t, srv.URL(), counter, false)
	urlB, _ := leasedReplica(t, srv.URL(), counter, true)
	// Journal writes: 1 begin, 2 #1 state.get started, 3 done, 4 #2
	// state.set started, 5 done, 6 #3 counter.bump started, 7 done.
	for _, tc := range []struct {
		name string
		at   int
	}{{"write in flight", 5}, {"write journalled", 6}} {
		t.Run(tc.name, func(t *testing.T) {
			key := strings.ReplaceAll(tc.name, " ", "-")
			program := fmt.Sprintf(`const n = (await state.get(%[1]q)) ?? 0;
await state.set(%[1]q, n + 1);
await counter.bump({n});
return "seen " + n + ", now " + (await state.get(%[1]q));`, key)
			h := &stepHook{step: TaskStepAt{tasks.StepJournalWrite, tc.at, tasks.TaskKill}}
			a.app.Surface.SetTaskHook(h.hook)
			defer a.app.Surface.SetTaskHook(nil)
			before := counter.count()
			id := createChainTask(t, urlA, program)
			_, res, err := taskRPC(context.Background(), urlB, "alice", taskWire{}, "tasks/result", map[string]any{"taskId": id})
			if err != nil || res.Error != nil {
				t.Fatalf("tasks/result through B: %v %+v", err, res.Error)
			}
			h.mu.Lock()
			lost := h.did
			h.mu.Unlock()
			if !lost {
				t.Fatalf("replica A was not lost at journal write %d: the task ran to its end there", tc.at)
			}
			if !strings.Contains(string(res.Result), "seen 0, now 1") {
				t.Fatalf("taken-over task: %s (want seen 0, now 1: one write)", res.Result)
			}
			if n := counter.count() - before; n != 1 {
				t.Errorf("the backend received %d calls, want 1", n)
			}
			_, res, err = taskRPC(context.Background(), urlB, "alice", taskWire{}, "tools/call", map[string]any{"name": "call_tool_chain",
				"arguments": map[string]any{"code": fmt.Sprintf(`return "count " + (await state.get(%q))`, key)}})
			if err != nil || !strings.Contains(string(res.Result), "count 1") {
				t.Fatalf("the counter after the takeover: %v %s (want 1)", err, res.Result)
			}
		})
	}
}

// TestRunCodeSharesProgramsState: with run_code.state, run_code's state
// is the caller's, the one its call_tool_chain programs read.
func TestRunCodeSharesProgramsState(t *testing.T) {
	h := newHTTPGateway(t, func(c *config.Config) {
		c.Store.DataDir = t.TempDir()
		c.Server.Auth.Mode = config.AuthToken
		c.Server.Auth.Tokens = programTokens
		c.Backends = map[string]config.Backend{}
		c.RunCode.Enabled = true
		c.RunCode.State = true
	})
	alice, bob := h.connectProgram(t, "alice", nil), h.connectProgram(t, "bob", nil)
	if text, isErr, _ := callProgramTool(t, alice, "run_code", map[string]any{"code": `await state.set("from", "run_code"); return 1`}); isErr {
		t.Fatal(text)
	}
	if text, isErr, _ := chainText(t, alice, `return await state.get("from")`); isErr || text != "run_code" {
		t.Fatalf("call_tool_chain reads: %s", text)
	}
	if text, isErr, _ := chainText(t, bob, `return (await state.get("from")) ?? "none"`); isErr || text != "none" {
		t.Fatalf("bob reads alice's: %s", text)
	}
}
