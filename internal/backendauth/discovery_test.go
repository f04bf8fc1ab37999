package backendauth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/isogate/isogate/config"
)

// fakeRS is a backend that wants a token and publishes protected-resource
// metadata, with its authorization server on the same listener (/as).
type fakeRS struct {
	srv         *httptest.Server
	prmPath     string // where the metadata is served
	inChallenge bool   // resource_metadata in WWW-Authenticate
	scope       string // scope in WWW-Authenticate
	prmResource string // "" = the backend's url
	supported   []string

	mu    sync.Mutex
	token url.Values // the token request's form
	auth  string     // its Authorization header
}

func newFakeRS(t *testing.T, f *fakeRS) *fakeRS {
	mux := http.NewServeMux()
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		ch := `Bearer error="invalid_token"`
		if f.inChallenge {
			ch += `, resource_metadata="` + f.srv.URL + f.prmPath + `"`
		}
		if f.scope != "" {
			ch += `, scope="` + f.scope + `"`
		}
		w.Header().Set("WWW-Authenticate", ch)
		w.WriteHeader(http.StatusUnauthorized)
	})
	mux.HandleFunc(f.prmPath, func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		res := f.prmResource
		f.mu.Unlock()
		if res == "" {
			res = f.srv.URL + "/mcp"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"resource": res, "authorization_servers": []string{f.srv.URL + "/as"},
			"scopes_supported": []string{"read", "write"}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server/as", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": f.srv.URL + "/as", "token_endpoint": f.srv.URL + "/as/token",
			"authorization_endpoint": f.srv.URL + "/as/authorize", "code_challenge_methods_supported": []string{"S256"},
			"token_endpoint_auth_methods_supported": f.supported})
	})
	mux.HandleFunc("/as/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		f.mu.Lock()
		f.token, f.auth = r.PostForm, r.Header.Get("Authorization")
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"at-1","token_type":"Bearer","expires_in":3600}`))
	})
	return f
}

func clientCredentials(t *testing.T, f *fakeRS) (*Authorizer, error) {
	t.Helper()
	a, err := New(Options{Backend: "b", URL: f.srv.URL + "/mcp",
		Auth: config.BackendAuth{Type: config.BackendAuthClientCredentials, ClientID: "gw", ClientSecret: "s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Token(context.Background())
	return a, err
}

// TestDiscoveryFromBackend: with neither issuer nor token_url, the
// authorization server, resource and scopes come from the backend's
// protected-resource metadata, found through its challenge or at the
// well-known URLs (at the backend's path, then at its root).
func TestDiscoveryFromBackend(t *testing.T) {
	for _, tc := range []struct {
		name         string
		rs           *fakeRS
		wantResource string // "" = the backend's url
		wantScope    string
	}{
		{name: "challenge", rs: &fakeRS{prmPath: "/custom/prm.json", inChallenge: true, scope: "write"}, wantScope: "write"},
		{name: "path", rs: &fakeRS{prmPath: "/.well-known/oauth-protected-resource/mcp"}, wantScope: "read write"},
		{name: "root", rs: &fakeRS{prmPath: "/.well-known/oauth-protected-resource"}, wantResource: "root", wantScope: "read write"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeRS(t, tc.rs)
			want := f.srv.URL + "/mcp"
			if tc.wantResource == "root" {
				f.mu.Lock()
				f.prmResource, want = f.srv.URL, f.srv.URL
				f.mu.Unlock()
			}
			if _, err := clientCredentials(t, f); err != nil {
				t.Fatal(err)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if got := f.token.Get("resource"); got != want {
				t.Errorf("resource = %q, want %q (the metadata's)", got, want)
			}
			if got := f.token.Get("scope"); got != tc.wantScope {
				t.Errorf("scope = %q, want %q", got, tc.wantScope)
			}
		})
	}
}

// TestDiscoveryRefusesOtherResource: metadata naming another resource is
// refused (RFC 9728 §3.3): no token is asked for.
func TestDiscoveryRefusesOtherResource(t *testing.T) {
	f := newFakeRS(t, &fakeRS{prmPath: "/.well-known/oauth-protected-resource/mcp", prmResource: "https://elsewhere.example.com/mcp"})
	_, err := clientCredentials(t, f)
	if err == nil || !strings.Contains(err.Error(), "refusing to authorize") {
		t.Fatalf("err = %v, want a refusal", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.token != nil {
		t.Errorf("a token was asked for: %v", f.token)
	}
}

// TestTokenEndpointAuthMethod: a client with a secret authenticates the way
// the server lists (post before basic), not by trying.
func TestTokenEndpointAuthMethod(t *testing.T) {
	for _, tc := range []struct {
		supported []string
		basic     bool
	}{
		{supported: []string{"client_secret_post"}, basic: false},
		{supported: []string{"client_secret_basic"}, basic: true},
		{supported: []string{"client_secret_basic", "client_secret_post"}, basic: false},
	} {
		f := newFakeRS(t, &fakeRS{prmPath: "/.well-known/oauth-protected-resource/mcp", supported: tc.supported})
		if _, err := clientCredentials(t, f); err != nil {
			t.Fatal(err)
		}
		f.mu.Lock()
		gotBasic, inForm := strings.HasPrefix(f.auth, "Basic "), f.token.Get("client_secret") != ""
		f.mu.Unlock()
		if gotBasic != tc.basic || inForm == tc.basic {
			t.Errorf("supported %v: Basic header %v, secret in form %v", tc.supported, gotBasic, inForm)
		}
	}
	if got := authStyle(&oauthex.AuthServerMeta{}, "", "client_secret_basic"); got != oauth2.AuthStyleInParams {
		t.Errorf("a client without a secret: style %v", got)
	}
}

// TestCheckIss: the iss of an authorization response (RFC 9207) must be
// the issuer's, compared as strings, and present when the server says it
// sends one.
func TestCheckIss(t *testing.T) {
	adv := &oauthex.AuthServerMeta{Issuer: "https://as.example.com", AuthorizationResponseIssParameterSupported: true}
	quiet := &oauthex.AuthServerMeta{Issuer: "https://as.example.com"}
	for _, tc := range []struct {
		iss  string
		meta *oauthex.AuthServerMeta
		ok   bool
	}{
		{"https://as.example.com", adv, true},
		{"", quiet, true},
		{"https://as.example.com", quiet, true},
		{"", adv, false},
		{"https://evil.example.com", adv, false},
		{"https://evil.example.com", quiet, false},
		{"https://as.example.com/", adv, false}, // no normalization
	} {
		if err := checkIss(tc.iss, tc.meta); (err == nil) != tc.ok {
			t.Errorf("iss %q (advertised %v): err = %v, want ok %v", tc.iss, tc.meta.AuthorizationResponseIssParameterSupported, err, tc.ok)
		}
	}
}
