package surface

import (
	"context"
	"time"
)

// storeReadiness is what /readyz says of the durable store (internal/kv:
// saved programs, their state, skills): whether it answers, and why not.
//
// A store that does not answer does not make the gateway unready, as the
// results' Redis does not: with store.redis_url it is shared, so unready
// would take every replica out of the load balancer at once while the
// backends' tools, call_tool_chain and run_code still serve; the calls
// that need the store fail with STORE_UNAVAILABLE or SKILLS_UNAVAILABLE
// (retryable) whichever replica they reach. A bbolt file held by another
// process (two gateways on one store.data_dir) is a configuration to fix:
// this detail, isogate_store_up{store="kv"} and isogate doctor say so.
type storeReadiness struct {
	Up bool `json:"up"`
	// Error is why it does not answer (for server.auth.admins once admins
	// are named, with metrics_auth: it names the file).
	Error string `json:"error,omitempty"`
}

// storePingWait bounds /readyz's wait for the store (a bbolt file held by
// another process answers after its open timeout, 2 s).
const storePingWait = 5 * time.Second

// storeReadiness asks the durable store whether it answers; nil when it is
// not reported.
func (sf *Surface) storeReadiness(ctx context.Context) *storeReadiness {
	if sf.kvPing == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, storePingWait)
	defer cancel()
	if err := sf.kvPing(ctx); err != nil {
		return &storeReadiness{Error: err.Error()}
	}
	return &storeReadiness{Up: true}
}

// brief is r without the error.
func (r *storeReadiness) brief() *storeReadiness {
	if r == nil {
		return nil
	}
	return &storeReadiness{Up: r.Up}
}
