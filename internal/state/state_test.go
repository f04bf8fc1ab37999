package state_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/kv"
	"github.com/isogate/isogate/internal/resultstore/redistest"
	"github.com/isogate/isogate/internal/state"
	"github.com/isogate/isogate/v8sandbox"
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

// newRedis is a store on the shared server under a prefix of the test's
// own: each call a client of its own (a replica).
func newRedis(t *testing.T, prefix string) kv.Store {
	t.Helper()
	s, err := kv.NewRedis(kv.RedisOptions{URL: redisServer.URL(), Prefix: prefix, HMACKey: []byte("0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// stores are two handles on one store of each kind: a real bbolt file
// opened twice, two Redis clients (two replicas) on a real redis-server,
// and memory.
func stores(t *testing.T) map[string][2]kv.Store {
	t.Helper()
	dir := t.TempDir()
	open := func() kv.Store {
		s, err := kv.OpenBolt(kv.BoltOptions{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	m := kv.NewMemory()
	out := map[string][2]kv.Store{"memory": {m, m}, "bolt": {open(), open()}}
	if redisServer != nil {
		p := fmt.Sprintf("{statetest-%s-%d}:", t.Name(), time.Now().UnixNano())
		out["redis"] = [2]kv.Store{newRedis(t, p), newRedis(t, p)}
	} else {
		t.Logf("Redis stores skipped: %v", redisSkip)
	}
	return out
}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newState(t *testing.T, s kv.Store, o state.Options) *state.State {
	t.Helper()
	o.Store = s
	st, err := state.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func codeOf(err error) v8sandbox.Code {
	var he *v8sandbox.HostError
	if errors.As(err, &he) {
		return he.Code
	}
	return ""
}

func get(t *testing.T, st *state.State, owner, key string) string {
	t.Helper()
	v, ok, err := st.Get(context.Background(), owner, key)
	if err != nil {
		t.Fatalf("get %s/%s: %v", owner, key, err)
	}
	if !ok {
		return "<absent>"
	}
	return string(v)
}

// TestStateKeptAndCounted: values set through one handle are read through
// the other (a second open of the file, a second replica), overwrites and
// deletes keep the usage exact, and listing is ordered and paged.
func TestStateKeptAndCounted(t *testing.T) {
	ctx := context.Background()
	for name, pair := range stores(t) {
		t.Run(name, func(t *testing.T) {
			a, b := newState(t, pair[0], state.Options{}), newState(t, pair[1], state.Options{})
			for _, k := range []string{"b", "a/1", "a/2", "c"} {
				if err := a.Set(ctx, "alice", k, json.RawMessage(`{"n":1}`), 0); err != nil {
					t.Fatal(err)
				}
			}
			if err := a.Set(ctx, "alice", "c", json.RawMessage(`[1,2,3]`), 0); err != nil {
				t.Fatal(err)
			}
			if got := get(t, b, "alice", "c"); got != `[1,2,3]` {
				t.Fatalf("c through the other handle: %s", got)
			}
			keys, bytes, err := b.Usage(ctx, "alice")
			if want := 3*(len(`{"n":1}`)) + 1 + 3 + 3 + 1 + len(`[1,2,3]`); err != nil || keys != 4 || bytes != want {
				t.Fatalf("usage: %d keys, %d bytes, %v; want 4, %d", keys, bytes, err, want)
			}
			existed, err := b.Delete(ctx, "alice", "b")
			if err != nil || !existed {
				t.Fatalf("delete b: %v %v", existed, err)
			}
			if existed, err := b.Delete(ctx, "alice", "b"); err != nil || existed {
				t.Fatalf("delete b again: %v %v", existed, err)
			}
			if keys, _, _ := a.Usage(ctx, "alice"); keys != 3 {
				t.Fatalf("usage after delete: %d keys", keys)
			}
			list, err := a.List(ctx, "alice", state.ListOptions{})
			if err != nil || !slices.Equal(list, []string{"a/1", "a/2", "c"}) {
				t.Fatalf("list: %q %v", list, err)
			}
			list, _ = a.List(ctx, "alice", state.ListOptions{Prefix: "a/", Limit: 1})
			page2, _ := a.List(ctx, "alice", state.ListOptions{Prefix: "a/", After: list[0]})
			if !slices.Equal(list, []string{"a/1"}) || !slices.Equal(page2, []string{"a/2"}) {
				t.Fatalf("pages: %q then %q", list, page2)
			}
		})
	}
}

// TestQuotasRefusedWithTheirCode: a write past max_keys or max_bytes fails
// with STATE_QUOTA_EXCEEDED and writes nothing; overwriting a key or
// deleting one frees what it held.
func TestQuotasRefusedWithTheirCode(t *testing.T) {
	ctx := context.Background()
	for name, pair := range stores(t) {
		t.Run(name, func(t *testing.T) {
			refused := 0
			st := newState(t, pair[0], state.Options{MaxKeys: 3, MaxBytes: 40, OnRefused: func() { refused++ }})
			for i := range 3 {
				if err := st.Set(ctx, "alice", fmt.Sprint("k", i), json.RawMessage(`1`), 0); err != nil {
					t.Fatal(err)
				}
			}
			err := st.Set(ctx, "alice", "k3", json.RawMessage(`1`), 0)
			if codeOf(err) != state.CodeQuotaExceeded {
				t.Fatalf("a fourth key: %v, want %s", err, state.CodeQuotaExceeded)
			}
			if got := get(t, st, "alice", "k3"); got != "<absent>" {
				t.Fatalf("refused key stored: %s", got)
			}
			// Overwriting an existing key is no new key.
			if err := st.Set(ctx, "alice", "k0", json.RawMessage(`"0123456789"`), 0); err != nil {
				t.Fatalf("overwrite at max_keys: %v", err)
			}
			// 2+1, 2+1, 2+12 = 20 bytes: 21 more pass 40.
			err = st.Set(ctx, "alice", "k1", json.RawMessage(`"01234567890123456789"`), 0)
			if codeOf(err) != state.CodeQuotaExceeded {
				t.Fatalf("past max_bytes: %v", err)
			}
			if got := get(t, st, "alice", "k1"); got != "1" {
				t.Fatalf("k1 after a refused overwrite: %s", got)
			}
			if err := st.Set(ctx, "alice", "big", json.RawMessage(`"`+string(make([]byte, 0))+`0123456789012345678901234567890123456789"`), 0); codeOf(err) != state.CodeQuotaExceeded {
				t.Fatalf("a value larger than max_bytes: %v", err)
			}
			if _, err := st.Delete(ctx, "alice", "k2"); err != nil {
				t.Fatal(err)
			}
			if err := st.Set(ctx, "alice", "k3", json.RawMessage(`1`), 0); err != nil {
				t.Fatalf("after a delete: %v", err)
			}
			if refused != 3 {
				t.Errorf("OnRefused told of %d refusals, want 3", refused)
			}
			// Another principal has quotas of its own.
			if err := st.Set(ctx, "bob", "k9", json.RawMessage(`1`), 0); err != nil {
				t.Fatalf("bob: %v", err)
			}
		})
	}
}

// TestTTLFollowsTheClock: with an injected clock (no sleep), a key with a
// TTL is there until its time and absent from then on, to get, list and
// the quotas; state.max_ttl bounds keys set without one.
func TestTTLFollowsTheClock(t *testing.T) {
	ctx := context.Background()
	for name, pair := range stores(t) {
		t.Run(name, func(t *testing.T) {
			c := &clock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
			st := newState(t, pair[0], state.Options{MaxKeys: 2, Now: c.now})
			other := newState(t, pair[1], state.Options{MaxKeys: 2, Now: c.now})
			if err := st.Set(ctx, "alice", "session", json.RawMessage(`"s"`), time.Minute); err != nil {
				t.Fatal(err)
			}
			if err := st.Set(ctx, "alice", "kept", json.RawMessage(`"k"`), 0); err != nil {
				t.Fatal(err)
			}
			c.advance(time.Minute - time.Millisecond)
			if got := get(t, other, "alice", "session"); got != `"s"` {
				t.Fatalf("before its time: %s", got)
			}
			if err := other.Set(ctx, "alice", "third", json.RawMessage(`1`), 0); codeOf(err) != state.CodeQuotaExceeded {
				t.Fatalf("a third key while session lives: %v", err)
			}
			c.advance(time.Millisecond)
			if got := get(t, other, "alice", "session"); got != "<absent>" {
				t.Fatalf("at its time: %s", got)
			}
			if list, _ := other.List(ctx, "alice", state.ListOptions{}); !slices.Equal(list, []string{"kept"}) {
				t.Fatalf("list after expiry: %q", list)
			}
			if err := other.Set(ctx, "alice", "third", json.RawMessage(`1`), 0); err != nil {
				t.Fatalf("the expired key still counts: %v", err)
			}
			if keys, bytes, _ := other.Usage(ctx, "alice"); keys != 2 || bytes != len("kept")+3+len("third")+1 {
				t.Fatalf("usage: %d keys %d bytes", keys, bytes)
			}

			bounded := newState(t, pair[0], state.Options{MaxTTL: time.Hour, Now: c.now})
			if err := bounded.Set(ctx, "carol", "forever", json.RawMessage(`1`), 0); err != nil {
				t.Fatal(err)
			}
			if err := bounded.Set(ctx, "carol", "long", json.RawMessage(`1`), 48*time.Hour); err != nil {
				t.Fatal(err)
			}
			c.advance(time.Hour)
			if a, b := get(t, bounded, "carol", "forever"), get(t, bounded, "carol", "long"); a != "<absent>" || b != "<absent>" {
				t.Fatalf("past state.max_ttl: %s %s", a, b)
			}
		})
	}
}

// TestPrincipalsNeverMeet (attack): mallory's keys name bob's in every way
// a key could (separators, "..", the store's own key prefixes, a principal
// whose name extends bob's); whatever mallory writes, bob reads, lists and
// counts only his own, and the other way round.
func TestPrincipalsNeverMeet(t *testing.T) {
	ctx := context.Background()
	hostile := []string{"x", "../bob/x", "/state/bob/x", "bob/x", "k:x", "u", "..", "state/bob", "bob\\x", "%2e%2e/bob/x", "*", "x\u202e"}
	for name, pair := range stores(t) {
		t.Run(name, func(t *testing.T) {
			st := newState(t, pair[0], state.Options{MaxKeys: 20})
			other := newState(t, pair[1], state.Options{MaxKeys: 20})
			if err := other.Set(ctx, "bob", "x", json.RawMessage(`"bob's"`), 0); err != nil {
				t.Fatal(err)
			}
			for _, owner := range []string{"mallory", "bob/..", "bob/x", "bo", "bob "} {
				for _, k := range hostile {
					if err := st.Set(ctx, owner, k, json.RawMessage(`"`+owner+`'s"`), 0); err != nil {
						t.Fatalf("%s sets %q: %v", owner, k, err)
					}
				}
				if _, err := st.Delete(ctx, owner, "x"); err != nil {
					t.Fatal(err)
				}
			}
			if got := get(t, other, "bob", "x"); got != `"bob's"` {
				t.Fatalf("bob's x: %s", got)
			}
			for _, k := range hostile[1:] {
				if got := get(t, other, "bob", k); got != "<absent>" {
					t.Fatalf("bob reads %q: %s", k, got)
				}
			}
			if list, err := other.List(ctx, "bob", state.ListOptions{}); err != nil || !slices.Equal(list, []string{"x"}) {
				t.Fatalf("bob lists %q %v", list, err)
			}
			if keys, _, _ := other.Usage(ctx, "bob"); keys != 1 {
				t.Fatalf("bob's usage counts %d keys", keys)
			}
			list, _ := st.List(ctx, "mallory", state.ListOptions{})
			if len(list) != len(hostile)-1 || slices.Contains(list, "x") {
				t.Fatalf("mallory lists %q", list)
			}
		})
	}
}

// TestReplicasNeverPassAQuota: two replicas (two Redis clients; two opens
// of one bbolt file) writing different keys of one principal at once keep
// it within max_keys: every write is refused or counted.
func TestReplicasNeverPassAQuota(t *testing.T) {
	ctx := context.Background()
	for name, pair := range stores(t) {
		t.Run(name, func(t *testing.T) {
			const max = 10
			var wg sync.WaitGroup
			var mu sync.Mutex
			stored := 0
			for r := range 2 {
				st := newState(t, pair[r], state.Options{MaxKeys: max})
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range max {
						err := st.Set(ctx, "alice", fmt.Sprintf("r%d-%d", r, i), json.RawMessage(`1`), 0)
						switch {
						case err == nil:
							mu.Lock()
							stored++
							mu.Unlock()
						case codeOf(err) != state.CodeQuotaExceeded && codeOf(err) != state.CodeUnavailable:
							t.Errorf("set: %v", err)
						}
					}
				}()
			}
			wg.Wait()
			st := newState(t, pair[0], state.Options{MaxKeys: max})
			list, _ := st.List(ctx, "alice", state.ListOptions{})
			keys, _, _ := st.Usage(ctx, "alice")
			if len(list) != stored || keys != stored || stored > max || stored < max-1 {
				t.Fatalf("%d writes succeeded, %d keys listed, %d counted; max %d", stored, len(list), keys, max)
			}
		})
	}
}

// TestStoreDownIsRetryable: a closed bbolt file and a stopped redis-server
// fail every call with STORE_UNAVAILABLE, never as an absent key.
func TestStoreDownIsRetryable(t *testing.T) {
	ctx := context.Background()
	check := func(t *testing.T, st *state.State) {
		t.Helper()
		if _, _, err := st.Get(ctx, "alice", "k"); codeOf(err) != state.CodeUnavailable {
			t.Errorf("get: %v", err)
		}
		if err := st.Set(ctx, "alice", "k", json.RawMessage(`1`), 0); codeOf(err) != state.CodeUnavailable {
			t.Errorf("set: %v", err)
		}
		if _, err := st.Delete(ctx, "alice", "k"); codeOf(err) != state.CodeUnavailable {
			t.Errorf("delete: %v", err)
		}
		if _, err := st.List(ctx, "alice", state.ListOptions{}); codeOf(err) != state.CodeUnavailable {
			t.Errorf("list: %v", err)
		}
	}
	t.Run("bolt", func(t *testing.T) {
		b, err := kv.OpenBolt(kv.BoltOptions{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		st := newState(t, b, state.Options{})
		if err := st.Set(ctx, "alice", "k", json.RawMessage(`1`), 0); err != nil {
			t.Fatal(err)
		}
		b.Close()
		check(t, st)
	})
	t.Run("redis", func(t *testing.T) {
		srv := redistest.ForTest(t)
		r, err := kv.NewRedis(kv.RedisOptions{URL: srv.URL()})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		st := newState(t, r, state.Options{})
		if err := st.Set(ctx, "alice", "k", json.RawMessage(`1`), 0); err != nil {
			t.Fatal(err)
		}
		srv.Kill()
		check(t, st)
	})
}

// TestCallFromPrograms: the bridge's calls by their JSON arguments, under
// the principal of the context; bad arguments are STATE_INVALID.
func TestCallFromPrograms(t *testing.T) {
	st := newState(t, kv.NewMemory(), state.Options{})
	alice := authn.WithPrincipal(context.Background(), &authn.Principal{Name: "alice"})
	anon := context.Background()
	call := func(ctx context.Context, op, args string) (string, error) {
		v, err := st.Call(ctx, op, json.RawMessage(args))
		return string(v), err
	}
	for _, c := range []struct {
		ctx           context.Context
		op, args, out string
		code          v8sandbox.Code
	}{
		{alice, "get", `{"key":"n"}`, "", ""},
		{alice, "set", `{"key":"n","value":{"a":[1,"x"]},"ttl":60}`, "", ""},
		{alice, "get", `{"key":"n"}`, `{"a":[1,"x"]}`, ""},
		{anon, "get", `{"key":"n"}`, "", ""},
		{anon, "set", `{"key":"n","value":null}`, "", ""},
		{anon, "get", `{"key":"n"}`, "null", ""},
		{alice, "list", `{}`, `["n"]`, ""},
		{alice, "delete", `{"key":"n"}`, "true", ""},
		{alice, "delete", `{"key":"n"}`, "false", ""},
		{alice, "set", `{"key":"n"}`, "", state.CodeInvalid},
		{alice, "set", `{"key":"n","value":1,"ttl":0}`, "", state.CodeInvalid},
		{alice, "set", `{"key":"n","value":1,"ttl":-1}`, "", state.CodeInvalid},
		{alice, "set", `{"key":"","value":1}`, "", state.CodeInvalid},
		{alice, "set", `{"key":"a\u0000b","value":1}`, "", state.CodeInvalid},
		{alice, "get", `{"key":5}`, "", state.CodeInvalid},
		{alice, "get", `{}`, "", state.CodeInvalid},
		{alice, "get", `{"key":"n","owner":"bob"}`, "", state.CodeInvalid},
		{alice, "list", `{"limit":1.5}`, "", state.CodeInvalid},
		{alice, "incr", `{"key":"n"}`, "", state.CodeInvalid},
	} {
		out, err := call(c.ctx, c.op, c.args)
		if out != c.out || codeOf(err) != c.code || (c.code == "" && err != nil) {
			t.Errorf("%s(%s): %q %v; want %q code %q", c.op, c.args, out, err, c.out, c.code)
		}
	}
}
