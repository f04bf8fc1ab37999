package app

import (
	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/backendauth"
	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/internal/surface"
)

// newStore returns the store for stored results or run records (kind, a
// key prefix): on Redis when store.redis_url is set, in memory otherwise,
// with the TTL and byte budget of sandbox.output.
func newStore(cfg *config.Config, kind string) (resultstore.Store, error) {
	o := cfg.Sandbox.Output
	limits := resultstore.Limits{TTL: o.ResultTTL, MaxBytes: int(o.ResultStoreBytes)}
	if cfg.Store.RedisURL == "" {
		return resultstore.NewMemory(limits), nil
	}
	return resultstore.NewRedis(resultstore.RedisOptions{URL: cfg.Store.RedisURL, Limits: limits,
		Prefix: resultstore.RedisKeyPrefix + kind, HMACKey: []byte(cfg.Store.HMACKey)})
}

// newJournals returns the store of durable runs' journals
// (sandbox.durable): on Redis when store.redis_url is set (a paused run then
// resumes on any replica), in memory otherwise; nil with durability off.
func newJournals(cfg *config.Config) (resultstore.Journals, error) {
	if cfg.Sandbox.Durable == "off" {
		return nil, nil
	}
	s := cfg.Sandbox
	if cfg.Store.RedisURL == "" {
		// Room for the journals of the runs that can be paused at once.
		return resultstore.NewMemoryJournals(s.DurableMaxBytes*s.MaxConcurrent*4, []byte(cfg.Store.HMACKey)), nil
	}
	return resultstore.NewRedisJournals(resultstore.RedisOptions{URL: cfg.Store.RedisURL,
		Prefix: resultstore.RedisKeyPrefix + "journals:", HMACKey: []byte(cfg.Store.HMACKey)}, s.DurableMaxBytes)
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
// replica); nil (each backend's token file) otherwise.
func LoginTokens(cfg *config.Config) (*backendauth.RedisTokens, error) {
	if cfg.Store.RedisURL == "" || cfg.Store.TokenKey == "" {
		return nil, nil
	}
	return backendauth.NewRedisTokens(cfg.Store.RedisURL, cfg.Store.TokenKey)
}
