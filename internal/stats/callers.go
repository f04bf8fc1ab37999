package stats

import (
	"context"
	"sync"
	"time"
)

// DefaultMaxCallers bounds the callers whose counters [Callers] keeps.
const DefaultMaxCallers = 4096

// Callers keeps counters per caller (a client session, or a principal):
// what each caller sees in isogate://stats. Past Max callers the one used
// least recently is forgotten. The zero value is ready to use.
type Callers struct {
	// Max bounds the callers kept; 0: DefaultMaxCallers.
	Max int

	mu    sync.Mutex
	byKey map[string]*callerEntry
}

type callerEntry struct {
	c    *Counters
	used time.Time
}

// For returns key's counters, made on first use.
func (cs *Callers) For(key string) *Counters {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.byKey == nil {
		cs.byKey = map[string]*callerEntry{}
	}
	e := cs.byKey[key]
	if e == nil {
		max := cs.Max
		if max <= 0 {
			max = DefaultMaxCallers
		}
		if len(cs.byKey) >= max {
			var oldest string
			for k, v := range cs.byKey {
				if oldest == "" || v.used.Before(cs.byKey[oldest].used) {
					oldest = k
				}
			}
			delete(cs.byKey, oldest)
		}
		e = &callerEntry{c: New()}
		cs.byKey[key] = e
	}
	e.used = time.Now()
	return e.c
}

// Snapshot is key's counters (empty ones for a caller never seen).
func (cs *Callers) Snapshot(key string) Snapshot {
	cs.mu.Lock()
	e := cs.byKey[key]
	cs.mu.Unlock()
	if e == nil {
		return New().Snapshot()
	}
	return e.c.Snapshot()
}

type callerKey struct{}

// WithCaller returns ctx naming the caller whose counters the calls and
// runs made with it count in (besides the gateway's).
func WithCaller(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, callerKey{}, key)
}

// CallerFrom returns the caller ctx names, "" for none.
func CallerFrom(ctx context.Context) string {
	k, _ := ctx.Value(callerKey{}).(string)
	return k
}
