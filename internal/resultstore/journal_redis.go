package resultstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisJournals is the [Journals] of replicas sharing a Redis server: a
// run paused on one replica resumes on any other. Each journal is one hash
// (o owner, h holder, p pause token, d sealed data) that expires with its
// run; the scripts below make a save fenced by its holder and a claim
// single use, atomically across replicas.
type RedisJournals struct {
	client   *redis.Client
	prefix   string
	key      []byte
	maxBytes int
}

// NewRedisJournals returns the journal store on the Redis server of o (its
// URL, Prefix and HMACKey; journals larger than maxBytes are refused).
func NewRedisJournals(o RedisOptions, maxBytes int) (*RedisJournals, error) {
	opt, err := redis.ParseURL(o.URL)
	if err != nil {
		return nil, fmt.Errorf("store.redis_url: %w", err)
	}
	opt.MaxRetries = 2
	if o.Prefix == "" {
		o.Prefix = RedisKeyPrefix
	}
	return &RedisJournals{client: redis.NewClient(opt), prefix: o.Prefix, key: o.HMACKey, maxBytes: maxBytes}, nil
}

// Close closes the connections to Redis.
func (r *RedisJournals) Close() error { return r.client.Close() }

// Client is the Redis client (tests tamper with journals through it).
func (r *RedisJournals) Client() *redis.Client { return r.client }

// JournalKey is the Redis key of run id's journal.
func (r *RedisJournals) JournalKey(id string) string { return r.prefix + "j:" + id }

// SaveJournal implements [Journals].
func (r *RedisJournals) SaveJournal(ctx context.Context, owner, id, holder, pause string, data []byte, ttl time.Duration) error {
	if len(data) > r.maxBytes {
		return fmt.Errorf("%w: journal of %d bytes, bound %d", ErrTooLarge, len(data), r.maxBytes)
	}
	sealed := Seal(r.key, journalSealName(owner, id), data)
	res, err := saveJournalScript.Run(ctx, r.client, []string{r.JournalKey(id)}, owner, holder, pause, sealed,
		max(ttl.Milliseconds(), 1)).Text()
	if err != nil {
		return r.wrap(err)
	}
	if res != "ok" {
		return fmt.Errorf("journal %s: %w", id, ErrFenced)
	}
	return nil
}

// ClaimJournal implements [Journals].
func (r *RedisJournals) ClaimJournal(ctx context.Context, owner, id, pause, holder string) ([]byte, error) {
	res, err := claimJournalScript.Run(ctx, r.client, []string{r.JournalKey(id)}, owner, pause, holder).Text()
	if err == redis.Nil {
		return nil, fmt.Errorf("journal %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, r.wrap(err)
	}
	return Unseal(r.key, journalSealName(owner, id), []byte(res))
}

// DeleteJournal implements [Journals].
func (r *RedisJournals) DeleteJournal(ctx context.Context, id, holder string) error {
	if err := deleteJournalScript.Run(ctx, r.client, []string{r.JournalKey(id)}, holder).Err(); err != nil && err != redis.Nil {
		return r.wrap(err)
	}
	return nil
}

func (r *RedisJournals) wrap(err error) error {
	return fmt.Errorf("journal store (redis %s) unavailable: %w", r.client.Options().Addr, err)
}

// saveJournalScript: ARGV owner, holder, pause, data, ttl ms. A journal
// held by another holder is not touched ("fenced").
var saveJournalScript = redis.NewScript(strings.TrimSpace(`
local h = redis.call('HGET', KEYS[1], 'h')
if h and h ~= ARGV[2] then return 'fenced' end
redis.call('HSET', KEYS[1], 'o', ARGV[1], 'h', ARGV[2], 'p', ARGV[3], 'd', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 'ok'
`))

// claimJournalScript: ARGV owner, pause, new holder; returns the data, or
// nil when the journal is not owner's or not paused under that token.
var claimJournalScript = redis.NewScript(strings.TrimSpace(`
local v = redis.call('HMGET', KEYS[1], 'o', 'p', 'd')
if not v[1] or v[1] ~= ARGV[1] or not v[2] or v[2] == '' or v[2] ~= ARGV[2] then return false end
redis.call('HSET', KEYS[1], 'p', '', 'h', ARGV[3])
return v[3]
`))

// deleteJournalScript: ARGV holder.
var deleteJournalScript = redis.NewScript(strings.TrimSpace(`
if redis.call('HGET', KEYS[1], 'h') == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`))
