package resultstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/internal/resultstore/redistest"
	"github.com/isogate/isogate/internal/testutil"
)

// redisServer is one redis-server shared by this package's tests (nil,
// with redisSkip saying why, when it cannot run here).
var (
	redisServer *redistest.Server
	redisSkip   error
)

func TestMain(m *testing.M) {
	redisServer, redisSkip = redistest.Start()
	code := m.Run()
	if redisServer != nil {
		redisServer.Stop()
	}
	os.Exit(code)
}

// newRedis returns a store on the shared server with its own key prefix.
func newRedis(t testing.TB, limits resultstore.Limits) *resultstore.Redis {
	t.Helper()
	if redisServer == nil {
		t.Skipf("Redis store tests skipped: %v", redisSkip)
	}
	s, err := resultstore.NewRedis(resultstore.RedisOptions{URL: redisServer.URL(), Limits: limits,
		Prefix: fmt.Sprintf("{test-%s-%d}:", t.Name(), time.Now().UnixNano()), CountDataOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestRedisPutGetOwner(t *testing.T) {
	ctx := context.Background()
	a := newRedis(t, resultstore.Limits{})
	id, err := a.Put(ctx, "alice", []byte(`{"x":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(id) != 32 {
		t.Errorf("id %q: want 32 hex characters (128 random bits)", id)
	}
	// A second client (another replica) on the same prefix reads it.
	b, _ := resultstore.NewRedis(resultstore.RedisOptions{URL: redisServer.URL(), Prefix: resultstore.RedisPrefix(a)})
	defer b.Close()
	got, err := b.Get(ctx, "alice", id)
	if err != nil || string(got) != `{"x":1}` {
		t.Fatalf("Get through another client = %q, %v", got, err)
	}
	if _, err := b.Get(ctx, "mallory", id); !errors.Is(err, resultstore.ErrNotFound) {
		t.Errorf("another owner's Get: err %v, want ErrNotFound", err)
	}
	if _, err := b.Get(ctx, "alice", "0123456789abcdef0123456789abcdef"); !errors.Is(err, resultstore.ErrNotFound) {
		t.Errorf("unknown id: err %v, want ErrNotFound", err)
	}
	if err := a.PutID(ctx, "alice", "run-1", []byte("rec")); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Get(ctx, "alice", "run-1"); err != nil || string(got) != "rec" {
		t.Errorf("Get of a PutID entry = %q, %v", got, err)
	}
	if err := a.PutID(ctx, "alice", "run-1", []byte("again")); err == nil {
		t.Error("PutID of an existing id succeeded")
	}
}

func TestRedisBudgets(t *testing.T) {
	ctx := context.Background()
	s := newRedis(t, resultstore.Limits{MaxBytes: 100, OwnerBytes: 40})
	if _, err := s.Put(ctx, "a", make([]byte, 41)); !errors.Is(err, resultstore.ErrTooLarge) {
		t.Errorf("41 bytes over a 40-byte share: err %v, want ErrTooLarge", err)
	}
	first, _ := s.Put(ctx, "a", bytes.Repeat([]byte("1"), 30))
	second, err := s.Put(ctx, "a", bytes.Repeat([]byte("2"), 30)) // evicts a's first
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "a", first); !errors.Is(err, resultstore.ErrNotFound) {
		t.Errorf("owner's oldest entry not evicted past its share: %v", err)
	}
	if _, err := s.Get(ctx, "a", second); err != nil {
		t.Errorf("newest entry: %v", err)
	}
	// b and c fill the rest; d finds the store full of others' live data.
	for _, o := range []string{"b", "c"} {
		if _, err := s.Put(ctx, o, make([]byte, 35)); err != nil {
			t.Fatalf("Put for %s: %v", o, err)
		}
	}
	if _, err := s.Put(ctx, "d", make([]byte, 10)); !errors.Is(err, resultstore.ErrFull) {
		t.Errorf("Put into a store full of others' results: err %v, want ErrFull", err)
	}
	if _, err := s.Get(ctx, "a", second); err != nil {
		t.Errorf("another owner's Put evicted a's live entry: %v", err)
	}
}

func TestRedisTTL(t *testing.T) {
	ctx := context.Background()
	s := newRedis(t, resultstore.Limits{TTL: 50 * time.Millisecond, MaxBytes: 100, OwnerBytes: 100})
	id, err := s.Put(ctx, "a", make([]byte, 60))
	if err != nil {
		t.Fatal(err)
	}
	// Redis expires the entry itself and tells no one: ask until it is gone.
	testutil.Eventually(t, 10*time.Second, func() bool {
		_, err := s.Get(ctx, "a", id)
		return errors.Is(err, resultstore.ErrNotFound)
	}, "the entry to expire (TTL 50 ms)")
	// Its bytes are released: another owner can use the whole store.
	if _, err := s.Put(ctx, "b", make([]byte, 100)); err != nil {
		t.Errorf("expired bytes still counted: %v", err)
	}
}

func TestRedisRestart(t *testing.T) {
	ctx := context.Background()
	s := newRedis(t, resultstore.Limits{})
	if _, err := s.Put(ctx, "a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	redisServer.Kill()
	_, err := s.Put(ctx, "a", []byte("y"))
	if err == nil || !strings.Contains(err.Error(), "result store (redis") {
		t.Errorf("Put with Redis down: err %v, want one naming the result store", err)
	}
	if err := redisServer.Restart(); err != nil {
		t.Fatal(err)
	}
	id, err := s.Put(ctx, "a", []byte("z"))
	if err != nil {
		t.Fatalf("Put after Redis came back: %v", err)
	}
	if got, err := s.Get(ctx, "a", id); err != nil || string(got) != "z" {
		t.Errorf("Get after restart = %q, %v", got, err)
	}
}

// BenchmarkRedisPutGet100KB is the Redis store's cost for one 100 KB
// result: a Put and a Get, on a loopback redis-server.
func BenchmarkRedisPutGet100KB(b *testing.B) {
	ctx := context.Background()
	s := newRedis(b, resultstore.Limits{MaxBytes: 1 << 30, OwnerBytes: 1 << 30})
	data := bytes.Repeat([]byte(`{"k":"0123456789"},`), 100_000/19)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		id, err := s.Put(ctx, "bench", data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Get(ctx, "bench", id); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRedisShareIsPerPrincipal: one principal's sessions share its budget
// on Redis too (see principalSessions).
func TestRedisShareIsPerPrincipal(t *testing.T) {
	resultstore.PrincipalSessions(t, newRedis(t, resultstore.Limits{TTL: time.Minute, MaxBytes: 300, OwnerBytes: 100}))
}
