package resultstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisLeases are the [Leases] of replicas sharing a Redis server. Each
// lease is a hash l:<id> (h holder, d sealed record) that Redis expires
// when its record is no longer needed (keep), and an entry of one sorted
// set, lapse, scored by the lease's end in Redis's own clock (TIME), so
// that replicas with skewed clocks agree on what lapsed. Renew, Take and
// Release are Lua scripts: a take is one atomic compare-and-set of the
// holder, so one replica takes a lapsed lease.
type RedisLeases struct {
	client *redis.Client
	prefix string
	key    []byte
}

// NewRedisLeases returns the lease table on the server, key prefix and
// HMAC key of r (its own keys: l:<id> and lapse).
func NewRedisLeases(r *Redis) *RedisLeases {
	return &RedisLeases{client: r.client.Client, prefix: strings.TrimSuffix(leaseKeyOf(r.prefix, ""), "l:"), key: r.key}
}

// LeaseKey is the Redis key of id's lease (tests tamper with it).
func (r *RedisLeases) LeaseKey(id string) string { return r.prefix + "l:" + id }

// leaseKeyOf is the key of id's lease for a store on prefix (the prefix
// of [NewRedis]): where RedisTasks.UpdateHeld looks for it.
func leaseKeyOf(prefix, id string) string { return prefix + "leases:l:" + id }

// Client is the Redis client.
func (r *RedisLeases) Client() *redis.Client { return r.client }

func (r *RedisLeases) lapseKey() string { return r.prefix + "lapse" }

func (r *RedisLeases) wrap(err error) error {
	return fmt.Errorf("lease table (redis %s) unavailable: %w", r.client.Options().Addr, err)
}

// Hold implements [Leases].
func (r *RedisLeases) Hold(ctx context.Context, id, holder string, data []byte, ttl, keep time.Duration) error {
	sealed := Seal(r.key, leaseSealName(id), data)
	err := holdLeaseScript.Run(ctx, r.client, []string{r.LeaseKey(id), r.lapseKey()}, id, holder, sealed,
		max(ttl.Milliseconds(), 1), max(keep.Milliseconds(), 1)).Err()
	if err != nil {
		return r.wrap(err)
	}
	return nil
}

// Renew implements [Leases].
func (r *RedisLeases) Renew(ctx context.Context, id, holder string, ttl time.Duration) error {
	res, err := renewLeaseScript.Run(ctx, r.client, []string{r.LeaseKey(id), r.lapseKey()}, id, holder,
		max(ttl.Milliseconds(), 1)).Text()
	if err != nil {
		return r.wrap(err)
	}
	if res != "ok" {
		return fmt.Errorf("lease %s: %w", id, ErrLeaseLost)
	}
	return nil
}

// Release implements [Leases].
func (r *RedisLeases) Release(ctx context.Context, id, holder string) error {
	if err := releaseLeaseScript.Run(ctx, r.client, []string{r.LeaseKey(id), r.lapseKey()}, id, holder).Err(); err != nil &&
		!errors.Is(err, redis.Nil) {
		return r.wrap(err)
	}
	return nil
}

// Lapsed implements [Leases].
func (r *RedisLeases) Lapsed(ctx context.Context, n int) ([]string, error) {
	ids, err := lapsedLeasesScript.Run(ctx, r.client, []string{r.lapseKey()}, n).StringSlice()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, r.wrap(err)
	}
	return ids, nil
}

// Take implements [Leases].
func (r *RedisLeases) Take(ctx context.Context, id, holder string, ttl time.Duration) ([]byte, error) {
	res, err := takeLeaseScript.Run(ctx, r.client, []string{r.LeaseKey(id), r.lapseKey()}, id, holder,
		max(ttl.Milliseconds(), 1)).Text()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("lease %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, r.wrap(err)
	}
	data, err := Unseal(r.key, leaseSealName(id), []byte(res))
	if err != nil {
		_ = r.client.Del(ctx, r.LeaseKey(id)).Err()
		_ = r.client.ZRem(ctx, r.lapseKey(), id).Err()
		return nil, err
	}
	return data, nil
}

// redisNow is the server's clock in milliseconds, in a script.
const redisNow = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// holdLeaseScript: KEYS l:<id>, lapse; ARGV id, holder, data, ttl ms, keep ms.
var holdLeaseScript = redis.NewScript(redisNow + strings.TrimSpace(`
redis.call('HSET', KEYS[1], 'h', ARGV[2], 'd', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[4]), ARGV[1])
return 'ok'
`))

// renewLeaseScript: KEYS l:<id>, lapse; ARGV id, holder, ttl ms.
var renewLeaseScript = redis.NewScript(redisNow + strings.TrimSpace(`
if redis.call('HGET', KEYS[1], 'h') ~= ARGV[2] then return 'lost' end
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[1])
return 'ok'
`))

// releaseLeaseScript: KEYS l:<id>, lapse; ARGV id, holder.
var releaseLeaseScript = redis.NewScript(strings.TrimSpace(`
if redis.call('HGET', KEYS[1], 'h') == ARGV[2] then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
end
return 1
`))

// lapsedLeasesScript: KEYS lapse; ARGV n. Entries whose lease hash
// expired (its task is over) are dropped on the way.
var lapsedLeasesScript = redis.NewScript(redisNow + strings.TrimSpace(`
local out = {}
local prefix = string.sub(KEYS[1], 1, #KEYS[1] - #'lapse')
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]) * 2)) do
  if redis.call('EXISTS', prefix .. 'l:' .. id) == 0 then
    redis.call('ZREM', KEYS[1], id)
  elseif #out < tonumber(ARGV[1]) then
    table.insert(out, id)
  end
end
return out
`))

// takeLeaseScript: KEYS l:<id>, lapse; ARGV id, holder, ttl ms. Returns
// the record, or nil when the lease is live or gone.
var takeLeaseScript = redis.NewScript(redisNow + strings.TrimSpace(`
local ends = redis.call('ZSCORE', KEYS[2], ARGV[1])
local d = redis.call('HGET', KEYS[1], 'd')
if not ends or not d then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return false
end
if tonumber(ends) > now then return false end
redis.call('HSET', KEYS[1], 'h', ARGV[2])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[1])
return d
`))
