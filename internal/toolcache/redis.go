// Package toolcache holds backends' tool lists in Redis, so that every
// gateway replica sharing one Redis starts with the tool lists any of them
// has seen (see [backend.ToolCache]; without Redis, the gateway caches them
// in files under server.cache_dir).
package toolcache

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/resultstore"
)

// KeyPrefix starts every key this cache writes, followed by the backend's
// fingerprint.
const KeyPrefix = "{isogate}:tools:"

// TTL is how long an entry lives after its last write: a backend no
// replica has listed for that long is forgotten.
const TTL = 30 * 24 * time.Hour

// Redis is a [backend.ToolCache] on a Redis server.
type Redis struct {
	client resultstore.StoreClient
	key    []byte // HMAC key of the entries (store.hmac_key); nil: none
}

var _ backend.ToolCache = (*Redis)(nil)

// NewRedis returns a tool cache on the Redis server at url
// (redis://[user:pass@]host:port/db, or rediss:// for TLS). With an
// hmacKey (store.hmac_key) every entry is authenticated: one written
// without the key (planted by whoever reaches Redis) is refused. It does
// not wait for the server: the first operation does.
func NewRedis(url string, hmacKey []byte) (*Redis, error) {
	client, err := resultstore.ClientFor(nil, url, 1)
	if err != nil {
		return nil, err
	}
	return &Redis{client: client, key: hmacKey}, nil
}

// NewRedisShared returns a tool cache on client, the replica's one client
// of store.redis_url shared by all its stores: Close leaves it open (see
// [resultstore.StoreClient]). hmacKey is as for [NewRedis].
func NewRedisShared(client *redis.Client, hmacKey []byte) *Redis {
	c, _ := resultstore.ClientFor(client, "", 0) // a shared client: no error
	return &Redis{client: c, key: hmacKey}
}

// Get implements [backend.ToolCache].
func (r *Redis) Get(ctx context.Context, key string) ([]byte, error) {
	data, err := r.client.Get(ctx, KeyPrefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, r.wrap(err)
	}
	data, err = resultstore.Unseal(r.key, KeyPrefix+key, data)
	if err != nil {
		return nil, fmt.Errorf("tool cache (redis): %w", err)
	}
	return data, nil
}

// Put implements [backend.ToolCache].
func (r *Redis) Put(ctx context.Context, key string, entry []byte) error {
	if err := r.client.Set(ctx, KeyPrefix+key, resultstore.Seal(r.key, KeyPrefix+key, entry), TTL).Err(); err != nil {
		return r.wrap(err)
	}
	return nil
}

// Close closes the connections to Redis, unless the client is shared.
func (r *Redis) Close() error { return r.client.Close() }

func (r *Redis) wrap(err error) error {
	return fmt.Errorf("tool cache (redis %s) unavailable: %w", r.client.Options().Addr, err)
}
