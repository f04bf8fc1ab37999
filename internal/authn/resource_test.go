package authn

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

// fakeIssuer is an httptest authorization server shaped like Microsoft
// Entra ID: its issuer has a path (/tenant/v2.0), its OpenID configuration
// is only at the path-appended URL, with Entra's fields (and with
// code_challenge_methods_supported, which Entra's lacks, unless noPKCE).
// It counts the JWKS and introspection
// requests it gets; jwks and introspect, when set, answer them instead of
// the defaults (the key set; introspection by the active map).
type fakeIssuer struct {
	srv        *httptest.Server
	issuer     string
	key        *rsa.PrivateKey
	jwksHits   atomic.Int32
	introHits  atomic.Int32
	jwks       func(w http.ResponseWriter)
	introspect func(w http.ResponseWriter, token string)
	active     map[string]bool
	noPKCE     bool
}

const testAudience = "https://isogate.test/mcp"

func newFakeIssuer(t *testing.T) *fakeIssuer {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeIssuer{key: k, active: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/tenant/v2.0/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		// The fields of Entra ID's v2.0 document.
		doc := map[string]any{
			"token_endpoint":                        f.srv.URL + "/tenant/oauth2/v2.0/token",
			"token_endpoint_auth_methods_supported": []string{"client_secret_post", "private_key_jwt", "client_secret_basic"},
			"jwks_uri":                              f.srv.URL + "/tenant/discovery/v2.0/keys",
			"response_modes_supported":              []string{"query", "fragment", "form_post"},
			"subject_types_supported":               []string{"pairwise"},
			"id_token_signing_alg_values_supported": []string{"RS256"},
			"response_types_supported":              []string{"code", "id_token", "code id_token", "id_token token"},
			"scopes_supported":                      []string{"openid", "profile", "email", "offline_access"},
			"issuer":                                f.issuer,
			"request_uri_parameter_supported":       false,
			"userinfo_endpoint":                     "https://graph.microsoft.com/oidc/userinfo",
			"authorization_endpoint":                f.srv.URL + "/tenant/oauth2/v2.0/authorize",
			"end_session_endpoint":                  f.srv.URL + "/tenant/oauth2/v2.0/logout",
			"introspection_endpoint":                f.srv.URL + "/tenant/introspect",
		}
		if !f.noPKCE {
			doc["code_challenge_methods_supported"] = []string{"S256"}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc)
	})
	mux.HandleFunc("/tenant/discovery/v2.0/keys", func(w http.ResponseWriter, _ *http.Request) {
		f.jwksHits.Add(1)
		if f.jwks != nil {
			f.jwks(w)
			return
		}
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &f.key.PublicKey, KeyID: "k1", Use: "sig"}}})
	})
	mux.HandleFunc("/tenant/introspect", func(w http.ResponseWriter, r *http.Request) {
		f.introHits.Add(1)
		token := r.PostFormValue("token")
		if f.introspect != nil {
			f.introspect(w, token)
			return
		}
		if !f.active[token] {
			_, _ = w.Write([]byte(`{"active":false}`))
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"active": true, "sub": "opaque-user", "aud": testAudience,
			"iss": f.issuer, "exp": time.Unix(2_000_000_000, 0).Unix(), "scope": "mcp:tools"})
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	f.issuer = f.srv.URL + "/tenant/v2.0"
	return f
}

// clock is a settable clock for the verifier.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// verifier returns a verifier of f's tokens on clk, with introspection.
func (f *fakeIssuer) verifier(clk *clock) *OAuth {
	return NewOAuth(OAuthOptions{Issuer: f.issuer, Audience: testAudience, HTTPClient: f.srv.Client(), Now: clk.Now,
		KeyRefreshGap: 10 * time.Second, IntrospectionClientID: "isogate", IntrospectionClientSecret: "s",
		IntrospectionCacheTTL: time.Minute, IntrospectionRate: 10})
}

// sign makes a JWT of f's issuer for the test audience under kid; header
// adds header fields.
func (f *fakeIssuer) sign(t *testing.T, clk *clock, kid string, header map[string]any) string {
	t.Helper()
	now := clk.Now()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": f.issuer, "aud": testAudience, "sub": "alice",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "scp": "mcp:tools"})
	tok.Header["kid"] = kid
	for k, v := range header {
		tok.Header[k] = v
	}
	s, err := tok.SignedString(f.key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newClock() *clock { return &clock{now: time.Now()} }

// TestIssuerWithoutPKCEMetadata: tokens of an issuer whose OpenID
// configuration lacks code_challenge_methods_supported (Entra ID's) verify:
// PKCE is the client's concern, not a resource server's.
func TestIssuerWithoutPKCEMetadata(t *testing.T) {
	f := newFakeIssuer(t)
	f.noPKCE = true
	clk := newClock()
	o := f.verifier(clk)
	info, err := o.Verify(context.Background(), f.sign(t, clk, "k1", nil), nil)
	if err != nil {
		t.Fatalf("a token of an issuer without code_challenge_methods_supported: %v", err)
	}
	if p := FromTokenInfo(info); p == nil || p.Name != "alice" {
		t.Fatalf("principal %+v", p)
	}
}

// TestDiscoveryRefusesAnotherIssuer: metadata naming another issuer than
// the configured one is refused (RFC 8414 §3.3).
func TestDiscoveryRefusesAnotherIssuer(t *testing.T) {
	f := newFakeIssuer(t)
	clk := newClock()
	o := NewOAuth(OAuthOptions{Issuer: f.issuer, Audience: testAudience, HTTPClient: f.srv.Client(), Now: clk.Now})
	f.issuer = "https://evil.test/tenant/v2.0" // what the document now says
	if err := o.Discover(context.Background()); ReasonOf(err) != ReasonUnavailable || !strings.Contains(err.Error(), "evil.test") {
		t.Fatalf("metadata of another issuer: %v", err)
	}
}

// TestCritHeaderIsEnforced: a JWT, validly signed, whose crit header
// names an extension isogate does not understand is refused (RFC 7515
// §4.1.11), as is a malformed crit.
func TestCritHeaderIsEnforced(t *testing.T) {
	f := newFakeIssuer(t)
	clk := newClock()
	o := f.verifier(clk)
	ctx := context.Background()
	if _, err := o.Verify(ctx, f.sign(t, clk, "k1", nil), nil); err != nil {
		t.Fatalf("the same token without crit: %v", err)
	}
	for _, h := range []map[string]any{
		{"crit": []string{"exp-ext"}, "exp-ext": true},
		{"crit": []string{"b64"}, "b64": false},
		{"crit": "not-a-list"},
	} {
		if _, err := o.Verify(ctx, f.sign(t, clk, "k1", h), nil); ReasonOf(err) != ReasonMalformed || !strings.Contains(err.Error(), "crit") {
			t.Errorf("header %v: %v, want malformed (crit)", h, err)
		}
	}
}

// TestFailingJWKSFetchedOncePerGap: while the JWKS endpoint fails, 100
// tokens with made-up kids (concurrent, then one by one) cost one fetch
// per jwks_min_refresh, not one each; they are answered
// issuer_unavailable; after the gap the next one fetches again.
func TestFailingJWKSFetchedOncePerGap(t *testing.T) {
	f := newFakeIssuer(t)
	f.jwks = func(w http.ResponseWriter) { http.Error(w, "down", http.StatusInternalServerError) }
	clk := newClock()
	o := f.verifier(clk)
	ctx := context.Background()
	if err := o.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 50 {
		wg.Go(func() {
			_, err := o.Verify(ctx, f.sign(t, clk, fmt.Sprintf("junk-%d", i), nil), nil)
			errs <- err
		})
	}
	wg.Wait()
	for i := 50; i < 100; i++ {
		_, err := o.Verify(ctx, f.sign(t, clk, fmt.Sprintf("junk-%d", i), nil), nil)
		errs <- err
	}
	close(errs)
	for err := range errs {
		if ReasonOf(err) != ReasonUnavailable {
			t.Fatalf("a made-up kid while the JWKS fails: %v, want issuer_unavailable", err)
		}
	}
	if n := f.jwksHits.Load(); n != 1 {
		t.Fatalf("%d JWKS fetches for 100 made-up kids within one gap, want 1", n)
	}
	clk.add(11 * time.Second)
	f.jwks = nil
	if _, err := o.Verify(ctx, f.sign(t, clk, "k1", nil), nil); err != nil {
		t.Fatalf("after the gap, with the endpoint back: %v", err)
	}
	if n := f.jwksHits.Load(); n != 2 {
		t.Fatalf("%d JWKS fetches after the gap, want 2", n)
	}
}

// TestKnownKidDoesNotWaitForSlowJWKS: while a JWKS fetch hangs (a made-up
// kid started it), a token with a known kid verifies without waiting, and
// further made-up kids join the fetch under way instead of starting
// their own.
func TestKnownKidDoesNotWaitForSlowJWKS(t *testing.T) {
	f := newFakeIssuer(t)
	clk := newClock()
	o := f.verifier(clk)
	ctx := context.Background()
	good := f.sign(t, clk, "k1", nil)
	if _, err := o.Verify(ctx, good, nil); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}, 1), make(chan struct{})
	f.jwks = func(w http.ResponseWriter) {
		entered <- struct{}{}
		<-release
		http.Error(w, "slow, then down", http.StatusBadGateway)
	}
	unblock := sync.OnceFunc(func() { close(release) })
	defer unblock()
	clk.add(11 * time.Second)
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = o.Verify(ctx, f.sign(t, clk, "made-up", nil), nil) })
	<-entered // the fetch hangs now

	done := make(chan error, 1)
	go func() { _, err := o.Verify(ctx, good, nil); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("a known kid during a hanging JWKS fetch: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a token with a known kid waited behind a hanging JWKS fetch")
	}
	for i := range 20 {
		wg.Go(func() { _, _ = o.Verify(ctx, f.sign(t, clk, fmt.Sprintf("more-%d", i), nil), nil) })
	}
	unblock()
	wg.Wait()
	if n := f.jwksHits.Load(); n != 2 {
		t.Fatalf("%d JWKS fetches, want 2 (the first, and one shared by every made-up kid)", n)
	}
}

// TestIntrospectionIsCachedAndRateLimited: an opaque token is introspected
// once and its answer reused (until the cache TTL); 100 repeats of one
// junk token cost one request; 100 different junk tokens cost at most
// introspection_rate requests (the rest are answered
// introspection_limited, a 503), and so do 100 while the endpoint fails.
func TestIntrospectionIsCachedAndRateLimited(t *testing.T) {
	ctx := context.Background()
	t.Run("cached", func(t *testing.T) {
		f := newFakeIssuer(t)
		f.active["good-opaque-token"] = true
		clk := newClock()
		o := f.verifier(clk)
		for i := range 100 {
			info, err := o.Verify(ctx, "good-opaque-token", nil)
			if err != nil || FromTokenInfo(info).Name != "opaque-user" {
				t.Fatalf("check %d: %v", i, err)
			}
			if _, err := o.Verify(ctx, "junk-opaque-token", nil); ReasonOf(err) != ReasonInactive {
				t.Fatalf("junk %d: %v, want inactive", i, err)
			}
		}
		if n := f.introHits.Load(); n != 2 {
			t.Fatalf("%d introspection requests for 100 checks of two tokens, want 2", n)
		}
		// Revoked meanwhile: noticed once the cached answer is older
		// than the TTL.
		f.active["good-opaque-token"] = false
		clk.add(61 * time.Second)
		if _, err := o.Verify(ctx, "good-opaque-token", nil); ReasonOf(err) != ReasonInactive {
			t.Fatalf("a revoked token after the cache TTL: %v", err)
		}
	})
	flood := func(t *testing.T, f *fakeIssuer) {
		o := f.verifier(newClock())
		limited := 0
		for i := range 100 {
			_, err := o.Verify(ctx, fmt.Sprintf("junk-opaque-%d", i), nil)
			var rej *Rejection
			switch {
			case ReasonOf(err) == ReasonRateLimited:
				limited++
				if !errorsAs(err, &rej) || !rej.Undecided() || rej.RetryAfter <= 0 {
					t.Fatalf("a limited check: %#v", err)
				}
			case err == nil:
				t.Fatalf("junk token %d accepted", i)
			}
		}
		if n := f.introHits.Load(); n != 10 {
			t.Fatalf("%d introspection requests for 100 junk tokens, want 10 (introspection_rate)", n)
		}
		if limited != 90 {
			t.Fatalf("%d answered introspection_limited, want 90", limited)
		}
	}
	t.Run("junk", func(t *testing.T) { flood(t, newFakeIssuer(t)) })
	t.Run("failing", func(t *testing.T) {
		f := newFakeIssuer(t)
		f.introspect = func(w http.ResponseWriter, _ string) { http.Error(w, "down", http.StatusServiceUnavailable) }
		flood(t, f)
	})
}

func errorsAs(err error, target **Rejection) bool { return errors.As(err, target) }
