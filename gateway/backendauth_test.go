package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/backendauth"
	"github.com/isogate/isogate/internal/testutil"
)

// guardedBackend is a real HTTP MCP server that requires bearer tokens of
// the IdP bound to its own URL (go-sdk auth.RequireBearerToken with
// isogate's JWKS verifier), recording every Authorization header it sees.
type guardedBackend struct {
	url string

	mu   sync.Mutex
	seen []string // raw bearer tokens, in order
}

// startGuardedBackend serves a "whoami" tool (it returns the token's sub
// and act.sub) at <server>/mcp; stateless backends bind no session to the
// first token's user (token exchange sends each principal's own).
func startGuardedBackend(t *testing.T, p *idp, stateless bool) *guardedBackend {
	t.Helper()
	b := &guardedBackend{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "guarded"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "Names the caller."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, any, error) {
			info := req.Extra.TokenInfo
			out, _ := json.Marshal(map[string]any{"sub": info.UserID, "act": info.Extra["act"]})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}}, nil, nil
		})
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	b.url = hs.URL + "/mcp"
	verifier := authn.NewOAuth(authn.OAuthOptions{Issuer: p.issuer, Audience: b.url, KeyRefreshGap: time.Millisecond})
	verify := func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		info, err := verifier.Verify(ctx, token, r)
		if err != nil {
			return nil, err
		}
		claims := jwt.MapClaims{}
		_, _, _ = jwt.NewParser().ParseUnverified(token, claims)
		info.Extra["act"] = claims["act"]
		return info, nil
	}
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: stateless})
	guarded := auth.RequireBearerToken(verify, nil)(handler)
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			b.mu.Lock()
			b.seen = append(b.seen, tok)
			b.mu.Unlock()
		}
		guarded.ServeHTTP(w, r)
	}))
	return b
}

// tokens returns the distinct bearer tokens the backend saw, in order.
func (b *guardedBackend) tokens() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, s := range b.seen {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// remoteBackend adds backend "remote" at url with auth to cfg.
func remoteBackend(url string, a config.BackendAuth) func(*config.Config) {
	return func(c *config.Config) {
		c.Backends["remote"] = config.Backend{Name: "remote", Transport: config.TransportStreamableHTTP, URL: url,
			Timeout: 30 * time.Second, MaxConcurrentCalls: 8, Sessions: config.SessionsShared, Auth: a}
	}
}

// whoami calls remote's whoami through cs and returns its answer.
func whoami(t *testing.T, cs *mcp.ClientSession) map[string]any {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "whoami"})
	if err != nil || res.IsError {
		t.Fatalf("whoami: %v %+v", err, res)
	}
	out := map[string]any{}
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBackendClientCredentials: the gateway gets its own token from the
// IdP (client credentials, discovered token endpoint, bound to the
// backend's URL), the backend accepts it, a token is renewed as it nears
// expiry, and the client's own token never reaches the backend.
func TestBackendClientCredentials(t *testing.T) {
	t.Setenv("IDP_BACKEND_TTL", "4") // renewed after 2 s (half its life)
	p := startIdP(t)
	be := startGuardedBackend(t, p, false)
	base, _ := oauthGateway(t, p, remoteBackend(be.url, config.BackendAuth{
		Type: config.BackendAuthClientCredentials, Issuer: p.issuer,
		ClientID: "gateway", ClientSecret: "gateway-secret", Scopes: []string{"backend:read"},
	}))
	clientToken := p.token(t, "alice", "mcp:tools", audience)
	cs := connectAs(t, base, clientToken)

	if got := whoami(t, cs)["sub"]; got != "gateway" {
		t.Fatalf("the backend saw sub %v, want the gateway's own client", got)
	}
	first := be.tokens()
	if len(first) == 0 {
		t.Fatal("the backend saw no token")
	}
	// Renewed before expiry: a new token arrives, and is accepted.
	testutil.Eventually(t, 20*time.Second, func() bool {
		whoami(t, cs)
		return len(be.tokens()) > len(first)
	}, "the token was never renewed: %d tokens", len(be.tokens()))
	for _, tok := range be.tokens() {
		if tok == clientToken {
			t.Fatal("the client's own token reached the backend")
		}
		claims := jwt.MapClaims{}
		_, _, _ = jwt.NewParser().ParseUnverified(tok, claims)
		if aud, _ := claims.GetAudience(); !slices.Contains(aud, be.url) {
			t.Errorf("a token for %v, not the backend %s", aud, be.url)
		}
	}
}

// TestBackendTokenExchange: each principal's calls carry a token the IdP
// issued for that principal (RFC 8693, sub = the principal, act = the
// gateway), cached per principal; the principals' own tokens never reach
// the backend. A backend with sessions binds each to its first token's
// user: every principal's client session gets a backend session of its
// own.
func TestBackendTokenExchange(t *testing.T) {
	for _, stateless := range []bool{true, false} {
		name := "sessions"
		if stateless {
			name = "stateless"
		}
		t.Run(name, func(t *testing.T) { testBackendTokenExchange(t, stateless) })
	}
}

func testBackendTokenExchange(t *testing.T, stateless bool) {
	p := startIdP(t)
	be := startGuardedBackend(t, p, stateless)
	base, _ := oauthGateway(t, p, remoteBackend(be.url, config.BackendAuth{
		Type: config.BackendAuthTokenExchange, Issuer: p.issuer,
		ClientID: "gateway", ClientSecret: "gateway-secret", Scopes: []string{"backend:read"},
	}))
	aliceToken := p.token(t, "alice", "mcp:tools", audience)
	bobToken := p.token(t, "bob", "mcp:tools", audience)
	alice, bob := connectAs(t, base, aliceToken), connectAs(t, base, bobToken)

	for range 2 {
		if got := whoami(t, alice); got["sub"] != "alice" || !strings.Contains(asJSON(got["act"]), `"gateway"`) {
			t.Fatalf("alice's call reached the backend as %v", got)
		}
		if got := whoami(t, bob); got["sub"] != "bob" {
			t.Fatalf("bob's call reached the backend as %v", got)
		}
	}
	// From a program too: the principal rides the run's calls.
	res, err := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain",
		Arguments: map[string]any{"code": `return await remote.whoami({})`}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"sub": "alice"`) {
		t.Fatalf("alice's program: %v %s", err, asJSON(res))
	}
	seen := be.tokens()
	for _, tok := range seen {
		if tok == aliceToken || tok == bobToken {
			t.Fatal("a client's own token reached the backend")
		}
	}
	// Cached per principal: the gateway's own (initialize, lists), then
	// one per principal, whatever the number of calls.
	if len(seen) != 3 {
		t.Errorf("the backend saw %d distinct tokens, want 3 (gateway, alice, bob)", len(seen))
	}
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestBackendLogin: `isogate login`'s flow (authorization code + PKCE,
// with a dynamically registered client) against the IdP, a browser that
// follows the redirects, the token file at 0600, and the gateway using
// the stored token and refreshing it.
func TestBackendLogin(t *testing.T) {
	t.Setenv("IDP_BACKEND_TTL", "4")
	p := startIdP(t)
	be := startGuardedBackend(t, p, false)
	cacheDir := t.TempDir()
	ba := config.BackendAuth{Type: config.BackendAuthAuthorizationCode, Issuer: p.issuer,
		Scopes: []string{"openid", "backend:read"}}
	a, err := backendauth.New(backendauth.Options{Backend: "remote", URL: be.url, Auth: ba, CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- a.Login(context.Background(), pw); pw.Close() }()
	sc := bufio.NewScanner(pr)
	var authURL string
	for sc.Scan() {
		if u, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), p.issuer+"/auth?"); ok {
			authURL = p.issuer + "/auth?" + u
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if authURL == "" {
		t.Fatalf("no authorization URL printed: %v", <-done)
	}
	jar, _ := cookiejar.New(nil)
	resp, err := (&http.Client{Jar: jar}).Get(authURL) // the browser
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := <-done; err != nil {
		t.Fatalf("login: %v (browser ended at %d %s)", err, resp.StatusCode, body)
	}
	fi, err := os.Stat(filepath.Join(cacheDir, "oauth", "remote.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v, want 0600", fi.Mode().Perm())
	}

	base, _ := oauthGateway(t, p, func(c *config.Config) {
		remoteBackend(be.url, ba)(c)
		c.Server.CacheDir = cacheDir
	})
	cs := connectAs(t, base, p.token(t, "alice", "mcp:tools", audience))
	if got := whoami(t, cs)["sub"]; got != "dave" {
		t.Fatalf("the backend saw sub %v, want the person who logged in", got)
	}
	first := len(be.tokens())
	testutil.Eventually(t, 20*time.Second, func() bool {
		whoami(t, cs)
		return len(be.tokens()) > first
	}, "the login's token was never refreshed")
}
