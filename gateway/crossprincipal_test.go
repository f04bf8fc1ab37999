package gateway

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/surface"
	"github.com/isogate/isogate/internal/testutil"
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
// A second session of alice's cannot read her first session's either
// (results are the session's). Each still reads its own afterwards.
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

	// Alice's second session is not the session that stored them.
	second := h.connectAsWith(t, "alice", "", nil)
	for _, s := range kept["alice"][:1] {
		got, err := readAttempts(ctx, second, s)
		if err != nil {
			t.Fatal(err)
		}
		for what, answer := range got {
			if !strings.HasPrefix(answer, "error: ") {
				t.Errorf("alice's second session read her first session's %s: %.200s", what, answer)
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
