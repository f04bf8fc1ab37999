package kv_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/isogate/isogate/internal/kv"
	"github.com/isogate/isogate/internal/resultstore/redistest"
)

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

// redisPrefix gives each test its own keys on the shared server.
func redisPrefix(t testing.TB) string {
	return fmt.Sprintf("{kvtest-%s-%d}:", t.Name(), time.Now().UnixNano())
}

// newRedis returns a store on the shared server under prefix.
func newRedis(t testing.TB, prefix string) *kv.Redis {
	t.Helper()
	if redisServer == nil {
		t.Skipf("Redis store tests skipped: %v", redisSkip)
	}
	s, err := kv.NewRedis(kv.RedisOptions{URL: redisServer.URL(), Prefix: prefix, HMACKey: []byte("0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newBolt(t testing.TB, dir string) *kv.Bolt {
	t.Helper()
	s, err := kv.OpenBolt(kv.BoltOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// stores returns two handles on one store of each kind: for Redis two
// clients (two replicas), for bbolt two opens of one directory.
func stores(t *testing.T) map[string][2]kv.Store {
	m := kv.NewMemory()
	dir := t.TempDir()
	out := map[string][2]kv.Store{
		"memory": {m, m},
		"bolt":   {newBolt(t, dir), newBolt(t, dir)},
	}
	if redisServer != nil {
		p := redisPrefix(t)
		out["redis"] = [2]kv.Store{newRedis(t, p), newRedis(t, p)}
	}
	return out
}

func TestContract(t *testing.T) {
	for name, pair := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			a, b := pair[0], pair[1]
			if _, err := a.Get(ctx, "ns", "k"); !errors.Is(err, kv.ErrNotFound) {
				t.Fatalf("absent key: %v, want ErrNotFound", err)
			}
			if err := a.Put(ctx, "ns", "k", []byte("v1"), 0); err != nil {
				t.Fatal(err)
			}
			if got, err := b.Get(ctx, "ns", "k"); err != nil || string(got) != "v1" {
				t.Fatalf("other handle reads %q, %v; want v1", got, err)
			}
			if _, err := b.Get(ctx, "other", "k"); !errors.Is(err, kv.ErrNotFound) {
				t.Fatalf("namespaces are apart: %v", err)
			}
			for i := range 30 {
				if err := a.Put(ctx, "list", fmt.Sprintf("p/%02d", i), []byte(strconv.Itoa(i)), 0); err != nil {
					t.Fatal(err)
				}
			}
			for _, k := range []string{"p", "o/1", "q/1", "p0"} {
				if err := a.Put(ctx, "list", k, []byte("x"), 0); err != nil {
					t.Fatal(err)
				}
			}
			// Ordered, bounded, by prefix, in pages.
			var keys []string
			after := ""
			for {
				page, err := b.List(ctx, "list", kv.ListOptions{Prefix: "p/", After: after, Limit: 7})
				if err != nil {
					t.Fatal(err)
				}
				if len(page) > 7 {
					t.Fatalf("page of %d entries over its limit 7", len(page))
				}
				for _, e := range page {
					keys = append(keys, e.Key)
					if want := fmt.Sprintf("p/%02s", e.Value); e.Key != want {
						t.Fatalf("entry %s holds %q", e.Key, e.Value)
					}
				}
				if len(page) < 7 {
					break
				}
				after = page[len(page)-1].Key
			}
			if len(keys) != 30 {
				t.Fatalf("listed %d keys under p/, want 30: %v", len(keys), keys)
			}
			for i, k := range keys {
				if k != fmt.Sprintf("p/%02d", i) {
					t.Fatalf("key %d is %s: not in order", i, k)
				}
			}
			all, err := b.List(ctx, "list", kv.ListOptions{})
			if err != nil || len(all) != 34 || all[0].Key != "o/1" || all[33].Key != "q/1" {
				t.Fatalf("whole namespace: %d entries, %v", len(all), err)
			}
			if err := b.Delete(ctx, "list", "p/03"); err != nil {
				t.Fatal(err)
			}
			if err := b.Delete(ctx, "list", "never"); err != nil {
				t.Fatalf("deleting an absent key: %v", err)
			}
			if page, _ := a.List(ctx, "list", kv.ListOptions{Prefix: "p/0", Limit: 4}); len(page) != 4 || page[3].Key != "p/04" {
				t.Fatalf("after delete: %v", page)
			}
			if _, err := a.Get(ctx, "list", "p/03"); !errors.Is(err, kv.ErrNotFound) {
				t.Fatalf("deleted key: %v", err)
			}
			// Update: fn sees what exists, writes and deletes atomically.
			err = a.Update(ctx, "ns", []string{"k", "n"}, func(cur map[string][]byte) ([]kv.Change, error) {
				if string(cur["k"]) != "v1" || cur["n"] != nil {
					return nil, fmt.Errorf("update read %q", cur)
				}
				return []kv.Change{{Key: "n", Value: []byte("1")}, {Key: "k", Delete: true}}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := b.Get(ctx, "ns", "n"); string(got) != "1" {
				t.Fatalf("update wrote %q", got)
			}
			if _, err := b.Get(ctx, "ns", "k"); !errors.Is(err, kv.ErrNotFound) {
				t.Fatalf("update's delete: %v", err)
			}
			boom := errors.New("refused")
			err = a.Update(ctx, "ns", []string{"n"}, func(map[string][]byte) ([]kv.Change, error) {
				return []kv.Change{{Key: "n", Value: []byte("2")}}, boom
			})
			if !errors.Is(err, boom) {
				t.Fatalf("fn's error: %v", err)
			}
			err = a.Update(ctx, "ns", []string{"n"}, func(map[string][]byte) ([]kv.Change, error) {
				return []kv.Change{{Key: "elsewhere", Value: []byte("2")}}, nil
			})
			if !errors.Is(err, kv.ErrInvalid) {
				t.Fatalf("a change to a key not read: %v", err)
			}
			if got, _ := b.Get(ctx, "ns", "n"); string(got) != "1" {
				t.Fatalf("a refused update wrote: %q", got)
			}
			if err := a.Put(ctx, "", "k", nil, 0); !errors.Is(err, kv.ErrInvalid) {
				t.Fatalf("empty namespace: %v", err)
			}
			if err := a.Put(ctx, "ns", "a\x00b", nil, 0); !errors.Is(err, kv.ErrInvalid) {
				t.Fatalf("NUL in key: %v", err)
			}
		})
	}
}

// TestUpdateIsAtomic: concurrent increments through two handles (two
// replicas on Redis) lose none.
func TestUpdateIsAtomic(t *testing.T) {
	for name, pair := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			const workers, each = 6, 40
			var wg sync.WaitGroup
			errs := make(chan error, workers)
			for w := range workers {
				wg.Go(func() {
					s := pair[w%2]
					for range each {
						err := s.Update(ctx, "count", []string{"n"}, func(cur map[string][]byte) ([]kv.Change, error) {
							n, _ := strconv.Atoi(string(cur["n"]))
							return []kv.Change{{Key: "n", Value: []byte(strconv.Itoa(n + 1))}}, nil
						})
						if err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			got, err := pair[0].Get(ctx, "count", "n")
			if err != nil || string(got) != strconv.Itoa(workers*each) {
				t.Fatalf("counter %q, %v; want %d", got, err, workers*each)
			}
		})
	}
}

// waitAbsent polls until key is gone: expiry is the clock's business.
func waitAbsent(t *testing.T, s kv.Store, ns, key string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := s.Get(context.Background(), ns, key)
		if errors.Is(err, kv.ErrNotFound) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/%s has not expired", ns, key)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestTTL(t *testing.T) {
	for name, pair := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := pair[0]
			if err := s.Put(ctx, "t", "short", []byte("x"), 20*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			if err := s.Put(ctx, "t", "long", []byte("y"), time.Hour); err != nil {
				t.Fatal(err)
			}
			if err := s.Put(ctx, "t", "kept", []byte("z"), 0); err != nil {
				t.Fatal(err)
			}
			waitAbsent(t, s, "t", "short")
			list, err := s.List(ctx, "t", kv.ListOptions{})
			if err != nil || len(list) != 2 || list[0].Key != "kept" || list[1].Key != "long" {
				t.Fatalf("after expiry the listing is %v, %v", list, err)
			}
			err = s.Update(ctx, "t", []string{"short"}, func(cur map[string][]byte) ([]kv.Change, error) {
				if _, ok := cur["short"]; ok {
					return nil, errors.New("update sees an expired key")
				}
				return nil, nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestBoltSweepRemovesExpired: the periodic sweep deletes expired entries
// from the file, not just hides them.
func TestBoltSweepRemovesExpired(t *testing.T) {
	s := newBolt(t, t.TempDir())
	ctx := context.Background()
	for i := range 5 {
		if err := s.Put(ctx, "t", fmt.Sprint(i), []byte("x"), 10*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Put(ctx, "t", "kept", []byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		waitAbsent(t, s, "t", fmt.Sprint(i))
	}
	n, err := s.Sweep()
	if err != nil || n != 5 {
		t.Fatalf("sweep removed %d, %v; want 5", n, err)
	}
	if n, _ := s.Sweep(); n != 0 {
		t.Fatalf("second sweep removed %d", n)
	}
}

// TestBoltOutlivesTheProcessHandle: data written, the file closed and
// opened again (a restart) is still there.
func TestBoltOutlivesTheProcessHandle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "created", "on", "first", "use")
	ctx := context.Background()
	s, err := kv.OpenBolt(kv.BoltOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "programs", "alice/hello", []byte("code"), 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, kv.BoltFile)); err != nil {
		t.Fatal(err)
	}
	s2 := newBolt(t, dir)
	if got, err := s2.Get(ctx, "programs", "alice/hello"); err != nil || string(got) != "code" {
		t.Fatalf("after reopening: %q, %v", got, err)
	}
}

// TestBoltClosedOrHeldIsUnavailable: a file another process holds, and a
// closed store, fail with ErrUnavailable, never as not found.
func TestBoltClosedOrHeldIsUnavailable(t *testing.T) {
	dir := t.TempDir()
	// Another holder of the file's lock (bbolt's flock, as another
	// isogate process would hold it).
	other, err := bolt.Open(filepath.Join(dir, kv.BoltFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = kv.OpenBolt(kv.BoltOptions{Dir: dir, OpenTimeout: 50 * time.Millisecond})
	if !errors.Is(err, kv.ErrUnavailable) {
		t.Fatalf("held file: %v, want ErrUnavailable", err)
	}
	other.Close()

	s, err := kv.OpenBolt(kv.BoltOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Put(ctx, "ns", "k", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	s.Close()
	checkUnavailable(t, s)
}

// checkUnavailable asserts that every method of s fails with ErrUnavailable.
func checkUnavailable(t *testing.T, s kv.Store) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Get(ctx, "ns", "k"); !errors.Is(err, kv.ErrUnavailable) || errors.Is(err, kv.ErrNotFound) {
		t.Errorf("Get: %v, want ErrUnavailable", err)
	}
	if err := s.Put(ctx, "ns", "k", []byte("v"), 0); !errors.Is(err, kv.ErrUnavailable) {
		t.Errorf("Put: %v, want ErrUnavailable", err)
	}
	if err := s.Delete(ctx, "ns", "k"); !errors.Is(err, kv.ErrUnavailable) {
		t.Errorf("Delete: %v, want ErrUnavailable", err)
	}
	if _, err := s.List(ctx, "ns", kv.ListOptions{}); !errors.Is(err, kv.ErrUnavailable) {
		t.Errorf("List: %v, want ErrUnavailable", err)
	}
	called := false
	err := s.Update(ctx, "ns", []string{"k"}, func(map[string][]byte) ([]kv.Change, error) {
		called = true
		return nil, nil
	})
	if !errors.Is(err, kv.ErrUnavailable) || called {
		t.Errorf("Update: %v (fn called: %v), want ErrUnavailable without calling fn", err, called)
	}
}

// TestRedisDownIsUnavailable: with its server gone, every operation fails
// with ErrUnavailable; once it is back the store works again.
func TestRedisDownIsUnavailable(t *testing.T) {
	srv := redistest.ForTest(t)
	s, err := kv.NewRedis(kv.RedisOptions{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.Put(ctx, "ns", "k", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	checkUnavailable(t, s)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "ns", "k", []byte("v"), 0); err != nil {
		t.Fatalf("after the server came back: %v", err)
	}
}

// TestRedisRefusesPlantedValues: with store.hmac_key, a value written by
// anything else that reaches Redis reads as absent.
func TestRedisRefusesPlantedValues(t *testing.T) {
	p := redisPrefix(t)
	s := newRedis(t, p)
	plain, err := kv.NewRedis(kv.RedisOptions{URL: redisServer.URL(), Prefix: p})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	ctx := context.Background()
	if err := plain.Put(ctx, "programs", "alice/x", []byte("planted"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "programs", "alice/x"); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("planted value: %v, want ErrNotFound", err)
	}
	if l, _ := s.List(ctx, "programs", kv.ListOptions{}); len(l) != 0 {
		t.Fatalf("planted value listed: %v", l)
	}
}

// TestLazyCreatesOnWriteOnly: reads of a store not created yet answer
// empty without creating it; the first write creates it.
func TestLazyCreatesOnWriteOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	exists := func() bool { _, err := os.Stat(filepath.Join(dir, kv.BoltFile)); return err == nil }
	l := kv.NewLazy(func() (kv.Store, error) { return kv.OpenBolt(kv.BoltOptions{Dir: dir}) }, exists)
	defer l.Close()
	ctx := context.Background()
	if _, err := l.Get(ctx, "ns", "k"); !errors.Is(err, kv.ErrNotFound) {
		t.Fatal(err)
	}
	if list, err := l.List(ctx, "ns", kv.ListOptions{}); err != nil || len(list) != 0 {
		t.Fatal(list, err)
	}
	if exists() {
		t.Fatal("a read created the store")
	}
	if err := l.Put(ctx, "ns", "k", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	if got, err := l.Get(ctx, "ns", "k"); !exists() || err != nil || string(got) != "v" {
		t.Fatalf("after the first write: %q, %v", got, err)
	}
}
