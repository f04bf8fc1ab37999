package resultstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/isogate/isogate/internal/resultstore"
)

// newRedisJournals is a journal store on the shared redis-server with its
// own key prefix.
func newRedisJournals(t *testing.T, key []byte, maxBytes int) *resultstore.RedisJournals {
	t.Helper()
	if redisServer == nil {
		t.Skipf("Redis store tests skipped: %v", redisSkip)
	}
	r, err := resultstore.NewRedisJournals(resultstore.RedisOptions{URL: redisServer.URL(), HMACKey: key,
		Prefix: fmt.Sprintf("{test-%s-%d}:", t.Name(), time.Now().UnixNano())}, maxBytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// writeJournal appends entries e0…e(n-1) in two appends, the last paused
// under "tok", and returns the cursor after them.
func writeJournal(t *testing.T, j resultstore.Journals, id string, n int) resultstore.JournalCursor {
	t.Helper()
	var entries [][]byte
	for i := range n {
		entries = append(entries, fmt.Appendf(nil, `{"e":%d}`, i))
	}
	ctx := context.Background()
	at, err := j.AppendJournal(ctx, "alice", id, "h1", "", resultstore.JournalCursor{}, entries[:n/2], time.Minute)
	if err == nil {
		at, err = j.AppendJournal(ctx, "alice", id, "h1", "tok", at, entries[n/2:], time.Minute)
	}
	if err != nil || at.N != n {
		t.Fatalf("appending %d entries: %v, cursor %+v", n, err, at)
	}
	return at
}

// TestRedisJournalChain: a journal appended to in Redis is read back whole
// (claim, take) with the cursor its writer holds; every change made in
// Redis without store.hmac_key is refused as ErrTampered: an entry
// rewritten, two entries swapped, one removed from the middle, the last
// one cut off (the tail seal says how many there were), an entry of
// another journal planted, and the tail of a shorter state of the same
// journal put back with it cut short to match.
func TestRedisJournalChain(t *testing.T) {
	ctx := context.Background()
	key := []byte("journal-test-hmac-key")
	j := newRedisJournals(t, key, 1<<20)
	at := writeJournal(t, j, "run", 6)
	entries, got, err := j.TakeJournal(ctx, "alice", "run", "h2")
	if err != nil || len(entries) != 6 || string(entries[5]) != `{"e":5}` || got != at {
		t.Fatalf("take: %v %q %+v (want cursor %+v)", err, entries, got, at)
	}
	// The taker appends on; the first writer is fenced off.
	if _, err := j.AppendJournal(ctx, "alice", "run", "h1", "", at, [][]byte{[]byte(`{"late":1}`)}, time.Minute); !errors.Is(err, resultstore.ErrFenced) {
		t.Fatalf("an append of the old holder: %v, want ErrFenced", err)
	}
	if at, err = j.AppendJournal(ctx, "alice", "run", "h2", "tok2", at, [][]byte{[]byte(`{"e":6}`)}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if entries, _, err = j.ClaimJournal(ctx, "alice", "run", "tok2", "h3"); err != nil || len(entries) != 7 {
		t.Fatalf("claim after the taker's append: %v %q", err, entries)
	}

	rdb := j.Client()
	list := j.JournalEntriesKey
	// tail of "short", a journal of 2 entries that later grows to 6: its
	// tail seal then was a valid one for that id.
	writeShort := func(id string) string {
		if _, err := j.AppendJournal(ctx, "alice", id, "h1", "", resultstore.JournalCursor{}, [][]byte{[]byte(`{"e":0}`), []byte(`{"e":1}`)}, time.Minute); err != nil {
			t.Fatal(err)
		}
		return rdb.HGet(ctx, j.JournalKey(id), "t").Val()
	}
	for _, tc := range []struct {
		name   string
		tamper func(id string) error
	}{
		{"an entry rewritten", func(id string) error {
			e := rdb.LIndex(ctx, list(id), 2).Val()
			return rdb.LSet(ctx, list(id), 2, e[:len(e)-2]+"9}").Err()
		}},
		{"two entries swapped", func(id string) error {
			a, b := rdb.LIndex(ctx, list(id), 1).Val(), rdb.LIndex(ctx, list(id), 2).Val()
			rdb.LSet(ctx, list(id), 1, b)
			return rdb.LSet(ctx, list(id), 2, a).Err()
		}},
		{"one removed from the middle", func(id string) error {
			return rdb.LRem(ctx, list(id), 1, rdb.LIndex(ctx, list(id), 3).Val()).Err()
		}},
		{"the last cut off", func(id string) error { return rdb.RPop(ctx, list(id)).Err() }},
		{"an entry of another journal planted", func(id string) error {
			writeJournal(t, j, id+"-other", 6)
			return rdb.LSet(ctx, list(id), 4, rdb.LIndex(ctx, list(id+"-other"), 4).Val()).Err()
		}},
		{"cut back to an older state, its own tail of then put back", func(id string) error {
			return rdb.LTrim(ctx, list(id), 0, 1).Err()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := "t-" + fmt.Sprint(len(tc.name))
			oldTail := ""
			if tc.name == "cut back to an older state, its own tail of then put back" {
				oldTail = writeShort(id) // the journal at 2 entries...
				next := resultstore.JournalCursor{}
				entries, next, _ = j.TakeJournal(ctx, "alice", id, "h1")
				if _, err := j.AppendJournal(ctx, "alice", id, "h1", "tok", next, [][]byte{[]byte(`{"e":2}`)}, time.Minute); err != nil {
					t.Fatal(err) // ...then at 3
				}
			} else {
				writeJournal(t, j, id, 6)
			}
			if err := tc.tamper(id); err != nil {
				t.Fatal(err)
			}
			if oldTail != "" {
				rdb.HSet(ctx, j.JournalKey(id), "t", oldTail)
				// That is the journal as it was at 2 entries, under the
				// pause token of 3: its tail names the pause it was sealed
				// at (none), and a claim of "tok" is refused. Before, the
				// claim replayed the 2 entries and made the third call
				// again. (Put back with the token of its own pause, a MAC
				// cannot tell it from a run that stopped there:
				// docs/security.md.)
				if entries, _, err := j.ClaimJournal(ctx, "alice", id, "tok", "h9"); !errors.Is(err, resultstore.ErrTampered) {
					t.Fatalf("rolled back to a state it had, claimed under the later pause: %v %q, want ErrTampered", err, entries)
				}
				return
			}
			if _, _, err := j.ClaimJournal(ctx, "alice", id, "tok", "h9"); !errors.Is(err, resultstore.ErrTampered) {
				t.Fatalf("claim: %v, want ErrTampered", err)
			}
			if _, _, err := j.TakeJournal(ctx, "alice", id, "h9"); !errors.Is(err, resultstore.ErrTampered) {
				t.Fatalf("take: %v, want ErrTampered", err)
			}
		})
	}
}

// TestJournalAppendBounds: both stores refuse an append past their byte
// bound (ErrTooLarge) and one at a cursor the journal is not at any more
// (ErrNotFound: it was dropped or expired, and its start is gone).
func TestJournalAppendBounds(t *testing.T) {
	ctx := context.Background()
	for name, j := range map[string]resultstore.Journals{
		"memory": resultstore.NewMemoryJournals(600, []byte("k")),
		"redis":  newRedisJournals(t, []byte("k"), 600),
	} {
		t.Run(name, func(t *testing.T) {
			at := writeJournal(t, j, "run", 2)
			if _, err := j.AppendJournal(ctx, "alice", "run", "h1", "", at, [][]byte{make([]byte, 600)}, time.Minute); !errors.Is(err, resultstore.ErrTooLarge) {
				t.Errorf("past the bound: %v, want ErrTooLarge", err)
			}
			if err := j.DeleteJournal(ctx, "run", "h1"); err != nil {
				t.Fatal(err)
			}
			if _, err := j.AppendJournal(ctx, "alice", "run", "h1", "", at, [][]byte{[]byte(`{}`)}, time.Minute); !errors.Is(err, resultstore.ErrNotFound) {
				t.Errorf("after its journal was dropped: %v, want ErrNotFound", err)
			}
		})
	}
}

// HoldsJournal follows the journal's holder: its writer holds it until
// another claims it (a resume elsewhere), and nobody holds a journal that
// is gone.
func TestHoldsJournal(t *testing.T) {
	ctx := context.Background()
	for name, j := range map[string]resultstore.Journals{
		"memory": resultstore.NewMemoryJournals(1<<20, []byte("k")),
		"redis":  newRedisJournals(t, []byte("k"), 1<<20),
	} {
		t.Run(name, func(t *testing.T) {
			holds := func(id, holder string) bool {
				t.Helper()
				held, err := j.HoldsJournal(ctx, id, holder)
				if err != nil {
					t.Fatal(err)
				}
				return held
			}
			writeJournal(t, j, "run", 4)
			if !holds("run", "h1") || holds("run", "h2") || holds("never", "h1") {
				t.Fatal("before a claim: only its writer h1 holds it")
			}
			if _, _, err := j.ClaimJournal(ctx, "alice", "run", "tok", "h2"); err != nil {
				t.Fatal(err)
			}
			if holds("run", "h1") || !holds("run", "h2") {
				t.Fatal("after h2's claim: h2 holds it, h1 does not")
			}
			if err := j.DeleteJournal(ctx, "run", "h2"); err != nil {
				t.Fatal(err)
			}
			if holds("run", "h2") {
				t.Fatal("a deleted journal is held")
			}
		})
	}
}
