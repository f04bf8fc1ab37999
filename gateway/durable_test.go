package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/internal/resultstore/redistest"
	"github.com/isogate/isogate/v8sandbox"
)

// countingBackend counts every call its tools receive.
type countingBackend struct {
	server *mcp.Server
	mu     sync.Mutex
	calls  []string
}

func newCountingBackend() *countingBackend {
	b := &countingBackend{server: mcp.NewServer(&mcp.Implementation{Name: "counter"}, nil)}
	for _, name := range []string{"bump", "pay"} {
		mcp.AddTool(b.server, &mcp.Tool{Name: name, Description: "Counts its calls."},
			func(_ context.Context, _ *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, map[string]any, error) {
				b.mu.Lock()
				defer b.mu.Unlock()
				b.calls = append(b.calls, name)
				return nil, map[string]any{"n": len(b.calls)}, nil
			})
	}
	return b
}

func (b *countingBackend) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.calls)
}

// durableReplica is a stateless gateway on the shared Redis, serving HTTP,
// with counter.pay under approval; extra backends make its catalogue
// differ from the other replica's.
func durableReplica(t *testing.T, redisURL string, counter *countingBackend, extra ...backend.Spec) (string, *Gateway) {
	t.Helper()
	return durableReplicaOf(t, redisURL, counter, 2, 0, extra...)
}

// durableReplicaOf is durableReplica with a pool of workers V8 threads and
// sandbox.timeout timeout (0: the default).
func durableReplicaOf(t *testing.T, redisURL string, counter *countingBackend, workers int, timeout time.Duration, extra ...backend.Spec) (string, *Gateway) {
	t.Helper()
	cfg := config.Default()
	if timeout > 0 {
		cfg.Sandbox.Timeout = timeout
	}
	cfg.Server.CacheDir = t.TempDir()
	cfg.Server.Stateless = true
	cfg.Store.RedisURL = redisURL
	cfg.Store.HMACKey = "durable-test-hmac-key-0123456789"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	specs := append([]backend.Spec{backend.InMemory("counter", counter.server)}, extra...)
	// A pool of its own: a run paused for an approval whose retry went to
	// the other replica keeps its V8 thread until this replica sees the
	// claim (TestPausedCopyEndsWhenAnotherReplicaResumes), or until its
	// deadline when the retry never comes; on the package's shared pool
	// that would hold up the tests that follow. Closed in the background:
	// Close waits for those runs.
	pool := v8sandbox.NewPool(v8sandbox.Options{Workers: workers})
	t.Cleanup(func() { go pool.Close() })
	g := startHealthy(t, cfg, app.Options{Runner: pool, ExtraSpecs: specs})
	g.app.Policy.Replace(pipeline.NewPolicy(map[string]config.Backend{"counter": {Tools: config.ToolPolicy{Approve: []string{"pay"}}}}))
	srv := httptest.NewServer(g.HTTPHandler())
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp", g
}

// roundTripClient is a 2026-07-28 client over HTTP that declares
// elicitation and answers input requests itself.
func roundTripClient(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "agent"}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("input requests come in results")
		},
	})
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url},
		&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// The program of the durable tests: 3 calls, one under approval, 1 more;
// its first call's argument says whether the replica has a backend
// "onlyb" (a lookup, which is not journalled: a replay on a replica with
// another catalogue diverges).
const pausingProgram = `
const b = typeof onlyb === "undefined" ? 0 : 1;
const out = [];
for (let i = 0; i < 3; i++) out.push((await counter.bump({i, b})).n);
const t = Date.now(), r = Math.random();
out.push((await counter.pay({amount: 5})).n);
out.push((await counter.bump({i: 3})).n);
return {out, t, r, again: [Date.now() >= t, typeof r]};`

// pause starts pausingProgram through cs and returns its approval round.
func pause(t *testing.T, cs *mcp.ClientSession) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": pausingProgram}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.InputRequests) != 1 || res.InputRequests["approval-1"] == nil || !strings.HasPrefix(res.RequestState, "durable-") {
		t.Fatalf("want one approval request and a durable requestState, got %+v", res)
	}
	return res
}

// retry answers a paused run's approval through cs.
func retry(t *testing.T, cs *mcp.ClientSession, state string) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": pausingProgram},
		InputResponses: mcp.InputResponseMap{"approval-1": &mcp.ElicitResult{Action: "accept"}}, RequestState: state})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.InputRequests) > 0 {
		t.Fatalf("the retry asked again: %+v", res)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// TestDurableRunResumesOnAnotherReplica (issue 35): two stateless replicas
// share one real redis-server. A 2026-07-28 client's program makes 3
// calls through replica A and pauses for an approval; the approval's retry
// reaches replica B, which resumes the run by replay and completes it: the
// backend counted exactly 5 calls (none repeated). The same requestState
// then reaches A: refused, nothing repeated. A replay that diverges (B's
// catalogue differs) ends with REPLAY_DIVERGED and repeats nothing, and a
// journal changed in Redis is refused.
func TestDurableRunResumesOnAnotherReplica(t *testing.T) {
	srv := redistest.ForTest(t)
	counter := newCountingBackend()
	urlA, _ := durableReplica(t, srv.URL(), counter)
	urlB, _ := durableReplica(t, srv.URL(), counter)
	a, b := roundTripClient(t, urlA), roundTripClient(t, urlB)

	paused := pause(t, a)
	if n := counter.count(); n != 3 {
		t.Fatalf("paused after %d calls, want 3", n)
	}
	text, isErr := retry(t, b, paused.RequestState)
	if isErr || !strings.Contains(text, `"out": [`) || counter.count() != 5 {
		t.Fatalf("resumed through B: %d backend calls in all (want 5):\n%s", counter.count(), text)
	}
	if !strings.Contains(strings.Join(strings.Fields(text), ""), `"out":[1,2,3,4,5]`) {
		t.Errorf("B's result does not continue A's calls:\n%s", text)
	}
	if text, isErr := retry(t, a, paused.RequestState); !isErr || !strings.Contains(text, "requestState") || counter.count() != 5 {
		t.Fatalf("the same requestState through A after B resumed: %s (%d calls)", text, counter.count())
	}

	// A replica whose catalogue differs replays another first call.
	onlyB := mcp.NewServer(&mcp.Implementation{Name: "onlyb"}, nil)
	mcp.AddTool(onlyB, &mcp.Tool{Name: "noop"}, func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, any, error) {
		return textResult("ok", false), nil, nil
	})
	urlC, _ := durableReplica(t, srv.URL(), counter, backend.InMemory("onlyb", onlyB))
	c := roundTripClient(t, urlC)
	paused = pause(t, a)
	before := counter.count()
	text, isErr = retry(t, c, paused.RequestState)
	if !isErr || !strings.Contains(text, "REPLAY_DIVERGED") || !strings.Contains(text, "call #1 is counter.bump") || counter.count() != before {
		t.Fatalf("diverging replay: %d new calls (want 0):\n%s", counter.count()-before, text)
	}

	// A journal changed in Redis is refused: an entry rewritten (a
	// result), the last entry cut off, an entry removed from the middle.
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	ctx := context.Background()
	for _, tamper := range []struct {
		name string
		do   func(key string, entries []string) error
	}{
		{"a result rewritten", func(key string, entries []string) error {
			for i, e := range entries {
				if strings.Contains(e, `{"n":`) {
					return rdb.LSet(ctx, key, int64(i), strings.Replace(e, `{"n":`, `{"n":9`, 1)).Err()
				}
			}
			return fmt.Errorf("no result in %q", entries)
		}},
		{"cut short", func(key string, _ []string) error { return rdb.RPop(ctx, key).Err() }},
		{"an entry removed from the middle", func(key string, entries []string) error {
			return rdb.LRem(ctx, key, 1, entries[len(entries)/2]).Err()
		}},
	} {
		paused = pause(t, a)
		before = counter.count()
		id, _, _ := strings.Cut(strings.TrimPrefix(paused.RequestState, "durable-"), "-")
		key := resultstore.RedisKeyPrefix + "journals:j:" + id + ":e"
		entries, err := rdb.LRange(ctx, key, 0, -1).Result()
		if err != nil || len(entries) < 3 {
			t.Fatalf("journal %s in Redis: %v %.200q", key, err, entries)
		}
		if err := tamper.do(key, entries); err != nil {
			t.Fatal(err)
		}
		text, isErr = retry(t, b, paused.RequestState)
		if !isErr || !strings.Contains(text, "JOURNAL_TAMPERED") || counter.count() != before {
			t.Fatalf("journal %s: %d new calls:\n%s", tamper.name, counter.count()-before, text)
		}
	}
}

// TestPausedCopyEndsWhenAnotherReplicaResumes: a run paused on replica A
// (one V8 thread, runs of up to 10 minutes) whose retry reaches replica B
// is resumed and completed by B; A's paused copy of it, which waited for
// a retry that went elsewhere, ends once B has claimed the journal, and
// gives back A's only V8 thread: a program sent to A then runs. Before,
// the copy held that thread until its 10-minute deadline.
func TestPausedCopyEndsWhenAnotherReplicaResumes(t *testing.T) {
	srv := redistest.ForTest(t)
	counter := newCountingBackend()
	urlA, _ := durableReplicaOf(t, srv.URL(), counter, 1, 10*time.Minute)
	urlB, _ := durableReplica(t, srv.URL(), counter)
	a, b := roundTripClient(t, urlA), roundTripClient(t, urlB)

	paused := pause(t, a)
	if text, isErr := retry(t, b, paused.RequestState); isErr || counter.count() != 5 {
		t.Fatalf("resumed through B: %d backend calls (want 5):\n%s", counter.count(), text)
	}
	// Not a fast-path form: it needs A's V8 thread.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{
		"code": "let s = 0;\nfor (const x of [1, 2, 3]) s += x;\nreturn s"}})
	if err != nil {
		t.Fatalf("a program on A after B resumed A's paused run: %v (the paused copy still holds A's V8 thread)", err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; res.IsError || text != "6" {
		t.Fatalf("a program on A: %s", text)
	}
	if counter.count() != 5 {
		t.Errorf("backend calls: %d, want 5 (A's copy made none)", counter.count())
	}
}
