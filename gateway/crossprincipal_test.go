package gateway

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/backend"
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
