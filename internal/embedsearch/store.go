package embedsearch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/isogate/isogate/internal/resultstore"
)

// Store keeps computed tool vectors by key (the model, dimensions and
// catalogue text's hash), so that they are computed once for every
// replica and session, and lets one computer at a time make a key's.
type Store interface {
	// Get returns the entry under key, nil when there is none.
	Get(ctx context.Context, key string) ([]byte, error)
	// Put stores an entry under key.
	Put(ctx context.Context, key string, entry []byte) error
	// Lock takes key's computing lock for ttl: false when another holds it.
	Lock(ctx context.Context, key string, ttl time.Duration) (bool, error)
	// Renew extends a lock Lock took to ttl from now.
	Renew(ctx context.Context, key string, ttl time.Duration) error
	// Unlock releases a lock Lock took.
	Unlock(ctx context.Context, key string) error
}

// Memory is a [Store] in this process: one replica's.
type Memory struct {
	mu      sync.Mutex
	entries map[string][]byte
	order   []string // oldest first, to keep the last maxMemoryEntries
	locks   map[string]time.Time
}

// maxMemoryEntries is how many catalogue versions' vectors Memory keeps:
// the current one and the one before (a backend that leaves and comes back
// costs no request), at most 4 bytes per dimension per tool each.
const maxMemoryEntries = 2

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{entries: map[string][]byte{}, locks: map[string]time.Time{}}
}

// Get implements [Store].
func (m *Memory) Get(_ context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.entries[key], nil
}

// Put implements [Store].
func (m *Memory) Put(_ context.Context, key string, entry []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.entries[key]; !ok {
		m.order = append(m.order, key)
	}
	m.entries[key] = entry
	for len(m.order) > maxMemoryEntries {
		delete(m.entries, m.order[0])
		m.order = m.order[1:]
	}
	return nil
}

// Lock implements [Store].
func (m *Memory) Lock(_ context.Context, key string, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if until, ok := m.locks[key]; ok && time.Now().Before(until) {
		return false, nil
	}
	m.locks[key] = time.Now().Add(ttl)
	return true, nil
}

// Renew implements [Store].
func (m *Memory) Renew(_ context.Context, key string, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.locks[key]; ok {
		m.locks[key] = time.Now().Add(ttl)
	}
	return nil
}

// Unlock implements [Store].
func (m *Memory) Unlock(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.locks, key)
	return nil
}

// RedisKeyPrefix starts every key the Redis store writes: vectors under
// RedisKeyPrefix+key, computing locks under RedisKeyPrefix+"lock:"+key.
const RedisKeyPrefix = "{isogate}:embeddings:"

// RedisTTL is how long a catalogue version's vectors live in Redis after
// they were written.
const RedisTTL = 30 * 24 * time.Hour

// Redis is a [Store] on a Redis server, shared by every replica.
type Redis struct {
	client resultstore.StoreClient
	key    []byte // HMAC key of the entries (store.hmac_key); nil: none
	token  string // this store's lock token
}

// NewRedis returns a store on the Redis server at url (store.redis_url).
// With an hmacKey (store.hmac_key) every entry is authenticated: one
// written without the key is refused (read as a miss). It does not wait
// for the server.
func NewRedis(url string, hmacKey []byte) (*Redis, error) {
	client, err := resultstore.ClientFor(nil, url, 1)
	if err != nil {
		return nil, err
	}
	return &Redis{client: client, key: hmacKey, token: randomToken()}, nil
}

// NewRedisShared returns a store on client, the replica's one client of
// store.redis_url shared by all its stores: Close leaves it open (see
// [resultstore.StoreClient]). hmacKey is as for [NewRedis].
func NewRedisShared(client *redis.Client, hmacKey []byte) *Redis {
	c, _ := resultstore.ClientFor(client, "", 0) // a shared client: no error
	return &Redis{client: c, key: hmacKey, token: randomToken()}
}

// Get implements [Store]. An entry that does not authenticate is a miss.
func (r *Redis) Get(ctx context.Context, key string) ([]byte, error) {
	data, err := r.client.Get(ctx, RedisKeyPrefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, r.wrap(err)
	}
	data, err = resultstore.Unseal(r.key, RedisKeyPrefix+key, data)
	if err != nil {
		return nil, fmt.Errorf("embeddings store (redis): %w", err)
	}
	return data, nil
}

// Put implements [Store].
func (r *Redis) Put(ctx context.Context, key string, entry []byte) error {
	if err := r.client.Set(ctx, RedisKeyPrefix+key, resultstore.Seal(r.key, RedisKeyPrefix+key, entry), RedisTTL).Err(); err != nil {
		return r.wrap(err)
	}
	return nil
}

// Lock implements [Store] with SET NX PX.
func (r *Redis) Lock(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	ok, err := r.client.SetNX(ctx, RedisKeyPrefix+"lock:"+key, r.token, ttl).Result()
	if err != nil {
		return false, r.wrap(err)
	}
	return ok, nil
}

// renewScript extends a lock only if this store still holds it.
var renewScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0`)

// Renew implements [Store].
func (r *Redis) Renew(ctx context.Context, key string, ttl time.Duration) error {
	if err := renewScript.Run(ctx, r.client, []string{RedisKeyPrefix + "lock:" + key}, r.token, ttl.Milliseconds()).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return r.wrap(err)
	}
	return nil
}

// unlockScript deletes a lock only if this store still holds it.
var unlockScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

// Unlock implements [Store].
func (r *Redis) Unlock(ctx context.Context, key string) error {
	if err := unlockScript.Run(ctx, r.client, []string{RedisKeyPrefix + "lock:" + key}, r.token).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return r.wrap(err)
	}
	return nil
}

// Close closes the connections to Redis, unless the client is shared.
func (r *Redis) Close() error { return r.client.Close() }

func (r *Redis) wrap(err error) error {
	return fmt.Errorf("embeddings store (redis %s) unavailable: %w", r.client.Options().Addr, err)
}
