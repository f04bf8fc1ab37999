package backendauth

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/oauth2"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/resultstore/redistest"
)

// TestRedisTokensShareEncryptedLogins: logins kept in a real Redis are
// encrypted (the access and refresh tokens never appear in Redis), read
// back by another replica with the same store.token_key, and refused
// under another key, when moved to another backend's key, or planted.
func TestRedisTokensShareEncryptedLogins(t *testing.T) {
	srv := redistest.ForTest(t)
	ctx := context.Background()
	const secret = "a-long-random-token-key"
	replicaA, err := NewRedisTokens(srv.URL(), secret)
	if err != nil {
		t.Fatal(err)
	}
	defer replicaA.Close()
	replicaB, _ := NewRedisTokens(srv.URL(), secret)
	defer replicaB.Close()
	other, _ := NewRedisTokens(srv.URL(), "another-long-random-key")
	defer other.Close()

	login := []byte(`{"client_id":"c","token_url":"http://as/token","token":{"access_token":"AT-secret","refresh_token":"RT-secret"}}`)
	if err := replicaA.Save(ctx, "remote", login); err != nil {
		t.Fatal(err)
	}
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer raw.Close()
	stored, err := raw.Get(ctx, RedisTokenKeyPrefix+"remote").Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(stored), "AT-secret") || strings.Contains(string(stored), "RT-secret") {
		t.Fatal("the tokens are readable in Redis")
	}
	if got, err := replicaB.Load(ctx, "remote"); err != nil || string(got) != string(login) {
		t.Fatalf("replica B: %q, %v", got, err)
	}
	if _, err := other.Load(ctx, "remote"); err == nil || !strings.Contains(err.Error(), "does not decrypt") {
		t.Errorf("another key: %v, want refused", err)
	}
	if err := raw.Set(ctx, RedisTokenKeyPrefix+"victim", stored, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := replicaB.Load(ctx, "victim"); err == nil {
		t.Error("an entry moved to another backend's key was accepted")
	}
	if err := raw.Set(ctx, RedisTokenKeyPrefix+"planted", string(login), 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := replicaB.Load(ctx, "planted"); err == nil {
		t.Error("a planted plaintext login was accepted")
	}
	if _, err := replicaB.Load(ctx, "nobody"); err != ErrNoLogin {
		t.Errorf("no login: %v, want ErrNoLogin", err)
	}
}

// TestReplicaTakesARefreshedLogin: a replica whose cached token is about
// to expire reads the login again before refreshing, and takes the token
// another replica already refreshed (its refresh token may be spent):
// here the token endpoint is unreachable, so any refresh attempt fails.
func TestReplicaTakesARefreshedLogin(t *testing.T) {
	srv := redistest.ForTest(t)
	ctx := context.Background()
	store := func() *RedisTokens {
		s, err := NewRedisTokens(srv.URL(), "a-long-random-token-key")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	newAuthorizer := func(tokens TokenStore) *Authorizer {
		a, err := New(Options{Backend: "remote", URL: "http://127.0.0.1:1/mcp", Tokens: tokens, CacheDir: t.TempDir(),
			Auth: config.BackendAuth{Type: config.BackendAuthAuthorizationCode, Issuer: "http://127.0.0.1:1"}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a, b := newAuthorizer(store()), newAuthorizer(store())
	stale := &storedLogin{ClientID: "c", TokenURL: "http://127.0.0.1:1/token",
		Token: &oauth2.Token{AccessToken: "old", RefreshToken: "r1", Expiry: time.Now().Add(time.Second)}}
	if err := a.writeLogin(ctx, stale); err != nil {
		t.Fatal(err)
	}
	if _, err := b.readLogin(ctx, false); err != nil { // b caches the stale login
		t.Fatal(err)
	}
	fresh := *stale
	fresh.Token = &oauth2.Token{AccessToken: "new", RefreshToken: "r2", Expiry: time.Now().Add(time.Hour)}
	if err := a.writeLogin(ctx, &fresh); err != nil { // a refreshed it
		t.Fatal(err)
	}
	tok, err := b.refreshStored(ctx)
	if err != nil || tok.AccessToken != "new" {
		t.Fatalf("replica b: %v, %v; want the token replica a refreshed", tok, err)
	}
}
