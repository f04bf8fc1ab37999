package authn

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/isogate/isogate/config"
)

// TestUnknownKidRefreshIsBounded: a flood of tokens with made-up kids
// costs one JWKS fetch per refresh gap, not one per token; after the gap
// the next unknown kid fetches again (a rotated key is picked up).
func TestUnknownKidRefreshIsBounded(t *testing.T) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	var fetches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: "k1", Use: "sig"}}})
	}))
	defer srv.Close()
	now := time.Unix(1_000_000, 0)
	ks := newKeySet(srv.URL, srv.Client(), 10*time.Second, time.Hour, func() time.Time { return now })
	ctx := context.Background()
	if _, err := ks.key(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if _, err := ks.key(ctx, "made-up"); ReasonOf(err) != ReasonUnknownKid {
			t.Fatalf("made-up kid %d: %v", i, err)
		}
	}
	if n := fetches.Load(); n != 1 {
		t.Fatalf("%d JWKS fetches for 51 lookups within the gap, want 1", n)
	}
	now = now.Add(11 * time.Second)
	_, _ = ks.key(ctx, "made-up")
	if n := fetches.Load(); n != 2 {
		t.Fatalf("%d fetches after the gap, want 2", n)
	}
	if _, err := ks.key(ctx, "k1"); err != nil {
		t.Fatalf("the known key after the refreshes: %v", err)
	}
}

// TestStaticTokensNamePrincipals: each static token is its principal; a
// wrong one is refused; server.auth_token is "default" and can rotate.
func TestStaticTokensNamePrincipals(t *testing.T) {
	s := NewStatic(map[string]config.StaticToken{
		"ci":  {Token: "ci-token-0123456789", Groups: []string{"bots"}},
		"ops": {Token: "ops-token-0123456789"},
	}, "legacy-token-0123456789")
	ctx := context.Background()
	for tok, want := range map[string]string{"ci-token-0123456789": "ci", "ops-token-0123456789": "ops", "legacy-token-0123456789": LegacyPrincipal} {
		info, err := s.Verify(ctx, tok, nil)
		if err != nil {
			t.Fatalf("%s: %v", want, err)
		}
		if p := FromTokenInfo(info); p == nil || p.Name != want || info.UserID != want {
			t.Fatalf("token of %s gave %+v", want, p)
		}
	}
	if _, err := s.Verify(ctx, "ci-token-012345678", nil); ReasonOf(err) != ReasonUnknownToken {
		t.Fatalf("a near miss: %v", err)
	}
	s.SetLegacy("rotated-token-0123456789")
	if _, err := s.Verify(ctx, "legacy-token-0123456789", nil); err == nil {
		t.Fatal("the rotated-out token still works")
	}
	if _, err := s.Verify(ctx, "ci-token-0123456789", nil); err != nil {
		t.Fatalf("a named token after rotating server.auth_token: %v", err)
	}
}
