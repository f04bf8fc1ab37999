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

// TestUpdateHeld: on a real Redis, a task's state is written through
// UpdateHeld only while the writer holds the task's lease, in one step:
// once another replica took the lapsed lease over, the former holder's
// outcome is refused (ErrLeaseLost) and the task is unchanged; the new
// holder's is written.
func TestUpdateHeld(t *testing.T) {
	if redisServer == nil {
		t.Skipf("Redis store tests skipped: %v", redisSkip)
	}
	ctx := context.Background()
	r, err := resultstore.NewRedis(resultstore.RedisOptions{URL: redisServer.URL(), HMACKey: []byte("held-test-hmac-key-0123456789"),
		Prefix: fmt.Sprintf("{test-held-%d}:", time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	tasks, leases := resultstore.NewRedisTasks(r), resultstore.NewRedisLeases(r)
	now := time.Now()
	task := &resultstore.Task{ID: "t1", Owner: "alice", Status: resultstore.TaskWorking, CreatedAt: now, UpdatedAt: now, TTL: time.Minute}
	if err := tasks.Create(ctx, task, 8); err != nil {
		t.Fatal(err)
	}
	if err := leases.Hold(ctx, "t1", "a", []byte("rec"), time.Millisecond, time.Minute); err != nil {
		t.Fatal(err)
	}
	progress := *task
	progress.StatusMessage = "a's progress"
	if err := tasks.UpdateHeld(ctx, &progress, "a"); err != nil {
		t.Fatalf("the holder's write: %v", err)
	}
	// Take the lapsed lease (1 ms: a condition, not a sleep).
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := leases.Take(ctx, "t1", "b", time.Minute); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the lapsed lease was never taken: %v", err)
		}
	}
	late := *task
	late.Status, late.StatusMessage = resultstore.TaskCompleted, "a's late outcome"
	if err := tasks.UpdateHeld(ctx, &late, "a"); !errors.Is(err, resultstore.ErrLeaseLost) {
		t.Fatalf("the former holder's outcome: %v, want ErrLeaseLost", err)
	}
	if got, err := tasks.Get(ctx, "alice", "t1"); err != nil || got.Status != resultstore.TaskWorking || got.StatusMessage != "a's progress" {
		t.Fatalf("the task after the refused write: %+v %v", got, err)
	}
	mine := *task
	mine.Status, mine.StatusMessage = resultstore.TaskFailed, "b's outcome"
	if err := tasks.UpdateHeld(ctx, &mine, "b"); err != nil {
		t.Fatalf("the new holder's write: %v", err)
	}
	if got, err := tasks.Get(ctx, "alice", "t1"); err != nil || got.StatusMessage != "b's outcome" {
		t.Fatalf("the task after the new holder's write: %+v %v", got, err)
	}
}
