package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/resultstore/redistest"
	"github.com/isogate/isogate/internal/surface"
	"github.com/isogate/isogate/internal/testutil"
	"github.com/isogate/isogate/v8sandbox"
)

// Attacks of one principal on another's data and traffic in a shared
// gateway (static tokens over real HTTP). What each attack must meet is
// in docs/security.md ("Who reads stored results") and docs/auth.md
// ("Principals").

// redteamTokens are the principals of these tests.
var redteamTokens = map[string]config.StaticToken{
	"alice": {Token: "alice-redteam-token-1"},
	"bob":   {Token: "bob-redteam-token-22"},
}

// redteamGateway is newHTTPGateway with alice and bob as token
// principals.
func redteamGateway(t *testing.T, mutate func(*config.Config), extra ...backend.Spec) *httpGateway {
	t.Helper()
	return newHTTPGateway(t, func(c *config.Config) {
		c.Server.Auth.Mode = config.AuthToken
		c.Server.Auth.Tokens = redteamTokens
		if mutate != nil {
			mutate(c)
		}
	}, extra...)
}

// connectAsWith opens a go-sdk client session of name over HTTP, on
// protocol version (the latest when "").
func (h *httpGateway) connectAsWith(t *testing.T, name, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	var sopts *mcp.ClientSessionOptions
	if version != "" {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: name}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.url,
		HTTPClient: &http.Client{Transport: bearer{redteamTokens[name].Token}}}, sopts)
	if err != nil {
		t.Fatalf("%s connects: %v", name, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// docsBackend is a backend with one subscribable resource; it counts the
// subscribe and unsubscribe requests it receives.
type docsBackend struct {
	server *mcp.Server
	mu     sync.Mutex
	subs   int
	unsubs int
}

const docsURI = "docs://handbook"

func newDocsBackend() *docsBackend {
	b := &docsBackend{}
	b.server = mcp.NewServer(&mcp.Implementation{Name: "docs"}, &mcp.ServerOptions{
		SubscribeHandler: func(context.Context, *mcp.SubscribeRequest) error {
			b.mu.Lock()
			b.subs++
			b.mu.Unlock()
			return nil
		},
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error {
			b.mu.Lock()
			b.unsubs++
			b.mu.Unlock()
			return nil
		},
	})
	b.server.AddResource(&mcp.Resource{URI: docsURI, Name: "handbook", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "v1"}}}, nil
		})
	mcp.AddTool(b.server, &mcp.Tool{Name: "noop", Description: "Does nothing."},
		func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
	return b
}

func (b *docsBackend) counts() (subs, unsubs int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.subs, b.unsubs
}

// TestUnsubscribeCannotEndAnotherPrincipalsSubscription: alice subscribes
// to a backend's resource; bob, who never subscribed to it, unsubscribes
// from it (twice, and subscribes and unsubscribes once more). The gateway
// holds one subscription on the backend for all its clients: bob's
// requests must not end it, so the backend is never asked to unsubscribe
// and alice still receives the resource's update.
func TestUnsubscribeCannotEndAnotherPrincipalsSubscription(t *testing.T) {
	docs := newDocsBackend()
	// 2025-11-25 on both sides: resources/subscribe and unsubscribe are
	// requests answered once done (on 2026-07-28 a client unsubscribes
	// by ending its subscriptions/listen stream, in the background).
	h := redteamGateway(t, nil, legacy(backend.InMemory("docs", docs.server)))
	updated := make(chan string, 4)
	alice := h.connectAsWith(t, "alice", "2025-11-25", &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			updated <- req.Params.URI
		}})
	bob := h.connectAsWith(t, "bob", "2025-11-25", nil)
	ctx := t.Context()
	if err := alice.Subscribe(ctx, &mcp.SubscribeParams{URI: docsURI}); err != nil {
		t.Fatalf("alice subscribes: %v", err)
	}
	for range 2 {
		if err := bob.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: docsURI}); err != nil {
			t.Fatalf("bob unsubscribes: %v", err)
		}
	}
	// Subscribing twice is one subscription: one unsubscribe ends bob's,
	// not alice's.
	for range 2 {
		if err := bob.Subscribe(ctx, &mcp.SubscribeParams{URI: docsURI}); err != nil {
			t.Fatalf("bob subscribes: %v", err)
		}
	}
	if err := bob.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: docsURI}); err != nil {
		t.Fatalf("bob unsubscribes: %v", err)
	}
	if subs, unsubs := docs.counts(); subs != 1 || unsubs != 0 {
		t.Fatalf("the backend got %d subscribe and %d unsubscribe requests; want 1 and 0 (alice is still subscribed)", subs, unsubs)
	}
	if err := docs.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: docsURI}); err != nil {
		t.Fatal(err)
	}
	select {
	case uri := <-updated:
		if uri != docsURI {
			t.Fatalf("alice was told %s was updated", uri)
		}
	case <-time.After(20 * time.Second): // a failure bound, not a synchronisation
		t.Fatal("alice never received the update she subscribed to")
	}
	// Alice's own unsubscribe, the last, ends it on the backend.
	if err := alice.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: docsURI}); err != nil {
		t.Fatal(err)
	}
	if _, unsubs := docs.counts(); unsubs != 1 {
		t.Fatalf("after alice's unsubscribe the backend got %d unsubscribe requests, want 1", unsubs)
	}
	// A subscriber's session that closes ends its subscription too.
	if err := alice.Subscribe(ctx, &mcp.SubscribeParams{URI: docsURI}); err != nil {
		t.Fatal(err)
	}
	alice.Close()
	testutil.Eventually(t, 20*time.Second, func() bool {
		_, unsubs := docs.counts()
		return unsubs == 2
	}, "alice's session closed, her subscription still held on the backend")
}

// TestCheckerProcessDetailsOnlyForAdmins: with sandbox.typecheck on in
// process isolation, alice (in server.auth.admins) sees the checker
// worker's PID and the code cache file's path in isogate://stats and, with
// server.metrics_auth, in /readyz; bob, another principal, sees the mode,
// the state and the restarts only, in both; a request without a token gets
// {"ready"} alone.
func TestCheckerProcessDetailsOnlyForAdmins(t *testing.T) {
	h := redteamGateway(t, func(c *config.Config) {
		c.Sandbox.Isolation = config.IsolationProcess
		c.Sandbox.MaxConcurrent = 1
		c.Sandbox.Typecheck = "warn"
		c.Server.MetricsAuth = true
		c.Server.Auth.Admins = []string{"alice"}
	})
	if err := h.g.app.Typecheck.Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(h.url, "/mcp")
	readyz := func(token string) string {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/readyz", nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	stats := func(name string) string {
		t.Helper()
		res, err := h.connectAsWith(t, name, "", nil).ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "isogate://stats"})
		if err != nil {
			t.Fatal(err)
		}
		return res.Contents[0].Text
	}
	// Detail: the worker's PID and the cache file; brief: mode and state.
	detailed := func(s string) bool { return strings.Contains(s, `"pid"`) && strings.Contains(s, ".v8cache") }
	brief := func(s string) bool {
		return strings.Contains(s, `"mode"`) && strings.Contains(s, `"state"`) &&
			!strings.Contains(s, `"pid"`) && !strings.Contains(s, ".v8cache") && !strings.Contains(s, `"path"`) && !strings.Contains(s, `"rss_bytes"`)
	}
	for what, s := range map[string]string{"alice's isogate://stats": stats("alice"), "/readyz with alice's token": readyz(redteamTokens["alice"].Token)} {
		if !detailed(s) {
			t.Errorf("%s: %s\nwant the checker worker's PID and the code cache path (alice is an admin)", what, s)
		}
	}
	for what, s := range map[string]string{"bob's isogate://stats": stats("bob"), "/readyz with bob's token": readyz(redteamTokens["bob"].Token)} {
		if !brief(s) {
			t.Errorf("%s: %s\nwant the checker's mode and state, no PID, RSS or path (bob is not an admin)", what, s)
		}
	}
	if s := strings.TrimSpace(readyz("")); s != `{"ready":true}` {
		t.Errorf("/readyz without a token: %s, want {\"ready\":true}", s)
	}
}

// stored is what one program run left for its session: its run record's
// id and the URI of its cut result.
type stored struct{ run, result string }

// runStoring runs a program whose result is cut (so stored) through cs.
func runStoring(cs *mcp.ClientSession, who string, i int) (stored, error) {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{
		"code":            fmt.Sprintf(`const r = await local.echo({who: %q, i: %d, pad: "x".repeat(2000)}); return {secret: %q, r}`, who, i, who+"-secret"),
		"max_output_size": 300}})
	if err != nil {
		return stored{}, err
	}
	text := res.Content[0].(*mcp.TextContent).Text
	run, _ := res.Meta["isogate/run"].(string)
	uri := resultURIRE.FindString(text)
	if res.IsError || run == "" || uri == "" {
		return stored{}, fmt.Errorf("%s's program %d: run %q, no stored result? %s", who, i, run, text)
	}
	return stored{run: run, result: uri}, nil
}

// otherID is id with its last hex digit changed: an id of the same shape
// that names nothing.
func otherID(id string) string {
	last := id[len(id)-1]
	next := byte('0')
	if last == '0' {
		next = '1'
	}
	return id[:len(id)-1] + string(next)
}

// readAttempts reads what s names through every way a client has:
// resources/read of the run record, of the result and of a part of it,
// and read_result (whole and by range). Each answer is the error text (or
// the content, when the read succeeded), with the ids replaced by RUN and
// RESULT so that answers about different ids compare.
func readAttempts(ctx context.Context, cs *mcp.ClientSession, s stored) (map[string]string, error) {
	out := map[string]string{}
	runID := strings.TrimPrefix(s.run, surface.RunURIPrefix)
	resID := strings.TrimPrefix(s.result, "isogate://result/")
	scrub := func(text string) string {
		return strings.ReplaceAll(strings.ReplaceAll(text, resID, "RESULT"), runID, "RUN")
	}
	for what, uri := range map[string]string{
		"runs":        surface.RunURIPrefix + runID,
		"result":      s.result,
		"result-part": s.result + "/r",
	} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		switch {
		case err != nil:
			out[what] = "error: " + scrub(err.Error())
		case len(res.Contents) == 0:
			out[what] = "empty"
		default:
			out[what] = "read: " + scrub(res.Contents[0].Text)
		}
	}
	for what, args := range map[string]map[string]any{
		"read_result":       {"uri": s.result},
		"read_result-range": {"uri": s.result, "offset": 10, "limit": 20},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_result", Arguments: args})
		if err != nil {
			return nil, err
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError {
			out[what] = "error: " + scrub(text)
		} else {
			out[what] = "read: " + scrub(text)
		}
	}
	return out, nil
}

// TestPrincipalsCannotReadEachOthersRunsAndResults: alice and bob run
// programs at the same time, each leaving run records and cut results.
// Then, while both keep running programs, each tries to read every one of
// the other's records and results by every way in (resources/read of the
// run, the result and a part of it; read_result whole and by range): each
// answer is exactly the answer for an id of the same shape that names
// nothing, so an attempt tells neither the content nor that the id exists.
// Each still reads its own afterwards, and a second session of alice's
// (a reconnect) reads her first session's: results are the principal's.
func TestPrincipalsCannotReadEachOthersRunsAndResults(t *testing.T) {
	h := redteamGateway(t, nil)
	ctx := t.Context()
	sessions := map[string]*mcp.ClientSession{"alice": h.connectAsWith(t, "alice", "", nil), "bob": h.connectAsWith(t, "bob", "", nil)}
	const runs = 3
	var mu sync.Mutex
	kept := map[string][]stored{}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	produce := func(who string, from int) {
		defer wg.Done()
		for i := from; i < from+runs; i++ {
			s, err := runStoring(sessions[who], who, i)
			if err != nil {
				errs <- err
				return
			}
			mu.Lock()
			kept[who] = append(kept[who], s)
			mu.Unlock()
		}
	}
	wg.Add(2)
	go produce("alice", 0)
	go produce("bob", 0)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}

	// Attacks, with more programs of both in flight.
	mu.Lock()
	targets := map[string][]stored{"alice": append([]stored(nil), kept["bob"]...), "bob": append([]stored(nil), kept["alice"]...)}
	mu.Unlock()
	type finding struct{ attacker, what, got, want string }
	findings := make(chan finding, 64)
	wg.Add(4)
	go produce("alice", runs)
	go produce("bob", runs)
	for attacker, victims := range targets {
		go func() {
			defer wg.Done()
			for _, s := range victims {
				got, err := readAttempts(ctx, sessions[attacker], s)
				if err != nil {
					errs <- err
					return
				}
				want, err := readAttempts(ctx, sessions[attacker], stored{run: otherID(s.run), result: otherID(s.result)})
				if err != nil {
					errs <- err
					return
				}
				for what := range got {
					if got[what] != want[what] || !strings.HasPrefix(got[what], "error: ") {
						findings <- finding{attacker, what, got[what], want[what]}
					}
				}
			}
		}()
	}
	wg.Wait()
	close(findings)
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	for f := range findings {
		t.Errorf("%s reading another principal's %s got %q, want what an id that names nothing gets: %q", f.attacker, f.what, f.got, f.want)
	}

	// Alice's second session reads what her first one stored.
	second := h.connectAsWith(t, "alice", "", nil)
	for _, s := range kept["alice"][:1] {
		got, err := readAttempts(ctx, second, s)
		if err != nil {
			t.Fatal(err)
		}
		for what, answer := range got {
			if !strings.HasPrefix(answer, "read: ") || (what != "read_result-range" && !strings.Contains(answer, "alice")) {
				t.Errorf("alice's second session reading her first session's %s: %.200s", what, answer)
			}
		}
	}
	// The owners still read theirs.
	for who, ss := range kept {
		for _, s := range ss {
			got, err := readAttempts(ctx, sessions[who], s)
			if err != nil {
				t.Fatal(err)
			}
			for what, answer := range got {
				if !strings.HasPrefix(answer, "read: ") || (what != "read_result-range" && !strings.Contains(answer, who)) {
					t.Errorf("%s reading her own %s: %.200s", who, what, answer)
				}
			}
		}
	}
}

// redteamReplica is durableReplica (a stateless replica on the shared
// Redis, counter.pay under approval) with alice and bob as token
// principals; it returns the replica's /mcp URL.
func redteamReplica(t *testing.T, redisURL string, counter *countingBackend) string {
	t.Helper()
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Server.Stateless = true
	cfg.Server.Auth.Mode = config.AuthToken
	cfg.Server.Auth.Tokens = redteamTokens
	cfg.Store.RedisURL = redisURL
	cfg.Store.HMACKey = "redteam-test-hmac-key-0123456789"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 2})
	t.Cleanup(func() { go pool.Close() }) // see durableReplicaOf
	g := startHealthy(t, cfg, app.Options{Runner: pool, ExtraSpecs: []backend.Spec{backend.InMemory("counter", counter.server)}})
	g.app.Policy.Replace(pipeline.NewPolicy(map[string]config.Backend{"counter": {Tools: config.ToolPolicy{Approve: []string{"pay"}}}}))
	srv := httptest.NewServer(g.HTTPHandler())
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// roundTripClientAs is roundTripClient with name's token.
func roundTripClientAs(t *testing.T, url, name string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: name}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("input requests come in results")
		},
	})
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearer{redteamTokens[name].Token}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// retryAnswer is retry without its checks: the retry's text and whether
// it is an error, with what it asked.
func retryAnswer(cs *mcp.ClientSession, state string) (string, error) {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": pausingProgram},
		InputResponses: mcp.InputResponseMap{"approval-1": &mcp.ElicitResult{Action: "accept"}}, RequestState: state})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("isError=%v asked=%d %s", res.IsError, len(res.InputRequests), res.Content[0].(*mcp.TextContent).Text), nil
}

// rpcAnswer is one JSON-RPC answer: its result or its error.
type rpcAnswer struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rawCall posts one JSON-RPC request of protocol 2025-11-25 (no session)
// with name's token and returns its answer, from a JSON or an SSE body.
func rawCall(ctx context.Context, url, name, method string, params any) (rpcAnswer, error) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(string(body)))
	if err != nil {
		return rpcAnswer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Authorization", "Bearer "+redteamTokens[name].Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return rpcAnswer{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return rpcAnswer{}, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimPrefix(line, "data: ")
		var a rpcAnswer
		if json.Unmarshal([]byte(line), &a) == nil && (a.Result != nil || a.Error != nil) {
			return a, nil
		}
	}
	return rpcAnswer{}, fmt.Errorf("%s: no JSON-RPC answer (HTTP %d): %s", method, resp.StatusCode, data)
}

// TestReplicasKeepPausedRunsAndTasksToTheirPrincipal: two stateless
// replicas on one real redis-server, alice and bob token principals.
// Alice's program pauses for an approval on replica A; bob, with her
// requestState (and an "accept"), retries through A (where her run is
// parked) and through B (which would resume it from the journal in
// Redis): each answer is the answer for a requestState that names nothing,
// and nothing is called. Alice then resumes it through B. Alice's task
// (a program running on B) is asked for by bob with tasks/get,
// tasks/result, tasks/cancel and tasks/list through both replicas, all at
// once, while it runs: each answer is as for an unknown task, tasks/list
// never shows it, and it keeps running until alice cancels it.
func TestReplicasKeepPausedRunsAndTasksToTheirPrincipal(t *testing.T) {
	srv := redistest.ForTest(t)
	counter := newCountingBackend()
	urlA, urlB := redteamReplica(t, srv.URL(), counter), redteamReplica(t, srv.URL(), counter)
	aliceA := roundTripClientAs(t, urlA, "alice")
	bobs := []*mcp.ClientSession{roundTripClientAs(t, urlA, "bob"), roundTripClientAs(t, urlB, "bob")}

	paused := pause(t, aliceA)
	state := paused.RequestState
	for i, bob := range bobs {
		got, err := retryAnswer(bob, state)
		if err != nil {
			t.Fatal(err)
		}
		id, _, _ := strings.Cut(strings.TrimPrefix(state, "durable-"), "-")
		unknown, err := retryAnswer(bob, otherID(state))
		if err != nil {
			t.Fatal(err)
		}
		if got != unknown || !strings.HasPrefix(got, "isError=true asked=0") {
			t.Errorf("bob's retry of alice's paused run through replica %c: %q; want what a requestState naming nothing gets: %q", 'A'+i, got, unknown)
		}
		if strings.Contains(got, "secret") || (!strings.Contains(unknown, id) && strings.Contains(got, id)) {
			t.Errorf("bob's retry reveals more than an unknown state's: %q", got)
		}
	}
	if n := counter.count(); n != 3 {
		t.Fatalf("after bob's retries the backend counted %d calls, want 3 (alice's, before her pause)", n)
	}
	text, isErr := retry(t, roundTripClientAs(t, urlB, "alice"), state)
	if isErr || counter.count() != 5 || !strings.Contains(strings.Join(strings.Fields(text), ""), `"out":[1,2,3,4,5]`) {
		t.Fatalf("alice resuming through B: %d calls (want 5): %s", counter.count(), text)
	}

	// Tasks: alice's runs on B until she cancels it.
	ctx := t.Context()
	created, err := rawCall(ctx, urlB, "alice", "tools/call", map[string]any{"name": "call_tool_chain",
		"arguments": map[string]any{"code": "for (;;) {}"}, "task": map[string]any{"ttl": 120000}})
	if err != nil || created.Error != nil {
		t.Fatalf("alice's task: %v %+v", err, created.Error)
	}
	var task struct {
		Task struct {
			TaskID string `json:"taskId"`
			Status string `json:"status"`
		} `json:"task"`
	}
	if err := json.Unmarshal(created.Result, &task); err != nil || task.Task.TaskID == "" {
		t.Fatalf("CreateTaskResult: %s", created.Result)
	}
	id := task.Task.TaskID
	scrub := func(a rpcAnswer, id string) string {
		b, _ := json.Marshal(a)
		return strings.ReplaceAll(string(b), id, "ID")
	}
	type attempt struct{ url, method string }
	var attempts []attempt
	for _, url := range []string{urlA, urlB} {
		for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
			attempts = append(attempts, attempt{url, m})
		}
	}
	var wg sync.WaitGroup
	failures := make(chan string, 2*len(attempts)+4)
	for _, a := range attempts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := rawCall(ctx, a.url, "bob", a.method, map[string]any{"taskId": id})
			if err != nil {
				failures <- err.Error()
				return
			}
			unknown, err := rawCall(ctx, a.url, "bob", a.method, map[string]any{"taskId": otherID(id)})
			if err != nil {
				failures <- err.Error()
				return
			}
			if got.Error == nil || scrub(got, id) != scrub(unknown, otherID(id)) {
				failures <- fmt.Sprintf("bob's %s of alice's task through %s: %s; want as for an unknown task: %s", a.method, a.url, scrub(got, id), scrub(unknown, otherID(id)))
			}
		}()
	}
	for _, url := range []string{urlA, urlB} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			list, err := rawCall(ctx, url, "bob", "tasks/list", map[string]any{})
			if err != nil {
				failures <- err.Error()
				return
			}
			if list.Error != nil || strings.Contains(string(list.Result), id) {
				failures <- fmt.Sprintf("bob's tasks/list through %s: %s %+v", url, list.Result, list.Error)
			}
		}()
	}
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Error(f)
	}
	got, err := rawCall(ctx, urlA, "alice", "tasks/get", map[string]any{"taskId": id})
	if err != nil || got.Error != nil || !strings.Contains(string(got.Result), `"working"`) {
		t.Fatalf("alice's task after bob's attempts: %v %s %+v; want still working", err, got.Result, got.Error)
	}
	if got, err := rawCall(ctx, urlA, "alice", "tasks/cancel", map[string]any{"taskId": id}); err != nil || got.Error != nil {
		t.Fatalf("alice cancels her task: %v %+v", err, got.Error)
	}
}

// TestConsoleRefusesAnotherPrincipal: the console is on, alice is its
// admin. While alice's program is in flight (on local.block), bob, a
// principal of the same gateway, asks for every console page, its events
// and its three actions (cancel alice's run by its id, answer an
// approval, replay a record) with his own token, and again with his token
// beside alice's signed-in session cookie: every answer is 403 and no
// action ran (an action that ran answers 303). Alice cancels her run with
// the same form: 303, and her program ends.
func TestConsoleRefusesAnotherPrincipal(t *testing.T) {
	h := redteamGateway(t, func(c *config.Config) {
		c.Server.Console.Enabled = true
		c.Server.Console.Admins = []string{"alice"}
	})
	base := strings.TrimSuffix(h.url, "/mcp")
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	send := func(method, path string, form url.Values, header http.Header) (int, string) {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, err := http.NewRequestWithContext(t.Context(), method, base+path, body)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			req.Header[k] = v
		}
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		stream := strings.HasPrefix(path, "/console/events")
		if stream { // served, a stream may send nothing for long: a failure bound
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			req = req.WithContext(ctx)
		}
		resp, err := noRedirect.Do(req)
		if stream && errors.Is(err, context.DeadlineExceeded) {
			return http.StatusOK, "(an event stream)"
		}
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK || stream {
			return resp.StatusCode, ""
		}
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	asAlice := http.Header{"Authorization": {"Bearer " + redteamTokens["alice"].Token}}
	asBob := http.Header{"Authorization": {"Bearer " + redteamTokens["bob"].Token}}

	// Alice's program waits on local.block until it is cancelled.
	alice := h.connectAsWith(t, "alice", "", nil)
	ended := make(chan string, 1)
	go func() {
		res, err := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain",
			Arguments: map[string]any{"code": `return await local.block({})`}})
		if err != nil {
			ended <- err.Error()
			return
		}
		ended <- fmt.Sprintf("%v %s", res.Meta["isogate/code"], res.Content[0].(*mcp.TextContent).Text)
	}()
	<-h.started
	_, page := send("GET", "/console/runs", nil, asAlice)
	m := regexp.MustCompile(`data-run="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("alice's /console/runs lists no live run:\n%s", page)
	}
	run := m[1]

	// Alice's signed-in session: its cookie.
	loginReq, _ := http.NewRequestWithContext(t.Context(), "GET", base+"/console/login", nil)
	resp, err := noRedirect.Do(loginReq)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var loginCk *http.Cookie
	for _, ck := range resp.Cookies() {
		loginCk = ck
	}
	if loginCk == nil {
		t.Fatal("the sign-in page set no cookie")
	}
	resp, err = noRedirect.Do(func() *http.Request {
		r, _ := http.NewRequestWithContext(t.Context(), "POST", base+"/console/login",
			strings.NewReader(url.Values{"csrf": {loginCk.Value}, "token": {redteamTokens["alice"].Token}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.AddCookie(loginCk)
		return r
	}())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var session *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Value != "" && ck.Name != loginCk.Name {
			session = ck
		}
	}
	if resp.StatusCode != http.StatusSeeOther || session == nil {
		t.Fatalf("alice's sign-in: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	if code, _ := send("GET", "/console/overview", nil, http.Header{"Cookie": {session.String()}}); code != http.StatusOK {
		t.Fatalf("alice's session cookie: %d", code)
	}

	gets := []string{"/console", "/console/", "/console/overview", "/console/tools", "/console/runs", "/console/approvals",
		"/console/audit", "/console/metrics", "/console/record?id=" + run, "/console/events?page=runs"}
	posts := map[string]url.Values{
		"/console/runs/cancel":      {"id": {run}},
		"/console/approvals/answer": {"id": {"1"}, "decision": {"approve"}},
		"/console/runs/replay":      {"id": {run}},
		"/console/logout":           {},
	}
	for _, header := range []http.Header{asBob, {"Authorization": asBob["Authorization"], "Cookie": {session.String()}}} {
		for _, path := range gets {
			if code, body := send("GET", path, nil, header); code != http.StatusForbidden {
				t.Errorf("bob's GET %s (cookie %v): %d, want 403\n%.300s", path, header.Get("Cookie") != "", code, body)
			}
		}
		for path, form := range posts {
			if code, _ := send("POST", path, form, header); code != http.StatusForbidden {
				t.Errorf("bob's POST %s (cookie %v): %d, want 403", path, header.Get("Cookie") != "", code)
			}
		}
	}
	select {
	case text := <-ended:
		t.Fatalf("alice's program ended during bob's attempts: %s", text)
	default:
	}
	if code, _ := send("POST", "/console/runs/cancel", url.Values{"id": {run}}, asAlice); code != http.StatusSeeOther {
		t.Fatalf("alice cancelling her run on the console: %d, want 303", code)
	}
	select {
	case text := <-ended:
		// The agent is told an operator cancelled it, and who (issue 43,
		// 3: it read "CANCELLED: execution cancelled by the caller").
		if !strings.HasPrefix(text, "CANCELLED_BY_OPERATOR CANCELLED_BY_OPERATOR: the run was cancelled by the operator \"alice\" from the console") {
			t.Errorf("alice's program ended with %q, want CANCELLED_BY_OPERATOR naming alice", text)
		}
	case <-time.After(20 * time.Second): // a failure bound, not a synchronisation
		t.Fatal("alice's cancel did not end her program")
	}
}

// TestPassthroughApprovalStaysWithItsPrincipal: local.echo needs a
// person's yes (stateless mode). Alice's passthrough call (protocol
// 2026-07-28) comes back
// with the question and a requestState; bob sends the same call with her
// requestState and an "accept" while her approval waits: he is asked
// again exactly as with a requestState naming nothing, and echo is not
// called for him. Alice's own retry then runs her call.
func TestPassthroughApprovalStaysWithItsPrincipal(t *testing.T) {
	h := redteamGateway(t, func(c *config.Config) {
		c.Server.Expose = config.ExposeBoth
		c.Server.Stateless = true
	})
	h.g.app.Policy.Replace(pipeline.NewPolicy(map[string]config.Backend{"local": {Tools: config.ToolPolicy{Approve: []string{"echo"}}}}))
	alice := roundTripClientAs(t, h.url, "alice")
	bob := roundTripClientAs(t, h.url, "bob")
	call := func(cs *mcp.ClientSession, state string, answers mcp.InputResponseMap) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"pay": "alice-approved-42"},
			InputResponses: answers, RequestState: state})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	asked := call(alice, "", nil)
	if len(asked.InputRequests) != 1 || asked.RequestState == "" {
		t.Fatalf("alice's call to an approve tool: %+v, want one input request and a requestState", asked)
	}
	accept := mcp.InputResponseMap{}
	for key := range asked.InputRequests {
		accept[key] = &mcp.ElicitResult{Action: "accept"}
	}
	describe := func(res *mcp.CallToolResult) string {
		var text string
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				text = tc.Text
			}
		}
		keys := make([]string, 0, len(res.InputRequests))
		for k := range res.InputRequests {
			keys = append(keys, k)
		}
		return fmt.Sprintf("isError=%v inputRequests=%v stateSet=%v text=%q", res.IsError, keys, res.RequestState != "", text)
	}
	got := describe(call(bob, asked.RequestState, accept))
	unknown := describe(call(bob, otherID(asked.RequestState), accept))
	if got != unknown || strings.Contains(got, "alice-approved-42") {
		t.Errorf("bob with alice's requestState: %s\nwant as with a requestState naming nothing (echo not called): %s", got, unknown)
	}
	done := call(alice, asked.RequestState, accept)
	if done.IsError || len(done.InputRequests) != 0 || !strings.Contains(describe(done), "alice-approved-42") {
		t.Fatalf("alice's retry: %s, want her call run", describe(done))
	}
}

// TestSessionOfAnotherPrincipalIsRefused: bob, with his own token, sends
// requests under alice's session id (a leaked Mcp-Session-Id): a POST
// reading her stored result, a tasks/list (which the gateway answers
// itself), the GET stream that would carry her
// session's server messages, and a DELETE ending her session. Each is
// refused, exactly as for a session id that names nothing, and alice's
// session goes on: she still reads her result.
func TestSessionOfAnotherPrincipalIsRefused(t *testing.T) {
	h := redteamGateway(t, nil)
	alice := h.connectAsWith(t, "alice", "2025-11-25", nil)
	s, err := runStoring(alice, "alice", 0)
	if err != nil {
		t.Fatal(err)
	}
	sid := alice.ID()
	if sid == "" {
		t.Fatal("alice's session has no id")
	}
	read := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_result","arguments":{"uri":%q}}}`, s.result)
	list := `{"jsonrpc":"2.0","id":8,"method":"tasks/list","params":{}}`
	attempt := func(method, session string) string {
		t.Helper()
		var body io.Reader
		switch method {
		case http.MethodPost:
			body = strings.NewReader(read)
		case "POST tasks/list": // answered by the gateway itself, not the go-sdk
			method, body = http.MethodPost, strings.NewReader(list)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a served GET stream never ends: a failure bound
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, method, h.url, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Authorization", "Bearer "+redteamTokens["bob"].Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "error: " + err.Error()
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusOK && method == http.MethodGet {
			return "200 (a stream)"
		}
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, strings.ReplaceAll(strings.TrimSpace(string(b)), session, "SESSION"))
	}
	for _, method := range []string{http.MethodPost, "POST tasks/list", http.MethodGet, http.MethodDelete} {
		got, unknown := attempt(method, sid), attempt(method, otherID(sid))
		if got != unknown || strings.HasPrefix(got, "200") || strings.Contains(got, "alice-secret") {
			t.Errorf("bob's %s under alice's session: %q; want what a session id naming nothing gets: %q", method, got, unknown)
		}
	}
	res, err := alice.CallTool(t.Context(), &mcp.CallToolParams{Name: "read_result", Arguments: map[string]any{"uri": s.result}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "alice-secret") {
		t.Fatalf("alice after bob's attempts: %v %+v", err, res)
	}
}

// stderrBackendEnv, when set to "1", makes the test binary serve a stdio
// backend whose tool note writes its arguments to stderr (as many MCP
// servers log their requests), instead of running tests.
const stderrBackendEnv = "REDTEAM_STDERR_BACKEND"

// runStderrBackendIfRequested serves that backend and exits when
// stderrBackendEnv asks for it (called from TestMain).
func runStderrBackendIfRequested() {
	if os.Getenv(stderrBackendEnv) != "1" {
		return
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "logger", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "note", Description: "Notes its arguments (and logs them to stderr)."},
		func(_ context.Context, _ *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, any, error) {
			b, _ := json.Marshal(in)
			fmt.Fprintf(os.Stderr, "note: %s\n", b)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "noted"}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "stderr backend:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestBackendStderrOnlyForAdmins: a stdio backend logs the arguments of
// alice's call to its stderr. isogate://backend/{name} shows alice (an
// admin) those lines and the backend's PID; bob, another principal, reads
// the same resource without them.
func TestBackendStderrOnlyForAdmins(t *testing.T) {
	h := redteamGateway(t, func(c *config.Config) {
		c.Server.Auth.Admins = []string{"alice"}
		c.Backends = map[string]config.Backend{"logger": {Name: "logger", Transport: config.TransportStdio,
			Command: os.Args[0], Env: map[string]string{stderrBackendEnv: "1"}, Timeout: time.Minute}}
	})
	alice, bob := h.connectAsWith(t, "alice", "", nil), h.connectAsWith(t, "bob", "", nil)
	const secret = "alice-stderr-secret-7f3a"
	chainOK(t, alice, `return await logger.note({card: "`+secret+`"})`)
	read := func(cs *mcp.ClientSession) string {
		t.Helper()
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "isogate://backend/logger"})
		if err != nil {
			t.Fatal(err)
		}
		return res.Contents[0].Text
	}
	// The gateway reads the backend's stderr in the background.
	testutil.Eventually(t, 20*time.Second, func() bool { return strings.Contains(read(alice), secret) },
		"alice (admin) never saw the backend's stderr line")
	if s := read(alice); !strings.Contains(s, `"pid"`) {
		t.Errorf("alice (admin) reading isogate://backend/logger: no PID: %s", s)
	}
	if s := read(bob); strings.Contains(s, secret) || strings.Contains(s, `"stderr"`) || strings.Contains(s, `"pid"`) {
		t.Errorf("bob reading isogate://backend/logger sees its stderr or PID:\n%s", s)
	}
}
