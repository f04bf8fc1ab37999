package resultstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/resultstore"
)

// TestLeases: in memory and on a real Redis, a live lease is never taken;
// once it lapses, of eight replicas racing to take it exactly one gets its
// record; the former holder can no longer renew it (ErrLeaseLost) nor
// release it; the new holder renews and releases it; a tampered record is
// refused (ErrTampered) and dropped.
func TestLeases(t *testing.T) {
	key := []byte("lease-test-hmac-key-0123456789")
	for name, newLeases := range map[string]func(t *testing.T) (resultstore.Leases, func(id string)){
		"memory": func(*testing.T) (resultstore.Leases, func(string)) {
			return resultstore.NewMemoryLeases(key, nil), nil
		},
		"redis": func(t *testing.T) (resultstore.Leases, func(string)) {
			if redisServer == nil {
				t.Skipf("Redis store tests skipped: %v", redisSkip)
			}
			r, err := resultstore.NewRedis(resultstore.RedisOptions{URL: redisServer.URL(), HMACKey: key,
				Prefix: fmt.Sprintf("{test-%s-%d}:", t.Name(), time.Now().UnixNano())})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			l := resultstore.NewRedisLeases(r)
			return l, func(id string) { l.Client().HSet(context.Background(), l.LeaseKey(id), "d", "planted") }
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			l, tamper := newLeases(t)
			if err := l.Hold(ctx, "live", "a", []byte("rec-live"), time.Minute, time.Minute); err != nil {
				t.Fatal(err)
			}
			if err := l.Hold(ctx, "run", "a", []byte("rec-run"), time.Millisecond, time.Minute); err != nil {
				t.Fatal(err)
			}
			if _, err := l.Take(ctx, "live", "b", time.Minute); !errors.Is(err, resultstore.ErrNotFound) {
				t.Fatalf("a live lease was taken: %v", err)
			}
			// Wait for the lapse of 1 ms (a condition, not a sleep).
			deadline := time.Now().Add(10 * time.Second)
			for {
				ids, err := l.Lapsed(ctx, 10)
				if err != nil {
					t.Fatal(err)
				}
				if len(ids) == 1 && ids[0] == "run" {
					break
				}
				if len(ids) > 0 || time.Now().After(deadline) {
					t.Fatalf("lapsed: %v, want [run]", ids)
				}
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			var takers []string
			for i := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rec, err := l.Take(ctx, "run", fmt.Sprint("b", i), time.Minute)
					if err == nil {
						mu.Lock()
						takers = append(takers, fmt.Sprint("b", i))
						mu.Unlock()
						if string(rec) != "rec-run" {
							t.Errorf("record %q", rec)
						}
					} else if !errors.Is(err, resultstore.ErrNotFound) {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			if len(takers) != 1 {
				t.Fatalf("takers of one lapsed lease: %v, want exactly one", takers)
			}
			if err := l.Renew(ctx, "run", "a", time.Minute); !errors.Is(err, resultstore.ErrLeaseLost) {
				t.Errorf("the former holder renewed: %v", err)
			}
			_ = l.Release(ctx, "run", "a")
			if err := l.Renew(ctx, "run", takers[0], time.Minute); err != nil {
				t.Errorf("the taker's renew: %v", err)
			}
			if ids, _ := l.Lapsed(ctx, 10); len(ids) != 0 {
				t.Errorf("lapsed after the take: %v", ids)
			}
			if err := l.Release(ctx, "run", takers[0]); err != nil {
				t.Fatal(err)
			}
			if err := l.Renew(ctx, "run", takers[0], time.Minute); !errors.Is(err, resultstore.ErrLeaseLost) {
				t.Errorf("renewed after the release: %v", err)
			}
			if tamper != nil {
				if err := l.Hold(ctx, "bad", "a", []byte("rec"), time.Millisecond, time.Minute); err != nil {
					t.Fatal(err)
				}
				tamper("bad")
				for {
					_, err := l.Take(ctx, "bad", "b", time.Minute)
					if errors.Is(err, resultstore.ErrTampered) {
						break
					}
					if !errors.Is(err, resultstore.ErrNotFound) || time.Now().After(deadline) {
						t.Fatalf("take of a tampered record: %v, want ErrTampered", err)
					}
				}
				if ids, _ := l.Lapsed(ctx, 10); len(ids) != 0 {
					t.Errorf("a tampered lease still listed: %v", ids)
				}
			}
		})
	}
}
