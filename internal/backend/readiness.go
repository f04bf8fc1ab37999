package backend

import (
	"context"
	"fmt"
	"time"
)

// readiness says whether a backend can take a call now, and if not, whether
// waiting could help.
type readiness int

const (
	// ready: healthy with a live connection.
	ready readiness = iota
	// connecting: starting, reconnecting after a crash, or a connection
	// attempt is running: worth waiting for.
	connecting
	// down: the last connection attempt failed (or the restart budget is
	// exhausted, or the spec is invalid) and no attempt is running.
	down
	// stopped: the manager was closed.
	stopped
)

// readinessLocked classifies the backend. b.mu must be held.
func (b *backend) readinessLocked() readiness {
	switch {
	case b.state == StateStopped:
		return stopped
	case b.state == StateHealthy && b.conn != nil && b.conn.alive():
		return ready
	case b.invalid != nil:
		return down
	case b.attempting:
		return connecting
	case b.givenUp || b.connectFailed:
		return down
	}
	return connecting
}

// describeErrorLocked returns the backend's last error as reported in its
// status and in [UnavailableError]: the cause, prefixed with the restart
// budget state when it is exhausted. b.mu must be held.
func (b *backend) describeErrorLocked() string {
	if !b.givenUp || b.invalid != nil {
		return Redact(b.lastErr, b.spec.Backend)
	}
	msg := fmt.Sprintf("restart budget exhausted (%d restarts within %s)", b.opts.RestartBudget, b.opts.RestartWindow)
	if !b.nextRetry.IsZero() {
		msg += fmt.Sprintf(", next retry at %s or on the next call", b.nextRetry.UTC().Format(time.RFC3339))
	}
	return msg + "; last error: " + Redact(b.lastErr, b.spec.Backend)
}

// requestRetryLocked asks the supervisor of a down backend for a connection
// attempt now, unless the backend's configuration is invalid or the last
// attempt ended less than RestartBackoffBase ago (so a stream of calls
// cannot spawn a failing backend in a loop). It reports whether an attempt
// was requested; the backend then counts as connecting. b.mu must be held.
func (b *backend) requestRetryLocked() bool {
	if b.invalid != nil || b.state == StateStopped || time.Since(b.lastAttempt) < b.opts.RestartBackoffBase {
		return false
	}
	b.attempting = true
	poke(b.retry)
	return true
}

// unavailableLocked returns the error for a backend that cannot take calls.
// b.mu must be held.
func (b *backend) unavailableLocked() error {
	st := b.state
	if st == StateHealthy {
		st = StateUnhealthy // healthy, but the connection just died
	}
	return &UnavailableError{Backend: b.spec.Name, State: st, LastError: b.describeErrorLocked()}
}

// awaitReady returns a live connection. A healthy backend answers at once;
// for a starting or reconnecting one it waits up to StartWait (and ctx). A
// down backend is asked for an attempt on demand (see requestRetryLocked),
// which is then waited for like a reconnection; if none may be made now,
// the error comes at once.
func (b *backend) awaitReady(ctx context.Context) (*conn, error) {
	var timer *time.Timer
	for {
		b.mu.Lock()
		r := b.readinessLocked()
		if r == down && b.requestRetryLocked() {
			r = connecting
			b.log.Info("retrying a down backend on demand")
		}
		c, st, changed := b.conn, b.state, b.changed
		var errDown error
		if r == down {
			errDown = b.unavailableLocked()
		}
		b.mu.Unlock()

		switch r {
		case ready:
			return c, nil
		case stopped:
			return nil, fmt.Errorf("backend %q: %w", b.spec.Name, ErrClosed)
		case down:
			return nil, errDown
		}
		if timer == nil {
			timer = time.NewTimer(b.opts.StartWait)
			defer timer.Stop()
		}
		select {
		case <-changed:
		case <-timer.C:
			if st == StateStarting {
				return nil, &StartingError{Backend: b.spec.Name}
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			if b.state == StateStarting {
				return nil, &StartingError{Backend: b.spec.Name}
			}
			return nil, b.unavailableLocked()
		case <-ctx.Done():
			return nil, fmt.Errorf("backend %q: waiting for backend: %w", b.spec.Name, ctx.Err())
		}
	}
}

// WaitReady waits until the named backend can take a call, as a call to it
// would. It returns nil at once for a healthy backend. For one that is
// starting or reconnecting it waits up to [Options.StartWait] (the
// gateway's sandbox.backend_wait) or until ctx ends; if the backend is
// still not ready the error is a [*StartingError] (first connection) or an
// [*UnavailableError]. For a backend that is down (its last connection
// attempt failed, its restart budget is exhausted, or its spec is invalid)
// the error is an [*UnavailableError] with the message
// `backend "<name>" is unavailable: <its last error>`; if no attempt was
// made recently, WaitReady first asks for one and waits for its outcome (a
// backend that has come back is then ready). An unknown backend yields an
// [*UnknownBackendError]; a closed manager [ErrClosed]. v8sandbox.CodeOf
// classifies every error it returns.
func (m *Manager) WaitReady(ctx context.Context, name string) error {
	b := m.current().backends[name]
	if b == nil {
		return &UnknownBackendError{Backend: name}
	}
	_, err := b.awaitReady(ctx)
	return err
}

// NotReady returns the configured backends that cannot take a call right
// now, sorted: connecting (starting, or reconnecting after a crash) and
// down (last attempt failed, even while a retry runs; restart budget
// exhausted; invalid spec). It does
// not wait and does not trigger retries; it is cheap enough to call per
// request.
func (m *Manager) NotReady() (connectingNames, downNames []string) {
	set := m.current()
	for _, name := range set.names {
		b := set.backends[name]
		b.mu.Lock()
		r := b.readinessLocked()
		failed := b.invalid != nil || b.givenUp || b.connectFailed
		b.mu.Unlock()
		switch {
		case r == ready || r == stopped:
		case failed: // down, even while a retry runs
			downNames = append(downNames, name)
		default:
			connectingNames = append(connectingNames, name)
		}
	}
	return connectingNames, downNames
}
