package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/backendauth"
	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/internal/surface"
)

// The stores of [newStore]: stored results (sandbox.output.result_store_bytes)
// and run records (store.max_bytes); each is also its metrics' label and,
// with ":", its Redis key prefix.
const (
	storeResults = "results"
	storeRuns    = "runs"
)

// sharedRedisRetries is how many times the replica's one Redis client
// retries a failed command (what the stores that guard runs had on their
// own clients; the tool cache and the search vectors had 1, the logins 3).
const sharedRedisRetries = 2

// sharedRedis is the replica's one client of store.redis_url, which every
// Redis store of the replica uses with its own key prefix (one pool of
// connections, not one per store); nil without store.redis_url. The App
// closes it once, after every store.
func sharedRedis(cfg *config.Config) (*redis.Client, error) {
	if cfg.Store.RedisURL == "" {
		return nil, nil
	}
	return resultstore.NewRedisClient(cfg.Store.RedisURL, sharedRedisRetries)
}

// newStore returns the store for stored results or run records (kind): on
// Redis (through client, the replica's shared one) when store.redis_url is
// set, in memory otherwise, with the TTL of sandbox.output and a byte cap
// of maxBytes; onFull is called on each STORE_FULL refusal.
func newStore(cfg *config.Config, client *redis.Client, kind string, maxBytes int64, onFull func()) (resultstore.Store, error) {
	limits := resultstore.Limits{TTL: cfg.Sandbox.Output.ResultTTL, MaxBytes: int(maxBytes)}
	if cfg.Store.RedisURL == "" {
		return resultstore.NewMemory(limits, resultstore.WithOnFull(onFull)), nil
	}
	return resultstore.NewRedis(resultstore.RedisOptions{URL: cfg.Store.RedisURL, Client: client, Limits: limits,
		Prefix: resultstore.RedisKeyPrefix + kind + ":", HMACKey: []byte(cfg.Store.HMACKey), OnFull: onFull})
}

// storeBytes reads what each store holds (isogate_store_bytes); a Redis
// that does not answer leaves its store out of the scrape.
func storeBytes(stores map[string]resultstore.Store) map[string]int64 {
	out := make(map[string]int64, len(stores))
	for name, s := range stores {
		switch s := s.(type) {
		case *resultstore.Memory:
			total, _ := s.Bytes("")
			out[name] = int64(total)
		case *resultstore.Redis:
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			n, err := s.Bytes(ctx)
			cancel()
			if err == nil {
				out[name] = n
			}
		}
	}
	return out
}

// newJournals returns the store of durable runs' journals
// (sandbox.durable): on Redis when store.redis_url is set (a paused run then
// resumes on any replica; through client, the replica's shared one), in
// memory otherwise; nil with durability off.
func newJournals(cfg *config.Config, client *redis.Client) (resultstore.Journals, error) {
	if cfg.Sandbox.Durable == "off" {
		return nil, nil
	}
	s := cfg.Sandbox
	if cfg.Store.RedisURL == "" {
		// Room for the journals of the runs that can be paused at once.
		return resultstore.NewMemoryJournals(s.DurableMaxBytes*s.MaxConcurrent*4, []byte(cfg.Store.HMACKey)), nil
	}
	return resultstore.NewRedisJournals(resultstore.RedisOptions{URL: cfg.Store.RedisURL, Client: client,
		Prefix: resultstore.RedisKeyPrefix + "journals:", HMACKey: []byte(cfg.Store.HMACKey)}, s.DurableMaxBytes)
}

// warnDurableWithoutKey warns that sandbox.durable: all on Redis without
// store.hmac_key journals every call but never lets another replica take a
// task over: a journal read from Redis without a key could have been
// planted, so the taker fails the task with REPLICA_LOST instead of
// replaying it. The configuration is valid (the journals still serve
// paused runs on the replica that wrote them), so it is a warning, given
// once at start, where an operator who asked for takeover looks.
func warnDurableWithoutKey(logger *slog.Logger, cfg *config.Config) {
	if cfg.Sandbox.Durable != "all" || cfg.Store.RedisURL == "" || cfg.Store.HMACKey != "" {
		return
	}
	logger.Warn("sandbox.durable: all without store.hmac_key: a task whose replica dies is not taken over by another " +
		"replica but fails with REPLICA_LOST (a journal read from Redis without a key could have been planted); " +
		"set store.hmac_key, the same long random secret on every replica")
}

// taskOptions are server.tasks, with the task state kept beside the
// stored results: in Redis (shared by every replica) when they are there,
// in memory otherwise.
func taskOptions(cfg *config.Config, results resultstore.Store) surface.TaskOptions {
	opts := surface.TaskOptions{MaxTTL: cfg.Server.Tasks.MaxTTL, MaxPerPrincipal: cfg.Server.Tasks.MaxPerPrincipal}
	if r, ok := results.(*resultstore.Redis); ok {
		opts.Store = resultstore.NewRedisTasks(r)
		opts.Leases, opts.LeaseTTL = resultstore.NewRedisLeases(r), cfg.Store.LeaseTTL
	}
	return opts
}

// LoginTokens is where `isogate login` keeps backends' tokens: Redis,
// encrypted, with store.redis_url and store.token_key (shared by every
// replica); nil (each backend's token file) otherwise. The store has a
// client of its own (the gateway's shares the replica's: loginTokens).
func LoginTokens(cfg *config.Config) (*backendauth.RedisTokens, error) {
	return loginTokens(cfg, nil)
}

// loginTokens is LoginTokens through client when it is set (the replica's
// shared client).
func loginTokens(cfg *config.Config, client *redis.Client) (*backendauth.RedisTokens, error) {
	if cfg.Store.RedisURL == "" || cfg.Store.TokenKey == "" {
		return nil, nil
	}
	if client != nil {
		return backendauth.NewRedisTokensShared(client, cfg.Store.TokenKey)
	}
	return backendauth.NewRedisTokens(cfg.Store.RedisURL, cfg.Store.TokenKey)
}
