package resultstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/internal/resultstore/redistest"
)

// A Redis with a password (requirepass) is reached through
// store.redis_url's userinfo; without it every operation fails.
func TestRedisWithPassword(t *testing.T) {
	if redisServer == nil {
		t.Skipf("Redis store tests skipped: %v", redisSkip)
	}
	srv := redistest.ForTest(t)
	ctx := context.Background()
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
	if err := admin.ConfigSet(ctx, "requirepass", "s3cret-pass").Err(); err != nil {
		t.Fatal(err)
	}
	admin.Close()
	anon, _ := resultstore.NewRedis(resultstore.RedisOptions{URL: srv.URL()})
	defer anon.Close()
	if _, err := anon.Put(ctx, "alice", []byte(`1`)); err == nil || strings.Contains(err.Error(), "s3cret-pass") {
		t.Fatalf("without the password: %v", err)
	}
	authed, _ := resultstore.NewRedis(resultstore.RedisOptions{URL: "redis://:s3cret-pass@" + srv.Addr + "/0"})
	defer authed.Close()
	id, err := authed.Put(ctx, "alice", []byte(`1`))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := authed.Get(ctx, "alice", id); err != nil || string(got) != "1" {
		t.Fatalf("with the password: %q %v", got, err)
	}
}

// The attack of issue 25 (6): whoever reaches Redis plants or moves
// entries. With store.hmac_key a planted entry, or a genuine one moved to
// another id or owner, is refused.
func TestRedisEntriesAuthenticated(t *testing.T) {
	if redisServer == nil {
		t.Skipf("Redis store tests skipped: %v", redisSkip)
	}
	ctx := context.Background()
	key := []byte("0123456789abcdef-key")
	plain := newRedis(t, resultstore.Limits{})
	prefix := resultstore.RedisPrefix(plain)
	s, _ := resultstore.NewRedis(resultstore.RedisOptions{URL: redisServer.URL(), Prefix: prefix, HMACKey: key})
	defer s.Close()
	id, err := s.Put(ctx, "alice", []byte(`{"ok":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, "alice", id); err != nil || string(got) != `{"ok":1}` {
		t.Fatalf("a genuine entry: %q %v", got, err)
	}
	raw := redis.NewClient(&redis.Options{Addr: redisServer.Addr})
	defer raw.Close()
	sealed, err := raw.HGet(ctx, prefix+"r:"+id, "d").Result()
	if err != nil {
		t.Fatal(err)
	}
	for name, entry := range map[string][2]string{
		"planted":             {"alice", `{"planted":1}`},
		"moved to an owner":   {"mallory", sealed},
		"changed data":        {"alice", strings.Replace(sealed, `"ok":1`, `"ok":2`, 1)},
		"forged, wrong key":   {"alice", string(resultstore.Seal([]byte("another-key-0123456"), prefix+"r:x\x00alice", []byte("1")))},
		"moved to another id": {"alice", sealed},
	} {
		plantedID := "feedfacefeedfacefeedfacefeedface"
		if err := raw.HSet(ctx, prefix+"r:"+plantedID, "o", entry[0], "d", entry[1]).Err(); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Get(ctx, entry[0], plantedID); !errors.Is(err, resultstore.ErrNotFound) || !errors.Is(err, resultstore.ErrTampered) {
			t.Errorf("%s: read %q, %v; want refused", name, got, err)
		}
	}
}
