package interop

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

// TestTypeScriptSDKWithEntraLikeIssuer: the official TypeScript SDK
// client, holding an access token of an issuer shaped like Microsoft Entra
// ID (issuer with a path, OpenID configuration at the path-appended URL
// only, no code_challenge_methods_supported), runs its whole session
// against isogate in oauth mode; a made-up token is refused with 401.
func TestTypeScriptSDKWithEntraLikeIssuer(t *testing.T) {
	t.Parallel()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	var base string
	mux.HandleFunc("/tenant/v2.0/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                base + "/tenant/v2.0",
			"authorization_endpoint":                base + "/tenant/oauth2/v2.0/authorize",
			"token_endpoint":                        base + "/tenant/oauth2/v2.0/token",
			"jwks_uri":                              base + "/tenant/discovery/v2.0/keys",
			"response_types_supported":              []string{"code", "id_token", "code id_token", "id_token token"},
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("/tenant/discovery/v2.0/keys", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Use: "sig"}}})
	})
	// base is set before the server's goroutines start, which read it.
	idp := httptest.NewUnstartedServer(mux)
	base = "http://" + idp.Listener.Addr().String()
	idp.Start()
	defer idp.Close()
	issuer, audience := base+"/tenant/v2.0", "http://isogate.test/mcp"

	gw := startHTTPEnv("ISOGATE_SERVER__AUTH__MODE=oauth", "ISOGATE_SERVER__AUTH__ISSUER="+issuer,
		"ISOGATE_SERVER__AUTH__AUDIENCE="+audience)
	t.Cleanup(func() {
		if gw.cmd != nil && gw.cmd.Process != nil {
			_ = gw.cmd.Process.Signal(syscall.SIGTERM)
			_ = gw.cmd.Wait()
		}
	})
	if gw.err != nil {
		t.Fatalf("oauth gateway: %v\n%s", gw.err, gw.logs)
	}
	if !strings.Contains(gw.logs.String(), "auth=oauth") {
		t.Errorf("the start-up line does not say auth=oauth:\n%s", gw.logs)
	}
	now := time.Now()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": issuer, "aud": audience, "sub": "alice",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "scp": "mcp:tools"})
	tok.Header["kid"] = "k1"
	token, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	var s session
	runNodeInto(t, &s, "session.mjs", "--http", gw.url, "--token", token)
	checkSession(t, s)

	out := nodeReport(t, "session.mjs", "--http", gw.url, "--token", "made-up.token.value")
	if !strings.Contains(string(out), `"fatal"`) || !strings.Contains(string(out), "401") {
		t.Errorf("a made-up token was not refused with 401: %s", out)
	}
}
