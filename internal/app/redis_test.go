package app

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/backendauth"
	"github.com/isogate/isogate/internal/embedsearch"
	"github.com/isogate/isogate/internal/kv"
	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/internal/resultstore/redistest"
	"github.com/isogate/isogate/internal/toolcache"
)

// countName names the test's own connection, left out of the count.
const countName = "isogate-test-count"

// gatewayConns returns how many connections the real redis-server has,
// other than the test's own (CLIENT LIST).
func gatewayConns(t *testing.T, admin *redis.Client) int {
	t.Helper()
	list, err := admin.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		if line != "" && !strings.Contains(line, " name="+countName+" ") {
			n++
		}
	}
	return n
}

// useRedisStores has every Redis store among the app's closers do one
// command, one after the other, and returns the types of those it used
// (by type name, one entry per store) and the first error of each kind
// (nil: all answered).
func useRedisStores(ctx context.Context, a *App) (used []string, err error) {
	for _, c := range a.closers {
		var e error
		switch s := c.(type) {
		case *resultstore.Redis:
			e = s.Ping(ctx)
		case *resultstore.RedisJournals:
			_, e = s.HoldsJournal(ctx, "no-such-run", "holder")
		case *kv.Redis:
			e = kv.Ping(ctx, s)
		case *toolcache.Redis:
			_, e = s.Get(ctx, "no-such-backend")
		case *embedsearch.Redis:
			_, e = s.Get(ctx, "no-such-vectors")
		case *backendauth.RedisTokens:
			_, e = s.Load(ctx, "no-such-backend")
			if errors.Is(e, backendauth.ErrNoLogin) {
				e = nil
			}
		default:
			continue
		}
		used = append(used, reflect.TypeOf(c).String())
		if e != nil && err == nil {
			err = fmt.Errorf("%T: %w", c, e)
		}
	}
	return used, err
}

// TestOneRedisClientPerReplica: a gateway with every Redis feature on
// (results, run records, durable journals, saved programs and their
// state, the tool cache, search vectors, logins) keeps one pool of
// connections to store.redis_url, not one per store: its eight stores,
// used one after the other, hold one connection on a real redis-server
// (eight, one per store's own client, before they shared one). Closing
// the gateway closes that client once its stores are closed: they fail
// after, with go-redis's "client is closed".
func TestOneRedisClientPerReplica(t *testing.T) {
	srv := redistest.ForTest(t)
	cfg := config.Default()
	cfg.Store.RedisURL = srv.URL()
	cfg.Store.TokenKey = "a token key long enough for the test"
	cfg.Store.HMACKey = "an hmac key long enough for the test"
	cfg.Store.DataDir = t.TempDir()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Sandbox.Isolation = config.IsolationThread
	cfg.Sandbox.MaxConcurrent = 1
	cfg.Sandbox.Durable = "paused"
	cfg.Search.Embeddings.URL = "http://127.0.0.1:1/v1" // never asked: no tools to embed
	cfg.Backends = nil
	a, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	admin := redis.NewClient(&redis.Options{Addr: srv.Addr, ClientName: countName})
	defer admin.Close()
	ctx := context.Background()
	used, err := useRedisStores(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"*resultstore.Redis", "*resultstore.Redis", "*resultstore.RedisJournals", "*toolcache.Redis",
		"*backendauth.RedisTokens", "*kv.Redis", "*embedsearch.Redis", "*kv.Redis"}
	if strings.Join(used, " ") != strings.Join(want, " ") {
		t.Fatalf("the gateway's Redis stores are %v; want %v (a store added or gone: say here how to use it)", used, want)
	}
	if n := gatewayConns(t, admin); n != 1 {
		t.Errorf("%d stores, used one after the other, hold %d connections to Redis; want 1 (one client shared by all)", len(used), n)
	}

	a.Close()
	if _, err := useRedisStores(ctx, a); !errors.Is(err, redis.ErrClosed) {
		t.Errorf("after Close the stores answer %v; want their shared client closed (%v)", err, redis.ErrClosed)
	}
}
