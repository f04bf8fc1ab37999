package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/isogate/isogate/internal/resultstore/redistest"
	"github.com/isogate/isogate/internal/testutil"
)

// countingBackend is an MCP backend over streamable HTTP in the test
// process, shared by both replicas: it counts every call it receives, by
// tool and argument, and holds one chosen call until the test lets it go
// (or its caller goes away), telling the test when that call arrived.
type countingBackend struct {
	url     string
	arrived chan string   // the held call's key, once it arrived
	release chan struct{} // closed: the held call returns

	mu     sync.Mutex
	counts map[string]int
	holdAt string        // the key of the call to hold
	work   time.Duration // how long each call works (the soak's backend latency)
}

type stepArgs struct {
	N int `json:"n"`
}

// newCountingBackend serves tools step({n}) (a side effect: not
// idempotent) and wait() (idempotentHint: sending it again is harmless),
// holding the first call whose key (step-<n> or wait) is holdAt.
func newCountingBackend(t *testing.T, holdAt string) *countingBackend {
	b := &countingBackend{arrived: make(chan string, 1), release: make(chan struct{}), counts: map[string]int{}, holdAt: holdAt}
	srv := mcp.NewServer(&mcp.Implementation{Name: "counter"}, nil)
	called := func(ctx context.Context, key string, value string) (*mcp.CallToolResult, any, error) {
		b.mu.Lock()
		b.counts[key]++
		hold := key == b.holdAt && b.counts[key] == 1
		work := b.work
		b.mu.Unlock()
		if work > 0 {
			select { // simulated backend latency, not a synchronisation
			case <-time.After(work):
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		}
		if hold {
			b.arrived <- key
			select {
			case <-b.release:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: value}}}, nil, nil
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "step", Description: "one step with a side effect"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in stepArgs) (*mcp.CallToolResult, any, error) {
			return called(ctx, fmt.Sprintf("step-%d", in.N), fmt.Sprint(in.N*10))
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "wait", Description: "waits; no side effect",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, ReadOnlyHint: true}},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return called(ctx, "wait", "waited")
		})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	b.url = "http://" + ln.Addr().String() + "/mcp"
	return b
}

// count is how many times the backend received the call key.
func (b *countingBackend) count(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.counts[key]
}

// wantCounts reports each call key the backend did not receive exactly
// the wanted number of times.
func (b *countingBackend) wantCounts(t *testing.T, want map[string]int) {
	t.Helper()
	for key, n := range want {
		if got := b.count(key); got != n {
			t.Errorf("the backend received %s %d times, want %d", key, got, n)
		}
	}
}

// takeoverConfig writes a gateway config with the counting backend only.
func takeoverConfig(t *testing.T, backendURL string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`server:
  cache_dir: %s
  log_level: debug
backends:
  counter:
    url: %s
sandbox:
  isolation: thread
  trusted_code: true
  timeout: 60s
`, filepath.Join(dir, "cache"), backendURL)
	path := filepath.Join(dir, "isogate.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTaskSurvivesItsReplica: two real isogate replicas (stateless, one
// real redis-server, store.lease_ttl 2s), one counting backend shared by
// both. A program is started as a task through A; when its call held by
// the backend arrives, A is SIGKILLed; B takes the task over once A's
// lease lapses (no sleep: the test waits on tasks/result through B).
//   - durable all, A dies between side effects (in an idempotent wait):
//     B replays step 1 and 2 from the journal, sends wait again, makes
//     steps 3 and 4 live: the task completes with every step made once.
//   - durable all, A dies in the middle of step 3: the task fails with
//     CALL_INDETERMINATE naming call #3 (counter.step); step 3 is not sent
//     again and step 4 never.
//   - durable all, its journal edited in Redis (a result rewritten) before
//     A dies: B refuses to replay it and the task fails with REPLICA_LOST
//     naming the integrity check; nothing is sent again.
//   - durable off: the task fails with REPLICA_LOST; nothing is sent again;
//     so does a durable task without store.hmac_key (a journal that could
//     have been planted in Redis is not run for the principal a lease
//     names).
func TestTaskSurvivesItsReplica(t *testing.T) {
	srv := redistest.ForTest(t)
	const alice = "alice-takeover-token"
	env := func(durable string) []string {
		key := takeoverHMACKey
		var extra []string
		switch durable {
		case "all, no key":
			durable, key = "all", ""
		case "all, bound 2 calls":
			durable, extra = "all", []string{"ISOGATE_SANDBOX__DURABLE_MAX_CALLS=2"}
		}
		return append(extra, takeoverEnv(srv.URL(), key, durable, alice)...)
	}
	const betweenSteps = `const out = [];
for (let i = 1; i <= 2; i++) out.push(await counter.step({n: i}));
await counter.wait({});
for (let i = 3; i <= 4; i++) out.push(await counter.step({n: i}));
return "steps " + out.join(",") + " clock " + (Date.now() > 0) + " random " + (Math.random() < 1);`
	const fourSteps = `const out = [];
for (let i = 1; i <= 4; i++) out.push(await counter.step({n: i}));
return "steps " + out.join(",");`
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	for _, tc := range []struct {
		name, durable, hold, code string
		wantStatus, want          string
		counts                    map[string]int
		tamper                    bool // rewrite a result in the task's journal before A dies
	}{
		{"durable between calls", "all", "wait", betweenSteps, "completed", "steps 10,20,30,40 clock true random true",
			map[string]int{"step-1": 1, "step-2": 1, "wait": 2, "step-3": 1, "step-4": 1}, false},
		{"durable mid-call", "all", "step-3", fourSteps, "failed", "CALL_INDETERMINATE",
			map[string]int{"step-1": 1, "step-2": 1, "step-3": 1, "step-4": 0}, false},
		{"durable, journal edited in Redis", "all", "wait", betweenSteps, "failed", "failed its integrity check",
			map[string]int{"step-1": 1, "step-2": 1, "wait": 1, "step-3": 0, "step-4": 0}, true},
		{"durability off", "off", "wait", betweenSteps, "failed", "REPLICA_LOST",
			map[string]int{"step-1": 1, "step-2": 1, "wait": 1, "step-3": 0, "step-4": 0}, false},
		// Without store.hmac_key a journal in Redis could be planted: it is
		// not run for the principal a lease names.
		{"durable without store.hmac_key", "all, no key", "wait", betweenSteps, "failed", "store.hmac_key is not set",
			map[string]int{"step-1": 1, "step-2": 1, "wait": 1, "step-3": 0, "step-4": 0}, false},
		// Past sandbox.durable_max_calls the run goes on not durable: its
		// journal (steps 1 and 2) says so in the store (a taker replaying
		// it would make step 3 again): the taker fails the task with
		// CALL_INDETERMINATE, naming the journalled calls (issue 44).
		{"durable past its bound", "all, bound 2 calls", "wait", `const out = [];
for (let i = 1; i <= 3; i++) out.push(await counter.step({n: i}));
await counter.wait({});
out.push(await counter.step({n: 4}));
return "steps " + out.join(",");`, "failed", "CALL_INDETERMINATE",
			map[string]int{"step-1": 1, "step-2": 1, "step-3": 1, "wait": 1, "step-4": 0}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			backend := newCountingBackend(t, tc.hold)
			cfg := takeoverConfig(t, backend.url)
			urlA, procA := startHTTPProcess(t, cfg, env(tc.durable)...)
			urlB, _ := startHTTPProcess(t, cfg, env(tc.durable)...)

			task := createTask(t, urlA, alice, tc.code)
			backend.waitHeld(t)
			if tc.tamper {
				key := "{isogate}:journals:j:" + task.TaskID + ":e"
				entries, err := rdb.LRange(context.Background(), key, 0, -1).Result()
				edited := false
				for i, e := range entries {
					if strings.Contains(e, `"k":"done"`) && strings.Contains(e, "10") {
						err = rdb.LSet(context.Background(), key, int64(i), strings.Replace(e, "10", "99", 1)).Err()
						edited = true
						break
					}
				}
				if err != nil || !edited {
					t.Fatalf("no result to rewrite in the task's journal %s: %v %q", key, err, entries)
				}
			}
			backend.endWhileHeld(t, procA, syscall.SIGKILL)
			raw, rerr, st := askTask(t, urlB, alice, task.TaskID)
			t.Logf("tasks/result through B: %s %+v; status %+v", raw, rerr, st)
			if st.Status != tc.wantStatus {
				t.Errorf("task status %q (%s), want %q", st.Status, st.StatusMessage, tc.wantStatus)
			}
			if !strings.Contains(string(raw), tc.want) {
				t.Errorf("task result %s, want %q in it", raw, tc.want)
			}
			if tc.wantStatus == "failed" && !strings.Contains(st.StatusMessage, tc.want) {
				t.Errorf("status message %q does not name %s", st.StatusMessage, tc.want)
			}
			if tc.want == "CALL_INDETERMINATE" && tc.name == "durable mid-call" && !strings.Contains(string(raw), "#3, counter.step") {
				t.Errorf("the failure does not name call #3, counter.step: %s", raw)
			}
			backend.wantCounts(t, tc.counts)
		})
	}
}

// TestPausedReplicaIsFencedOff: replica A is not dead but frozen
// (SIGSTOP) past its lease while its program waits in a call: B takes the
// task over and completes it (every step made once). When A thaws and its
// held call returns, A finds the task taken (its lease renewal or its
// journal write is refused) and stops: it sends no call of its own (no step
// twice) and does not overwrite the task's outcome.
func TestPausedReplicaIsFencedOff(t *testing.T) {
	srv := redistest.ForTest(t)
	const alice = "alice-takeover-token"
	env := takeoverEnv(srv.URL(), takeoverHMACKey, "all", alice)
	backend := newCountingBackend(t, "wait")
	cfg := takeoverConfig(t, backend.url)
	urlA, procA, logsA := startHTTPLogged(t, cfg, env...)
	urlB, _ := startHTTPProcess(t, cfg, env...)

	task := createTask(t, urlA, alice, `const out = [];
for (let i = 1; i <= 2; i++) out.push(await counter.step({n: i}));
await counter.wait({});
for (let i = 3; i <= 4; i++) out.push(await counter.step({n: i}));
return "steps " + out.join(",");`)
	<-backend.arrived
	if err := procA.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	raw, rerr := rawRPC(t, urlB, alice, "tasks/result", map[string]any{"taskId": task.TaskID})
	if rerr != nil || !strings.Contains(string(raw), "steps 10,20,30,40") {
		t.Fatalf("tasks/result through B: %+v %s", rerr, raw)
	}
	if err := procA.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	close(backend.release) // A's held wait returns to A
	testutil.Eventually(t, 20*time.Second, func() bool {
		return strings.Contains(logsA.String(), "stopped here")
	}, "A never noticed the takeover:\n%s", logsA)
	raw, rerr = rawRPC(t, urlA, alice, "tasks/result", map[string]any{"taskId": task.TaskID})
	if rerr != nil || !strings.Contains(string(raw), "steps 10,20,30,40") {
		t.Errorf("tasks/result through A after it thawed: %+v %s", rerr, raw)
	}
	backend.wantCounts(t, map[string]int{"step-1": 1, "step-2": 1, "wait": 2, "step-3": 1, "step-4": 1})
}

// takeoverEnv is the environment of the takeover tests' replicas:
// stateless, sharing redisURL with hmacKey ("" none), leases of 2 s,
// sandbox.durable as given, and token auth with alice's token.
func takeoverEnv(redisURL, hmacKey, durable, alice string) []string {
	return []string{"ISOGATE_SERVER__STATELESS=true", "ISOGATE_STORE__REDIS_URL=" + redisURL,
		"ISOGATE_STORE__HMAC_KEY=" + hmacKey, "ISOGATE_STORE__LEASE_TTL=2s",
		"ISOGATE_SANDBOX__DURABLE=" + durable,
		"ISOGATE_SERVER__AUTH__MODE=token", "ISOGATE_SERVER__AUTH__TOKENS__ALICE__TOKEN=" + alice}
}

// takeoverHMACKey is the takeover tests' store.hmac_key.
const takeoverHMACKey = "takeover-hmac-key-0123456789"

// waitHeld waits until the backend holds the call it was told to hold.
func (b *countingBackend) waitHeld(t *testing.T) {
	t.Helper()
	select {
	case <-b.arrived:
	case <-time.After(60 * time.Second):
		t.Fatal("the held call never reached the backend")
	}
}

// endWhileHeld ends replica a with sig (SIGKILL: it dies, no goodbye;
// SIGTERM: it stops gracefully) while the backend holds a call of its,
// waits for it to exit, then lets the held call return.
func (b *countingBackend) endWhileHeld(t *testing.T, a *exec.Cmd, sig os.Signal) {
	t.Helper()
	if err := a.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	_ = a.Wait()
	close(b.release)
}

// askTask asks replica url for a task's result and its state.
func askTask(t *testing.T, url, token, taskID string) (json.RawMessage, *rpcError, taskState) {
	t.Helper()
	raw, rerr := rawRPC(t, url, token, "tasks/result", map[string]any{"taskId": taskID})
	got, _ := rawRPC(t, url, token, "tasks/get", map[string]any{"taskId": taskID})
	var st taskState
	_ = json.Unmarshal(got, &st)
	return raw, rerr, st
}
