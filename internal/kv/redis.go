package kv

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/isogate/isogate/internal/resultstore"
)

// RedisKeyPrefix starts every key the Redis store writes, after the
// project's hash tag so that one namespace's keys share a cluster slot.
const RedisKeyPrefix = resultstore.RedisKeyPrefix + "kv:"

// RedisOptions configure [NewRedis]; zero fields take defaults.
type RedisOptions struct {
	// URL is the server: redis://[user:pass@]host:port/db, or rediss://
	// for TLS. Required.
	URL string
	// Prefix starts every key; default RedisKeyPrefix.
	Prefix string
	// HMACKey, when set (store.hmac_key), authenticates every value: a
	// value planted or moved to another key by anything else that reaches
	// Redis reads as absent.
	HMACKey []byte
	// Client, when set, is the client the store uses instead of one of
	// its own at URL: the replica's one client of store.redis_url, shared
	// by all its stores; Close then leaves it open (see
	// [resultstore.StoreClient]).
	Client *redis.Client
}

// Redis is a [Store] on a Redis server, shared by every replica that
// points at it. A value is the string <prefix><ns>\x00v:<key> (Redis
// expires it itself); each namespace keeps a sorted set of its keys,
// <prefix><ns>\x00i, for ordered listing by prefix (members whose value
// expired are dropped when a listing meets them). A Redis that cannot be
// reached fails with [ErrUnavailable]; the client reconnects on its own.
type Redis struct {
	client resultstore.StoreClient
	prefix string
	key    []byte
}

// NewRedis returns a store on the server at o.URL. It does not wait for
// the server: the first operation does.
func NewRedis(o RedisOptions) (*Redis, error) {
	client, err := resultstore.ClientFor(o.Client, o.URL, 2)
	if err != nil {
		return nil, err
	}
	if o.Prefix == "" {
		o.Prefix = RedisKeyPrefix
	}
	return &Redis{client: client, prefix: o.Prefix, key: o.HMACKey}, nil
}

func (r *Redis) valueKey(ns, key string) string { return r.prefix + ns + "\x00v:" + key }
func (r *Redis) indexKey(ns string) string      { return r.prefix + ns + "\x00i" }

func (r *Redis) wrap(err error) error {
	return fmt.Errorf("store (redis %s): %w (%w)", r.client.Options().Addr, err, ErrUnavailable)
}

// seal and unseal authenticate a value under store.hmac_key.
func (r *Redis) seal(ns, key string, v []byte) []byte {
	return resultstore.Seal(r.key, r.valueKey(ns, key), v)
}

func (r *Redis) unseal(ns, key string, raw string) ([]byte, bool) {
	v, err := resultstore.Unseal(r.key, r.valueKey(ns, key), []byte(raw))
	return v, err == nil
}

// Close implements [Store].
func (r *Redis) Close() error { return r.client.Close() }

// Get implements [Store].
func (r *Redis) Get(ctx context.Context, ns, key string) ([]byte, error) {
	if err := check(ns, key); err != nil {
		return nil, err
	}
	raw, err := r.client.Get(ctx, r.valueKey(ns, key)).Result()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("%s/%s: %w", ns, key, ErrNotFound)
	}
	if err != nil {
		return nil, r.wrap(err)
	}
	v, ok := r.unseal(ns, key, raw)
	if !ok {
		return nil, fmt.Errorf("%s/%s (fails its integrity check): %w", ns, key, ErrNotFound)
	}
	return v, nil
}

// queue adds one change to a transaction.
func (r *Redis) queue(p redis.Pipeliner, ctx context.Context, ns string, c Change) {
	if c.Delete {
		p.Del(ctx, r.valueKey(ns, c.Key))
		p.ZRem(ctx, r.indexKey(ns), c.Key)
		return
	}
	p.Set(ctx, r.valueKey(ns, c.Key), r.seal(ns, c.Key, c.Value), max(c.TTL, 0))
	p.ZAdd(ctx, r.indexKey(ns), redis.Z{Member: c.Key})
}

// Put implements [Store].
func (r *Redis) Put(ctx context.Context, ns, key string, value []byte, ttl time.Duration) error {
	if err := check(ns, key); err != nil {
		return err
	}
	_, err := r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		r.queue(p, ctx, ns, Change{Key: key, Value: value, TTL: ttl})
		return nil
	})
	if err != nil {
		return r.wrap(err)
	}
	return nil
}

// Delete implements [Store].
func (r *Redis) Delete(ctx context.Context, ns, key string) error {
	if err := check(ns, key); err != nil {
		return err
	}
	_, err := r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		r.queue(p, ctx, ns, Change{Key: key, Delete: true})
		return nil
	})
	if err != nil {
		return r.wrap(err)
	}
	return nil
}

// List implements [Store].
func (r *Redis) List(ctx context.Context, ns string, o ListOptions) ([]Entry, error) {
	if err := check(ns); err != nil {
		return nil, err
	}
	limit := o.limit()
	lo := "-"
	if o.Prefix != "" {
		lo = "[" + o.Prefix
	}
	if o.After != "" && o.After >= o.Prefix {
		lo = "(" + o.After
	}
	hi := "+"
	if succ, ok := successor(o.Prefix); ok {
		hi = "(" + succ
	}
	var out []Entry
	for len(out) < limit {
		batch := limit - len(out)
		keys, err := r.client.ZRangeByLex(ctx, r.indexKey(ns), &redis.ZRangeBy{Min: lo, Max: hi, Count: int64(batch)}).Result()
		if err != nil {
			return nil, r.wrap(err)
		}
		if len(keys) == 0 {
			break
		}
		vkeys := make([]string, len(keys))
		for i, k := range keys {
			vkeys[i] = r.valueKey(ns, k)
		}
		vals, err := r.client.MGet(ctx, vkeys...).Result()
		if err != nil {
			return nil, r.wrap(err)
		}
		var gone []any
		for i, v := range vals {
			s, ok := v.(string)
			if !ok {
				gone = append(gone, keys[i])
				continue
			}
			if val, ok := r.unseal(ns, keys[i], s); ok {
				out = append(out, Entry{Key: keys[i], Value: val})
			}
		}
		if len(gone) > 0 {
			// Expired values: drop their index members, unless a write put
			// them back meanwhile (the script checks the value again).
			if err := dropGone.Run(ctx, r.client, []string{r.indexKey(ns), r.prefix + ns + "\x00v:"}, gone...).Err(); err != nil {
				return nil, r.wrap(err)
			}
		}
		if len(keys) < batch {
			break
		}
		lo = "(" + keys[len(keys)-1]
	}
	return out, nil
}

// dropGone removes index members (ARGV) whose value key (KEYS[2] ..
// member) does not exist from the index KEYS[1].
var dropGone = redis.NewScript(`
for _, m in ipairs(ARGV) do
  if redis.call('EXISTS', KEYS[2] .. m) == 0 then redis.call('ZREM', KEYS[1], m) end
end
return 0`)

// successor is the least string greater than every string with prefix p,
// if there is one.
func successor(p string) (string, bool) {
	b := []byte(p)
	for len(b) > 0 && b[len(b)-1] == 0xff {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return "", false
	}
	b[len(b)-1]++
	return string(b), true
}

// backOff waits a random time before an Update's next try, up to a bound
// that doubles with each lost try (conflictBackoff, at most 64 times it):
// writers that keep colliding spread out instead of retrying in step, so
// that no one loses maxUpdateTries times in a row. It returns early with
// the context's error.
func backOff(ctx context.Context, try int) error {
	bound := conflictBackoff << min(try, 6)
	t := time.NewTimer(rand.N(bound) + time.Microsecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// conflictBackoff is the bound of the wait after an Update's first lost try.
const conflictBackoff = 100 * time.Microsecond

// Update implements [Store]: WATCH the keys, read them, run fn and write
// its changes in MULTI/EXEC; a concurrent write to a key makes it start
// again after a random wait (see backOff), at most maxUpdateTries times, then
// [ErrConflict].
func (r *Redis) Update(ctx context.Context, ns string, keys []string, fn func(map[string][]byte) ([]Change, error)) error {
	if err := check(ns, keys...); err != nil {
		return err
	}
	vkeys := make([]string, len(keys))
	for i, k := range keys {
		vkeys[i] = r.valueKey(ns, k)
	}
	var fnErr error
	txf := func(tx *redis.Tx) error {
		vals, err := tx.MGet(ctx, vkeys...).Result()
		if err != nil {
			return err
		}
		cur := map[string][]byte{}
		for i, v := range vals {
			if s, ok := v.(string); ok {
				if val, ok := r.unseal(ns, keys[i], s); ok {
					cur[keys[i]] = val
				}
			}
		}
		changes, err := decide(fn, keys, cur)
		if err != nil {
			fnErr = err
			return err
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for _, c := range changes {
				r.queue(p, ctx, ns, c)
			}
			return nil
		})
		return err
	}
	for try := range maxUpdateTries {
		err := r.client.Watch(ctx, txf, vkeys...)
		switch {
		case fnErr != nil:
			return fnErr
		case errors.Is(err, redis.TxFailedErr):
			if err := backOff(ctx, try); err != nil {
				return r.wrap(err)
			}
			continue
		case err != nil:
			return r.wrap(err)
		}
		return nil
	}
	return fmt.Errorf("%s: %w", ns, ErrConflict)
}
