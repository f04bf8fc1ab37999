package gateway

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/testutil"
)

// audience is the resource URL the tests' tokens are bound to.
const audience = "http://isogate.test/mcp"

// idp is a real OpenID provider (interop/idp: panva's oidc-provider) on
// loopback, signing with keys this test made, so that the test can also
// sign tokens it could not get from the provider (expired, wrong issuer).
type idp struct {
	issuer string
	key    *rsa.PrivateKey
	kid    string
}

// startIdP starts interop/idp/server.mjs with a fresh RSA key (kid k1).
func startIdP(t *testing.T) *idp {
	t.Helper()
	dir, _ := filepath.Abs("../interop/idp")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "oidc-provider")); err != nil {
		t.Skip("oidc-provider is not installed: run make deps")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	p := &idp{key: newKey(t), kid: "k1"}
	cmd := exec.Command("node", "server.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "IDP_RESOURCE="+audience, "IDP_JWKS="+privateJWKS(t, p.key, p.kid))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if s, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				lines <- s
			}
		}
	}()
	select {
	case p.issuer = <-lines:
	case <-time.After(30 * time.Second):
		t.Fatal("the OpenID provider did not start")
	}
	return p
}

func newKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func privateJWKS(t *testing.T, k *rsa.PrivateKey, kid string) string {
	t.Helper()
	b, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: k, KeyID: kid, Algorithm: "RS256", Use: "sig"}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// token gets an access token for client by the client credentials grant,
// bound to resource.
func (p *idp) token(t *testing.T, client, scope, resource string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {scope}, "resource": {resource}}
	req, _ := http.NewRequest(http.MethodPost, p.issuer+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(client, client+"-secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error_description"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.AccessToken == "" {
		t.Fatalf("token for %s: status %d, %v %s", client, resp.StatusCode, err, out.Error)
	}
	return out.AccessToken
}

// rotate makes the provider sign with a new key (kid) from now on.
func (p *idp) rotate(t *testing.T, kid string) {
	t.Helper()
	p.key, p.kid = newKey(t), kid
	resp, err := http.Post(p.issuer+"/__rotate", "application/json", strings.NewReader(privateJWKS(t, p.key, kid)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// sign makes a token with claims, signed by key under kid.
func sign(t *testing.T, key *rsa.PrivateKey, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// oauthGateway serves a gateway in oauth mode for p over loopback HTTP,
// with one in-process backend (echo, secret) and a log the test reads.
func oauthGateway(t *testing.T, p *idp, mutate func(*config.Config)) (base string, logs *testutil.Buffer) {
	t.Helper()
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Sandbox.Isolation = config.IsolationThread
	cfg.Server.Auth.Mode = config.AuthOAuth
	cfg.Server.Auth.Issuer = p.issuer
	cfg.Server.Auth.Audience = audience
	cfg.Server.Auth.Scopes = []string{"mcp:tools"}
	cfg.Server.Auth.JWKSMinRefresh = time.Millisecond
	if mutate != nil {
		mutate(cfg)
	}
	local := mcp.NewServer(&mcp.Implementation{Name: "local"}, nil)
	for _, name := range []string{"echo", "secret"} {
		mcp.AddTool(local, &mcp.Tool{Name: name, Description: "Returns its arguments."},
			func(ctx context.Context, req *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, any, error) {
				b, _ := json.Marshal(in)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
			})
	}
	logs = &testutil.Buffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	_, base = serveHealthy(t, cfg, app.Options{Runner: testPool(), ExtraSpecs: []backend.Spec{backend.InMemory("local", local)}, Logger: logger})
	return base, logs
}

// initialize posts an initialize request with token ("" for none) and
// returns the status and the WWW-Authenticate challenge.
func initialize(t *testing.T, base, token string) (int, string) {
	t.Helper()
	h := map[string]string{}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	resp, err := post(t, context.Background(), base+"/mcp", initializeBody, h)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

// connectAs opens a session with token, exposing passthrough tools.
func connectAs(t *testing.T, base, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp?expose=both",
		HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestOAuthAgainstARealIdP drives isogate as a resource server of a real
// OpenID provider: its tokens are accepted with the right audience and
// scopes, each class of bad token is refused with the right status,
// challenge and log reason, and a rotated key works without a restart.
func TestOAuthAgainstARealIdP(t *testing.T) {
	p := startIdP(t)
	base, logs := oauthGateway(t, p, nil)
	meta := base + "/.well-known/oauth-protected-resource/mcp"
	wantMeta := fmt.Sprintf("resource_metadata=%q", "http://isogate.test/.well-known/oauth-protected-resource/mcp")

	// The metadata names the issuer, at both well-known paths.
	for _, u := range []string{meta, base + "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Resource string   `json:"resource"`
			Servers  []string `json:"authorization_servers"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if m.Resource != audience || len(m.Servers) != 1 || m.Servers[0] != p.issuer {
			t.Errorf("%s: %+v", u, m)
		}
	}

	good := p.token(t, "alice", "mcp:tools mcp:admin", audience)
	if code, _ := initialize(t, base, good); code != http.StatusOK {
		t.Fatalf("alice's token: status %d, want 200", code)
	}

	// Made-up tokens over the provider's real one: its claims, re-signed
	// or re-headed.
	parts := strings.Split(good, ".")
	var claims jwt.MapClaims
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	_ = json.Unmarshal(payload, &claims)
	with := func(k string, v any) jwt.MapClaims {
		c := jwt.MapClaims{}
		for kk, vv := range claims {
			c[kk] = vv
		}
		c[k] = v
		return c
	}
	pubPEM := publicPEM(t, &p.key.PublicKey)
	hmacTok, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(pubPEM)
	noneTok := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT","kid":"k1"}`)) + "." + parts[1] + "."
	flipped := parts[0] + "." + parts[1] + "." + flip(parts[2])
	now := time.Now()

	for _, c := range []struct {
		name, token string
		status      int
		reason      string
	}{
		{"no token", "", 401, "missing_token"},
		{"wrong audience", p.token(t, "alice", "mcp:tools", "http://other.test/mcp"), 401, "wrong_audience"},
		{"missing scope", p.token(t, "carol", "mcp:read", audience), 403, "insufficient_scope"},
		{"bad signature", flipped, 401, "bad_signature"},
		{"alg none", noneTok, 401, "alg_not_allowed"},
		{"HMAC keyed with the public key", hmacTok, 401, "alg_not_allowed"},
		{"unknown kid", sign(t, newKey(t), "nobody", claims), 401, "unknown_kid"},
		{"wrong issuer", sign(t, p.key, p.kid, with("iss", "http://evil.test")), 401, "wrong_issuer"},
		{"expired", sign(t, p.key, p.kid, with("exp", now.Add(-time.Hour).Unix())), 401, "expired"},
		{"not yet valid", sign(t, p.key, p.kid, with("nbf", now.Add(time.Hour).Unix())), 401, "not_yet_valid"},
		{"not a JWT", "opaque-token-value", 401, "malformed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, challenge := initialize(t, base, c.token)
			if code != c.status {
				t.Errorf("status %d, want %d", code, c.status)
			}
			if !strings.HasPrefix(challenge, "Bearer ") || !strings.Contains(challenge, wantMeta) || !strings.Contains(challenge, `scope="mcp:tools"`) {
				t.Errorf("challenge %q lacks resource_metadata or scope", challenge)
			}
			wantErr := map[int]string{401: `error="invalid_token"`, 403: `error="insufficient_scope"`}[c.status]
			if c.token == "" {
				if strings.Contains(challenge, "error=") {
					t.Errorf("challenge %q: no error without a token (RFC 6750 §3.1)", challenge)
				}
			} else if !strings.Contains(challenge, wantErr) {
				t.Errorf("challenge %q, want %s", challenge, wantErr)
			}
			testutil.Eventually(t, 5*time.Second, func() bool {
				return strings.Contains(logs.String(), `"reason":"`+c.reason+`"`)
			}, "no log line with reason %s:\n%s", c.reason, logs.String())
			if c.token != "" && strings.Contains(logs.String(), c.token) {
				t.Error("the log holds the token")
			}
		})
	}

	// Key rotation: the provider signs with a new key; isogate fetches the
	// JWKS again for the new kid, without a restart.
	p.rotate(t, "k2")
	rotated := p.token(t, "alice", "mcp:tools", audience)
	if h := strings.Split(rotated, ".")[0]; !strings.Contains(decode(h), `"kid":"k2"`) {
		t.Fatalf("the provider did not rotate: header %s", decode(h))
	}
	if code, _ := initialize(t, base, rotated); code != http.StatusOK {
		t.Fatalf("a token of the rotated key: status %d, want 200", code)
	}
}

// TestPrincipalsOwnTheirResultsAndRules: two principals of the real
// provider cannot read each other's run records, a rule denying a tool to
// one group holds for it while another group calls it, and audit lines
// name the principal.
func TestPrincipalsOwnTheirResultsAndRules(t *testing.T) {
	p := startIdP(t)
	base, logs := oauthGateway(t, p, func(c *config.Config) {
		c.Server.Stateless = false
		c.Server.Auth.Rules = map[string]config.AccessRule{
			"contractors": {Groups: []string{"contractor"}, Deny: []string{"local.secret"}},
		}
	})
	alice := connectAs(t, base, p.token(t, "alice", "mcp:tools", audience))
	bob := connectAs(t, base, p.token(t, "bob", "mcp:tools", audience))
	ctx := context.Background()

	// The group rule: bob (contractor) is refused local.secret, alice (eng)
	// calls it; both call echo.
	res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "secret", Arguments: map[string]any{"q": 1}})
	if err != nil || res.IsError {
		t.Fatalf("alice calling secret: %v %+v", err, res)
	}
	res, err = bob.CallTool(ctx, &mcp.CallToolParams{Name: "secret", Arguments: map[string]any{"q": 1}})
	if err == nil && !res.IsError {
		t.Fatalf("bob (contractor) called secret: %+v", res)
	}
	if res, err = bob.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"q": 1}}); err != nil || res.IsError {
		t.Fatalf("bob calling echo: %v %+v", err, res)
	}

	// A run of alice's is hers: bob cannot read its record.
	res, err = alice.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool_chain",
		Arguments: map[string]any{"code": `return await local.echo({n: 2})`}})
	if err != nil || res.IsError {
		t.Fatalf("alice's program: %v %+v", err, res)
	}
	id, _ := res.Meta["isogate/run"].(string)
	if id == "" {
		t.Fatalf("no run id in %+v", res.Meta)
	}
	if _, err := alice.ReadResource(ctx, &mcp.ReadResourceParams{URI: "isogate://runs/" + id}); err != nil {
		t.Fatalf("alice reading her run: %v", err)
	}
	if _, err := bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: "isogate://runs/" + id}); err == nil {
		t.Fatal("bob read alice's run record")
	}

	// A run of bob's that ends on his denied call: its audit line has the
	// run's code (issue 43, 3: it said "error").
	if res, err = bob.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool_chain",
		Arguments: map[string]any{"code": "const n = 1;\nreturn await local.secret({n});"}}); err != nil || !res.IsError || res.Meta["isogate/code"] != "TOOL_DENIED" {
		t.Fatalf("bob's program calling local.secret: %v %+v", err, res)
	}

	testutil.Eventually(t, 5*time.Second, func() bool {
		l := logs.String()
		return strings.Contains(l, `"event":"program_run","principal":"bob","outcome":"TOOL_DENIED"`) &&
			strings.Contains(l, `"event":"tool_call","principal":"bob","tool":"local.secret","outcome":"TOOL_DENIED"`) &&
			strings.Contains(l, `"event":"tool_call","principal":"alice","tool":"local.secret","outcome":"ok"`) &&
			strings.Contains(l, `"event":"program_run","principal":"alice","outcome":"ok"`)
	}, "audit lines missing:\n%s", logs.String())
	if strings.Contains(logs.String(), `"q":1`) {
		t.Error("an audit line holds a call's arguments")
	}
}

func flip(sig string) string {
	b := []byte(sig)
	if b[3] == 'A' {
		b[3] = 'B'
	} else {
		b[3] = 'A'
	}
	return string(b)
}

func decode(s string) string {
	b, _ := base64.RawURLEncoding.DecodeString(s)
	return string(b)
}

// publicPEM is the PEM of k, what an attacker keys HMAC with.
func publicPEM(t *testing.T, k *rsa.PublicKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}
