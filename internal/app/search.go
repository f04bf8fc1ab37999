package app

import (
	"io"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/embedsearch"
)

// newSemantic builds search's embeddings (search.embeddings): nil when no
// endpoint is configured. Tool vectors are kept in Redis when
// store.redis_url is set (one replica computes them, the others read
// them), in memory otherwise; they are computed in the background from
// the first catalogue change on.
func (a *App) newSemantic(cfg *config.Config) (*embedsearch.Semantic, error) {
	e := cfg.Search.Embeddings
	if e.URL == "" {
		return nil, nil
	}
	var store embedsearch.Store // nil: this process's memory
	if cfg.Store.RedisURL != "" {
		r := embedsearch.NewRedisShared(a.redis, []byte(cfg.Store.HMACKey))
		a.closers = append(a.closers, r)
		store = r
	}
	s := embedsearch.New(embedsearch.Options{Client: embedsearch.NewClient(e), Catalog: a.Catalog, Store: store,
		QueryTimeout: e.Timeout, BatchSize: e.BatchSize, Logger: a.logger, Metrics: a.Metrics})
	// Stopped before the store it writes to is closed.
	a.closers = append([]io.Closer{s}, a.closers...)
	return s, nil
}
