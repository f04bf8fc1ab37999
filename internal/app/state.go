package app

import (
	"fmt"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/state"
)

// storeState is the store label of programs' state in metrics.
const storeState = "state"

// programState is programs' own state (state.get/set/delete/list), kept
// where saved programs are (programStore: Redis with store.redis_url, else
// the bbolt file in store.data_dir, opened on first use), bounded by the
// state.* quotas. The store is closed with the app.
func (a *App) programState(cfg *config.Config) (*state.State, error) {
	store, err := programStore(cfg, a.redis)
	if err != nil {
		return nil, fmt.Errorf("state store: %w", err)
	}
	a.closers = append(a.closers, store)
	return state.New(state.Options{Store: store, MaxKeys: cfg.State.MaxKeys, MaxBytes: cfg.State.MaxBytes, MaxTTL: cfg.State.MaxTTL,
		OnRefused: func() { a.Metrics.StoreRefusal(storeState) }})
}
