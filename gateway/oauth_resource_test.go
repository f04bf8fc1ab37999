package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"

	"github.com/isogate/isogate/config"
)

// entraLike is an httptest authorization server with Microsoft Entra ID's
// shape: the issuer has a path (/tenant/v2.0), the OpenID configuration is
// at the path-appended URL only and has no
// code_challenge_methods_supported. It counts its JWKS and introspection
// requests; every opaque token is inactive.
type entraLike struct {
	issuer              string
	jwksHits, introHits atomic.Int32
}

func startEntraLike(t *testing.T, p *idp) *entraLike {
	t.Helper()
	e := &entraLike{}
	mux := http.NewServeMux()
	var base string
	mux.HandleFunc("/tenant/v2.0/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                e.issuer,
			"authorization_endpoint":                base + "/tenant/oauth2/v2.0/authorize",
			"token_endpoint":                        base + "/tenant/oauth2/v2.0/token",
			"jwks_uri":                              base + "/tenant/discovery/v2.0/keys",
			"introspection_endpoint":                base + "/tenant/introspect",
			"response_types_supported":              []string{"code", "id_token", "code id_token", "id_token token"},
			"id_token_signing_alg_values_supported": []string{"RS256"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_post", "private_key_jwt", "client_secret_basic"},
		})
	})
	mux.HandleFunc("/tenant/discovery/v2.0/keys", func(w http.ResponseWriter, _ *http.Request) {
		e.jwksHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &p.key.PublicKey, KeyID: p.kid, Use: "sig"}}})
	})
	mux.HandleFunc("/tenant/introspect", func(w http.ResponseWriter, _ *http.Request) {
		e.introHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"active":false}`))
	})
	// base is set before the server's goroutines start, which read it.
	srv := httptest.NewUnstartedServer(mux)
	base = "http://" + srv.Listener.Addr().String()
	srv.Start()
	t.Cleanup(srv.Close)
	e.issuer = base + "/tenant/v2.0"
	p.issuer = e.issuer
	return e
}

// TestOAuthResourceServerWithEntraLikeIssuer drives the gateway's HTTP
// handler in oauth mode against an issuer shaped like Entra ID: its tokens
// are accepted although its metadata announces no PKCE; 100 tokens with
// made-up kids cost no JWKS fetch beyond one per jwks_min_refresh; 100
// made-up opaque tokens cost the issuer at most introspection_rate
// requests per second, the rest answered 503 with Retry-After (the token
// is not known to be bad); and no token reaches the log.
func TestOAuthResourceServerWithEntraLikeIssuer(t *testing.T) {
	p := &idp{key: newKey(t), kid: "k1"}
	e := startEntraLike(t, p)
	base, logs := oauthGateway(t, p, func(c *config.Config) {
		c.Server.Auth.JWKSMinRefresh = time.Hour
		c.Server.Auth.IntrospectionClientID, c.Server.Auth.IntrospectionClientSecret = "isogate", "isogate-secret"
		c.Server.Auth.IntrospectionRate = 1
	})
	now := time.Now()
	claims := jwt.MapClaims{"iss": e.issuer, "aud": audience, "sub": "alice", "iat": now.Unix(),
		"exp": now.Add(time.Hour).Unix(), "scp": "mcp:tools"}
	if code, _ := initialize(t, base, sign(t, p.key, p.kid, claims)); code != http.StatusOK {
		t.Fatalf("a token of an issuer without code_challenge_methods_supported: status %d, want 200\n%s", code, logs.String())
	}

	var sent []string
	junkKey := newKey(t)
	for i := range 100 {
		tok := sign(t, junkKey, fmt.Sprintf("made-up-%d", i), claims)
		sent = append(sent, tok)
		if code, _ := initialize(t, base, tok); code != http.StatusUnauthorized {
			t.Fatalf("made-up kid %d: status %d, want 401", i, code)
		}
	}
	if n := e.jwksHits.Load(); n != 1 {
		t.Fatalf("%d JWKS fetches for one token and 100 made-up kids within jwks_min_refresh, want 1", n)
	}

	start := time.Now()
	rejected, limited := 0, 0
	for i := range 100 {
		tok := fmt.Sprintf("made-up-opaque-token-%d", i)
		sent = append(sent, tok)
		resp, err := post(t, context.Background(), base+"/mcp", initializeBody, map[string]string{"Authorization": "Bearer " + tok})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusUnauthorized:
			rejected++
		case http.StatusServiceUnavailable:
			limited++
			if resp.Header.Get("Retry-After") == "" || strings.Contains(resp.Header.Get("WWW-Authenticate"), "invalid_token") {
				t.Fatalf("a 503 with Retry-After %q and challenge %q", resp.Header.Get("Retry-After"), resp.Header.Get("WWW-Authenticate"))
			}
		default:
			t.Fatalf("made-up opaque token %d: status %d", i, resp.StatusCode)
		}
	}
	// introspection_rate 1: a burst of one, then one per second.
	bound := 1 + int(math.Ceil(time.Since(start).Seconds()))
	if n := int(e.introHits.Load()); n > bound {
		t.Fatalf("%d introspection requests for 100 made-up opaque tokens in %v, want at most %d (introspection_rate 1)",
			n, time.Since(start), bound)
	} else if n != rejected {
		t.Fatalf("%d introspection requests but %d tokens answered 401 (inactive)", n, rejected)
	}
	if limited == 0 || !strings.Contains(logs.String(), `"reason":"introspection_limited"`) {
		t.Fatalf("%d answered 503; log:\n%s", limited, logs.String())
	}
	for _, tok := range sent {
		if strings.Contains(logs.String(), tok) {
			t.Fatal("the log holds a token")
		}
	}
}
