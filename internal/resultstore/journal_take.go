package resultstore

import (
	"context"
	"crypto/subtle"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// JournalTaker is implemented by the journal stores: a replica that took a
// lapsed lease over (see [Leases]) takes the run's journal to replay it.
type JournalTaker interface {
	// TakeJournal makes holder the holder of owner's run id, whoever held
	// it (the lease take decided who continues the run: the old holder's
	// writes are fenced off from now on), and returns the journal's entries
	// and the cursor to append at. It fails with ErrNotFound for no journal
	// of owner's, and ErrTampered when the journal fails its integrity
	// check.
	TakeJournal(ctx context.Context, owner, id, holder string) ([][]byte, JournalCursor, error)
}

// TakeJournal implements [JournalTaker].
func (m *MemoryJournals) TakeJournal(_ context.Context, owner, id, holder string) ([][]byte, JournalCursor, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked()
	e := m.entries[id]
	if e == nil || subtle.ConstantTimeCompare([]byte(e.owner), []byte(owner)) != 1 {
		return nil, JournalCursor{}, fmt.Errorf("journal %s: %w", id, ErrNotFound)
	}
	entries, at, err := openEntries(m.key, owner, id, e.sealedPause, e.sealed, e.tail)
	if err != nil {
		return nil, JournalCursor{}, err
	}
	e.pause, e.holder = "", holder
	return entries, at, nil
}

// TakeJournal implements [JournalTaker].
func (r *RedisJournals) TakeJournal(ctx context.Context, owner, id, holder string) ([][]byte, JournalCursor, error) {
	return r.open(ctx, takeJournalScript, owner, id, "", owner, holder)
}

// takeJournalScript: ARGV owner, new holder; returns the tail seal, the
// pause token it was sealed with, and the entries, or nil when there is
// no journal of owner's.
var takeJournalScript = redis.NewScript(strings.TrimSpace(`
local v = redis.call('HMGET', KEYS[1], 'o', 't', 's')
if not v[1] or v[1] ~= ARGV[1] then return false end
redis.call('HSET', KEYS[1], 'p', '', 'h', ARGV[2])
local out = redis.call('LRANGE', KEYS[2], 0, -1)
table.insert(out, 1, v[3] or '')
table.insert(out, 1, v[2] or '')
return out
`))

// Sealed reports whether journals are sealed with store.hmac_key: only
// then is a journal read back from the store known to be one this
// gateway wrote.
func (m *MemoryJournals) Sealed() bool { return len(m.key) > 0 }

// Sealed reports whether journals are sealed with store.hmac_key (see
// [MemoryJournals.Sealed]).
func (r *RedisJournals) Sealed() bool { return len(r.key) > 0 }
