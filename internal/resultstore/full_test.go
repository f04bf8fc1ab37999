package resultstore_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/resultstore"
)

// storeFull fills s with alice's entries and checks that bob's entry is
// refused with the typed, retryable STORE_FULL (never stored in part,
// never evicting alice's), counted once by the store's OnFull hook.
func storeFull(t *testing.T, s resultstore.Store, refusals *atomic.Int64) {
	t.Helper()
	ctx := context.Background()
	var alice []string
	for range 3 {
		id, err := s.Put(ctx, "principal:alice", []byte(strings.Repeat("a", 90)))
		if err != nil {
			t.Fatal(err)
		}
		alice = append(alice, id)
	}
	_, err := s.Put(ctx, "principal:bob", []byte(strings.Repeat("b", 90)))
	if !errors.Is(err, resultstore.ErrFull) || !strings.HasPrefix(err.Error(), resultstore.CodeStoreFull+":") &&
		!strings.Contains(err.Error(), ": "+resultstore.CodeStoreFull+":") {
		t.Fatalf("Put into a full store: %v, want a %s refusal", err, resultstore.CodeStoreFull)
	}
	if n := refusals.Load(); n != 1 {
		t.Fatalf("%d refusals counted, want 1", n)
	}
	for _, id := range alice {
		if _, err := s.Get(ctx, "principal:alice", id); err != nil {
			t.Fatalf("alice's entry gone after bob's refusal: %v", err)
		}
	}
}

func TestMemoryFullIsTyped(t *testing.T) {
	var n atomic.Int64
	storeFull(t, resultstore.NewMemory(resultstore.Limits{TTL: time.Minute, MaxBytes: 270, OwnerBytes: 270},
		resultstore.CountDataOnly(), resultstore.WithOnFull(func() { n.Add(1) })), &n)
}

func TestRedisFullIsTyped(t *testing.T) {
	if redisServer == nil {
		t.Skipf("Redis store tests skipped: %v", redisSkip)
	}
	var n atomic.Int64
	s, err := resultstore.NewRedis(resultstore.RedisOptions{URL: redisServer.URL(), Prefix: "{test-full}:",
		Limits: resultstore.Limits{TTL: time.Minute, MaxBytes: 270, OwnerBytes: 270}, CountDataOnly: true,
		OnFull: func() { n.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storeFull(t, s, &n)
}
