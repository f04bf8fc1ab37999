package authn

import (
	"context"
	"sync"
	"time"
)

// issuerTimeout bounds one request to the issuer (discovery, JWKS,
// introspection).
const issuerTimeout = 10 * time.Second

// refresher runs a fetch from the issuer (discovery, the JWKS) on behalf
// of every token check that needs it: one fetch at a time, shared by all
// the checks that wait for it (single flight), and at most one started
// per gap, whether the last one succeeded or failed (so a failing issuer
// is not asked again for every token: the failure is remembered for the
// gap). The fetch runs on its own goroutine with its own timeout, holding
// no lock a token check needs: checks that can be answered without it are
// not kept waiting.
type refresher struct {
	gap   time.Duration
	now   func() time.Time
	fetch func(ctx context.Context) error // stores what it fetched itself

	mu      sync.Mutex
	started time.Time // start of the last fetch
	lastErr error     // outcome of the last finished fetch
	running *attempt  // the fetch under way, or nil
}

// attempt is one fetch; done is closed when it has ended with err.
type attempt struct {
	done chan struct{}
	err  error
}

// begin returns the fetch under way, or starts one when none started in
// the last gap; nil when neither (the caller answers from what it has,
// see lastError).
func (r *refresher) begin() *attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running != nil {
		return r.running
	}
	if !r.started.IsZero() && r.now().Sub(r.started) < r.gap {
		return nil
	}
	a := &attempt{done: make(chan struct{})}
	r.running, r.started = a, r.now()
	go r.run(a)
	return a
}

func (r *refresher) run(a *attempt) {
	ctx, cancel := context.WithTimeout(context.Background(), issuerTimeout)
	defer cancel()
	err := r.fetch(ctx)
	r.mu.Lock()
	r.lastErr, r.running, a.err = err, nil, err
	r.mu.Unlock()
	close(a.done)
}

// lastError is the failure of the last finished fetch (nil after a
// success, or before any fetch).
func (r *refresher) lastError() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastErr
}

// wait waits until a has ended or ctx is done.
func (a *attempt) wait(ctx context.Context) error {
	select {
	case <-a.done:
		return a.err
	case <-ctx.Done():
		return ctx.Err()
	}
}
