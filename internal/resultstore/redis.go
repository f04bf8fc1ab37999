package resultstore

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// RedisKeyPrefix starts every key the Redis store writes. The hash tag
// keeps them in one cluster slot, as the put script touches several.
const RedisKeyPrefix = "{isogate}:"

// Redis is a [Store] on a Redis server, shared by every gateway replica
// that points at it: a result stored through one replica is read through
// any other. Entries expire Limits.TTL after they were stored (Redis
// expires them itself), and the byte budgets hold across replicas: a Lua
// script does the accounting and eviction atomically, with the same rules
// as [Memory] (budgets per account, see [AccountOf]; an account's own
// oldest entries make room; another account's live entries are never
// evicted).
//
// A Redis that cannot be reached makes Put and Get fail with an error
// naming the store; the client reconnects on its own once Redis is back.
type Redis struct {
	client StoreClient
	limits Limits
	prefix string
	key    []byte // HMAC key of the entries (store.hmac_key); nil: none
	onFull func() // RedisOptions.OnFull
	// dataOnly charges entries their data alone (RedisOptions.CountDataOnly).
	dataOnly bool
}

// RedisOptions configure a Redis store; zero fields take defaults.
type RedisOptions struct {
	// URL is the server: redis://[user:pass@]host:port/db, or rediss://
	// for TLS. Required.
	URL string
	// Limits are the retention and byte budgets.
	Limits Limits
	// Prefix starts every key; default RedisKeyPrefix. Stores with
	// different prefixes keep separate budgets on one server.
	Prefix string
	// HMACKey, when set, authenticates every entry (see [Seal]): an entry
	// written without the key, or moved to another id or owner, is refused
	// as not found.
	HMACKey []byte
	// CountDataOnly charges entries their data's length alone, not what
	// they take in Redis (tests of exact byte budgets use it).
	CountDataOnly bool
	// OnFull, when set, is called each time the store refuses an entry
	// with [ErrFull] (a metric counts them).
	OnFull func()
	// Client, when set, is the client the store uses instead of one of
	// its own at URL: the replica's one client of store.redis_url, shared
	// by all its stores (see [StoreClient]).
	Client *redis.Client
}

// RedisEntryOverhead is what a [Redis] store charges each entry beyond its
// (sealed) data, its owner key and its account: the entry's hash and key,
// its members in the expiry and account sets and its slots in the size
// and account hashes, as redis-server 7 holds them (INFO memory's
// used_memory grew 850 to 1 400 bytes an entry beyond the data, with the
// keys' names; measured by TestRedisBudgetIsWhatItHolds).
const RedisEntryOverhead = 1280

// NewRedisClient returns a client of the Redis server at url
// (store.redis_url) that retries a failed command retries times. It does
// not wait for the server: the first command does.
func NewRedisClient(url string, retries int) (*redis.Client, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("store.redis_url: %w", err)
	}
	opt.MaxRetries = retries
	return redis.NewClient(opt), nil
}

// StoreClient is a store's client of Redis: its own, which the store's
// Close closes, or one shared with the replica's other stores (one pool
// of connections for them all), which Close leaves open: whoever made it
// closes it, once, after every store that uses it.
type StoreClient struct {
	*redis.Client
	shared bool
}

// ClientFor returns shared as a store's client when it is set, else a
// client of its own at url that retries a failed command retries times
// ([NewRedisClient]).
func ClientFor(shared *redis.Client, url string, retries int) (StoreClient, error) {
	if shared != nil {
		return StoreClient{Client: shared, shared: true}, nil
	}
	c, err := NewRedisClient(url, retries)
	if err != nil {
		return StoreClient{}, err
	}
	return StoreClient{Client: c}, nil
}

// Close closes the client unless it is shared.
func (c StoreClient) Close() error {
	if c.shared {
		return nil
	}
	return c.Client.Close()
}

// NewRedis returns a store on the Redis server at o.URL. It does not wait
// for the server: the first operation does.
func NewRedis(o RedisOptions) (*Redis, error) {
	client, err := ClientFor(o.Client, o.URL, 2)
	if err != nil {
		return nil, err
	}
	if o.Prefix == "" {
		o.Prefix = RedisKeyPrefix
	}
	return &Redis{client: client, limits: o.Limits.WithDefaults(), prefix: o.Prefix, key: o.HMACKey,
		dataOnly: o.CountDataOnly, onFull: o.OnFull}, nil
}

// Limits implements [Store].
func (r *Redis) Limits() Limits { return r.limits }

// Ping checks that Redis answers.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("result store (redis %s): %w", r.client.Options().Addr, err)
	}
	return nil
}

// Close closes the connections to Redis (unless RedisOptions.Client
// made them: that client's maker closes it).
func (r *Redis) Close() error { return r.client.Close() }

// Put implements [Store].
func (r *Redis) Put(ctx context.Context, owner string, data []byte) (string, error) {
	for {
		id := randomID()
		err := r.PutID(ctx, owner, id, data)
		if errors.Is(err, errDuplicate) {
			continue // 128 random bits: practically never
		}
		return id, err
	}
}

// errDuplicate means PutID was given an id that is already stored.
var errDuplicate = errors.New("id already stored")

// PutID implements [Keyed].
func (r *Redis) PutID(ctx context.Context, owner, id string, data []byte) error {
	sealed := Seal(r.key, r.sealName(owner, id), data)
	cost := r.entryCost(len(sealed), owner)
	if cost > r.limits.OwnerBytes {
		return fmt.Errorf("%w: %d bytes (%d with the store's bookkeeping), share %d bytes",
			ErrTooLarge, len(data), cost, r.limits.OwnerBytes)
	}
	res, err := putScript.Run(ctx, r.client, []string{r.prefix}, owner, id, sealed,
		r.limits.TTL.Milliseconds(), r.limits.OwnerBytes, r.limits.MaxBytes, AccountOf(owner), cost).Slice()
	if err != nil {
		return r.wrap(err)
	}
	switch res[0] {
	case "ok":
		return nil
	case "dup":
		return fmt.Errorf("%w: %s", errDuplicate, id)
	case "full":
		if r.onFull != nil {
			r.onFull()
		}
		return fmt.Errorf("%w: %v of %d bytes held by other callers' results until they expire",
			ErrFull, res[1], r.limits.MaxBytes)
	}
	return fmt.Errorf("result store (redis): unexpected reply %v", res)
}

// entryCost is what an entry of sealed bytes for owner is charged: see
// [RedisEntryOverhead] (its data alone with CountDataOnly).
func (r *Redis) entryCost(sealed int, owner string) int {
	if r.dataOnly {
		return sealed
	}
	return sealed + len(owner) + len(AccountOf(owner)) + RedisEntryOverhead
}

// Get implements [Store].
func (r *Redis) Get(ctx context.Context, owner, id string) ([]byte, error) {
	vals, err := r.client.HMGet(ctx, r.prefix+"r:"+id, "o", "d").Result()
	if err != nil {
		return nil, r.wrap(err)
	}
	o, ok1 := vals[0].(string)
	d, ok2 := vals[1].(string)
	if !ok1 || !ok2 || subtle.ConstantTimeCompare([]byte(o), []byte(owner)) != 1 {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	data, err := Unseal(r.key, r.sealName(owner, id), []byte(d))
	if err != nil {
		return nil, fmt.Errorf("%w: %s (%w)", ErrNotFound, id, err)
	}
	return data, nil
}

// sealName is what an entry's MAC covers besides its data.
func (r *Redis) sealName(owner, id string) string {
	return r.prefix + "r:" + id + "\x00" + owner
}

func (r *Redis) wrap(err error) error {
	return fmt.Errorf("result store (redis %s) unavailable: %w", r.client.Options().Addr, err)
}

// putScript stores one entry and keeps the byte accounting. Keys, under
// the prefix KEYS[1]: r:<id> (hash: o owner, d data; expires by itself),
// all (zset id → expiry ms), sz (hash id → bytes), own (hash id →
// account), tot (total bytes), o:<account> (zset id → expiry ms) and
// ob:<account> (account's bytes). Expired entries are first removed from
// the accounting; then the account's oldest entries make room. The entry
// itself keeps the whole owner key, which Get compares.
// ARGV: owner, id, data, ttl ms, account bytes, max bytes, account, what
// the entry is charged.
var putScript = redis.NewScript(strings.TrimSpace(`
local p = KEYS[1]
local owner, id, data = ARGV[1], ARGV[2], ARGV[3]
local ttl, ownerMax, totalMax = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local account = ARGV[7]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local function remove(rid)
  local o = redis.call('HGET', p .. 'own', rid)
  local s = tonumber(redis.call('HGET', p .. 'sz', rid) or '0')
  redis.call('ZREM', p .. 'all', rid)
  redis.call('HDEL', p .. 'sz', rid)
  redis.call('HDEL', p .. 'own', rid)
  redis.call('DEL', p .. 'r:' .. rid)
  if redis.call('DECRBY', p .. 'tot', s) <= 0 then redis.call('DEL', p .. 'tot') end
  if o then
    redis.call('ZREM', p .. 'o:' .. o, rid)
    if redis.call('DECRBY', p .. 'ob:' .. o, s) <= 0 then
      redis.call('DEL', p .. 'ob:' .. o, p .. 'o:' .. o)
    end
  end
end

for _, rid in ipairs(redis.call('ZRANGEBYSCORE', p .. 'all', '-inf', now)) do remove(rid) end

local size = tonumber(ARGV[8])
local function num(k) return tonumber(redis.call('GET', k) or '0') end
while num(p .. 'ob:' .. account) + size > ownerMax or num(p .. 'tot') + size > totalMax do
  local oldest = redis.call('ZRANGE', p .. 'o:' .. account, 0, 0)
  if #oldest == 0 then break end
  remove(oldest[1])
end
if num(p .. 'tot') + size > totalMax then return {'full', num(p .. 'tot')} end
if redis.call('EXISTS', p .. 'r:' .. id) == 1 or redis.call('HEXISTS', p .. 'sz', id) == 1 then return {'dup'} end

redis.call('HSET', p .. 'r:' .. id, 'o', owner, 'd', data)
redis.call('PEXPIRE', p .. 'r:' .. id, ttl)
redis.call('ZADD', p .. 'all', now + ttl, id)
redis.call('HSET', p .. 'sz', id, size)
redis.call('HSET', p .. 'own', id, account)
redis.call('INCRBY', p .. 'tot', size)
redis.call('ZADD', p .. 'o:' .. account, now + ttl, id)
redis.call('INCRBY', p .. 'ob:' .. account, size)
return {'ok'}
`))

// Bytes reports what the store's unexpired entries are charged in all
// (see [RedisEntryOverhead]), across every replica sharing it.
func (r *Redis) Bytes(ctx context.Context) (int64, error) {
	n, err := r.client.Get(ctx, r.prefix+"tot").Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, r.wrap(err)
	}
	return n, nil
}
