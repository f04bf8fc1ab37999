package kv

import (
	"context"
	"fmt"
)

// pinger is a [Store] that can say whether it is usable now.
type pinger interface {
	Ping(ctx context.Context) error
}

// Ping reports whether s can serve now: nil, or an error wrapping
// [ErrUnavailable] saying why not (a bbolt file another process holds, a
// Redis that does not answer). A store with no way to tell (in memory, a
// bbolt file this process holds) is usable. /readyz, the
// isogate_store_up metric and isogate doctor ask it.
func Ping(ctx context.Context, s Store) error {
	if p, ok := s.(pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

// Ping implements [Ping]: a store not created yet is usable (its first
// write creates it); else it is opened, as its first use would.
func (l *Lazy) Ping(ctx context.Context) error {
	if l.absent() {
		return nil
	}
	s, err := l.store()
	if err != nil {
		return err
	}
	return Ping(ctx, s)
}

// Ping implements [Ping] with a Redis PING.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.client.Ping(ctx).Err(); err != nil {
		return r.wrap(fmt.Errorf("ping: %w", err))
	}
	return nil
}
