package config

import (
	"testing"
	"time"
)

// TestBackendAuth: backends.<name>.auth loads with ${VAR} expanded in its
// secrets, and its rules are enforced.
func TestBackendAuth(t *testing.T) {
	cfg := mustLoadYAML(t, `
backends:
  crm:
    url: https://crm.example.com/mcp
    auth: {type: token_exchange, issuer: "https://idp.example.com", client_id: isogate, client_secret: "${BA_SECRET}", scopes: [crm]}
`, "BA_SECRET=s3cret")
	a := cfg.Backends["crm"].Auth
	if a.Type != BackendAuthTokenExchange || a.ClientSecret != "s3cret" || a.Issuer != "https://idp.example.com" || len(a.Scopes) != 1 {
		t.Fatalf("auth = %+v", a)
	}

	base := Backend{Name: "b", Transport: TransportStreamableHTTP, URL: "https://b.example.com/mcp", Timeout: time.Second, MaxConcurrentCalls: 1}
	for _, tc := range []struct {
		auth      BackendAuth
		headers   map[string]string
		key, msg  string
		transport Transport
		stdioCmd  string
	}{
		{auth: BackendAuth{Type: "magic"}, key: "backends.b.auth.type", msg: "must be one of"},
		{auth: BackendAuth{Type: BackendAuthAuthorizationCode, AuthorizationURL: "https://idp/authorize"}, key: "backends.b.auth", msg: "authorization_url needs token_url (or issuer)"},
		{auth: BackendAuth{Type: BackendAuthClientCredentials, TokenURL: "https://idp/token"}, key: "backends.b.auth.client_id", msg: "needs a client_id"},
		{auth: BackendAuth{Type: BackendAuthAuthorizationCode, TokenURL: "https://idp/token"}, key: "backends.b.auth", msg: "needs issuer (discovery) or authorization_url"},
		{auth: BackendAuth{Type: BackendAuthClientCredentials, ClientID: "x", TokenURL: "ftp://idp"}, key: "backends.b.auth.token_url", msg: "expected an http or https URL"},
		{auth: BackendAuth{Type: BackendAuthClientCredentials, ClientID: "x", Issuer: "https://idp"}, headers: map[string]string{"authorization": "Bearer x"},
			key: "backends.b.headers.authorization", msg: "auth sets the Authorization header"},
		{auth: BackendAuth{Type: BackendAuthClientCredentials, ClientID: "x", Issuer: "https://idp", Scopes: []string{"a b"}}, key: "backends.b.auth.scopes[0]", msg: "not a valid OAuth scope"},
		{auth: BackendAuth{Type: BackendAuthClientCredentials, ClientID: "x", Issuer: "https://idp"}, transport: TransportStdio, stdioCmd: "srv",
			key: "backends.b.auth", msg: "only used by HTTP backends"},
	} {
		b := base
		b.Auth, b.Headers = tc.auth, tc.headers
		if tc.transport != "" {
			b.Transport, b.URL, b.Command = tc.transport, "", tc.stdioCmd
		}
		wantProblem(t, b.Validate(), tc.key, tc.msg)
	}
	for _, a := range []BackendAuth{
		{Type: BackendAuthClientCredentials, ClientID: "x", Issuer: "https://idp.example.com"},
		{Type: BackendAuthClientCredentials, ClientID: "x"},   // discovered from the backend (RFC 9728)
		{Type: BackendAuthAuthorizationCode},                  // discovered, client registered at login
		{Type: BackendAuthAuthorizationCode, ClientID: "pre"}, // discovered, pre-registered client
	} {
		ok := base
		ok.Auth = a
		if err := ok.Validate(); err != nil {
			t.Errorf("valid auth %+v: %v", a, err)
		}
	}
}
