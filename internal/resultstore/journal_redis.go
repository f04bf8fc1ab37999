package resultstore

import (
	"context"
	"crypto/subtle"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisJournals is the [Journals] of replicas sharing a Redis server: a
// run paused on one replica resumes on any other. A journal is two keys
// that expire with their run: a list of its sealed entries, appended to
// with RPUSH, and a hash (o owner, h holder, p pause token, t tail seal, s
// the pause token the tail was sealed with, b bytes held); the scripts
// below make an append fenced by its holder and a claim single use,
// atomically across replicas.
type RedisJournals struct {
	client   StoreClient
	prefix   string
	key      []byte
	maxBytes int
}

// NewRedisJournals returns the journal store on the Redis server of o (its
// URL or Client, Prefix and HMACKey; journals larger than maxBytes are
// refused).
func NewRedisJournals(o RedisOptions, maxBytes int) (*RedisJournals, error) {
	client, err := ClientFor(o.Client, o.URL, 2)
	if err != nil {
		return nil, err
	}
	if o.Prefix == "" {
		o.Prefix = RedisKeyPrefix
	}
	return &RedisJournals{client: client, prefix: o.Prefix, key: o.HMACKey, maxBytes: maxBytes}, nil
}

// Close closes the connections to Redis (unless RedisOptions.Client
// made them).
func (r *RedisJournals) Close() error { return r.client.Close() }

// Client is the Redis client (tests tamper with journals through it).
func (r *RedisJournals) Client() *redis.Client { return r.client.Client }

// JournalKey is the Redis key of run id's journal (its hash); its entries
// are the list [RedisJournals.JournalEntriesKey].
func (r *RedisJournals) JournalKey(id string) string { return r.prefix + "j:" + id }

// JournalEntriesKey is the Redis key of the list of run id's journal
// entries.
func (r *RedisJournals) JournalEntriesKey(id string) string { return r.prefix + "j:" + id + ":e" }

func (r *RedisJournals) keys(id string) []string {
	return []string{r.JournalKey(id), r.JournalEntriesKey(id)}
}

// AppendJournal implements [Journals].
func (r *RedisJournals) AppendJournal(ctx context.Context, owner, id, holder, pause string, at JournalCursor, entries [][]byte, ttl time.Duration) (JournalCursor, error) {
	sealed, next, tail := sealEntries(r.key, owner, id, pause, at, entries)
	args := make([]any, 0, 8+len(sealed))
	args = append(args, owner, holder, pause, max(ttl.Milliseconds(), 1), at.N, tail, r.maxBytes, sealedSize(sealed))
	for _, s := range sealed {
		args = append(args, s)
	}
	res, err := appendJournalScript.Run(ctx, r.client, r.keys(id), args...).Text()
	if err != nil {
		return at, r.wrap(err)
	}
	switch res {
	case "ok":
		return next, nil
	case "fenced":
		return at, fmt.Errorf("journal %s: %w", id, ErrFenced)
	case "gone":
		return at, fmt.Errorf("journal %s: not at entry %d any more (expired or dropped): %w", id, at.N, ErrNotFound)
	}
	return at, fmt.Errorf("%w: journal %s would pass %d bytes", ErrTooLarge, id, r.maxBytes)
}

// ClaimJournal implements [Journals].
func (r *RedisJournals) ClaimJournal(ctx context.Context, owner, id, pause, holder string) ([][]byte, JournalCursor, error) {
	return r.open(ctx, claimJournalScript, owner, id, pause, owner, pause, holder)
}

// open runs script (a claim or a take, which answers the tail seal, the
// pause token it was sealed with, then the entries, or nil) and checks the
// journal it answers; a claim (pause, its token, not "") also checks that
// the tail was sealed at that pause: a journal put back as it was at an
// earlier pause, under this one's token, is refused.
func (r *RedisJournals) open(ctx context.Context, script *redis.Script, owner, id, pause string, args ...any) ([][]byte, JournalCursor, error) {
	res, err := script.Run(ctx, r.client, r.keys(id), args...).StringSlice()
	if err == redis.Nil {
		return nil, JournalCursor{}, fmt.Errorf("journal %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, JournalCursor{}, r.wrap(err)
	}
	if len(res) < 2 {
		return nil, JournalCursor{}, fmt.Errorf("journal %s: a reply of %d values from Redis: %w", id, len(res), ErrTampered)
	}
	sealedPause := res[1]
	if len(r.key) > 0 && pause != "" && subtle.ConstantTimeCompare([]byte(sealedPause), []byte(pause)) != 1 {
		return nil, JournalCursor{}, fmt.Errorf("journal %s: its tail was sealed at another pause than the one claimed (put back as it was earlier?): %w", id, ErrTampered)
	}
	sealed := make([][]byte, len(res)-2)
	for i, s := range res[2:] {
		sealed[i] = []byte(s)
	}
	return openEntries(r.key, owner, id, sealedPause, sealed, []byte(res[0]))
}

// DeleteJournal implements [Journals].
func (r *RedisJournals) DeleteJournal(ctx context.Context, id, holder string) error {
	if err := deleteJournalScript.Run(ctx, r.client, r.keys(id), holder).Err(); err != nil && err != redis.Nil {
		return r.wrap(err)
	}
	return nil
}

// HoldsJournal implements [Journals].
func (r *RedisJournals) HoldsJournal(ctx context.Context, id, holder string) (bool, error) {
	h, err := r.client.HGet(ctx, r.JournalKey(id), "h").Result()
	switch {
	case err == redis.Nil:
		return false, nil
	case err != nil:
		return false, r.wrap(err)
	}
	return h == holder, nil
}

func (r *RedisJournals) wrap(err error) error {
	return fmt.Errorf("journal store (redis %s) unavailable: %w", r.client.Options().Addr, err)
}

// appendJournalScript: KEYS hash, list; ARGV owner, holder, pause, ttl
// ms, entries the holder appended so far, tail seal, byte bound, bytes
// appended, then the sealed entries. A journal held by another holder is
// not touched ("fenced"), nor one that does not hold what its holder
// appended ("gone": expired or dropped).
var appendJournalScript = redis.NewScript(strings.TrimSpace(`
local h = redis.call('HGET', KEYS[1], 'h')
if h and h ~= ARGV[2] then return 'fenced' end
if redis.call('LLEN', KEYS[2]) ~= tonumber(ARGV[5]) then return 'gone' end
local b = tonumber(redis.call('HGET', KEYS[1], 'b') or '0') + tonumber(ARGV[8])
if b > tonumber(ARGV[7]) then return 'toolarge' end
for i = 9, #ARGV, 1000 do
  redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
redis.call('HSET', KEYS[1], 'o', ARGV[1], 'h', ARGV[2], 'p', ARGV[3], 's', ARGV[3], 't', ARGV[6], 'b', b)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 'ok'
`))

// claimJournalScript: ARGV owner, pause, new holder; returns the tail
// seal, the pause token it was sealed with, and the entries, or nil when
// the journal is not owner's or not paused under that token.
var claimJournalScript = redis.NewScript(strings.TrimSpace(`
local v = redis.call('HMGET', KEYS[1], 'o', 'p', 't', 's')
if not v[1] or v[1] ~= ARGV[1] or not v[2] or v[2] == '' or v[2] ~= ARGV[2] then return false end
redis.call('HSET', KEYS[1], 'p', '', 'h', ARGV[3])
local out = redis.call('LRANGE', KEYS[2], 0, -1)
table.insert(out, 1, v[4] or '')
table.insert(out, 1, v[3] or '')
return out
`))

// deleteJournalScript: ARGV holder.
var deleteJournalScript = redis.NewScript(strings.TrimSpace(`
if redis.call('HGET', KEYS[1], 'h') == ARGV[1] then redis.call('DEL', KEYS[1], KEYS[2]) end
return 1
`))
