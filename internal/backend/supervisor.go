package backend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// run is the supervisor loop: connect, serve until the connection fails,
// back off, reconnect, until ctx is cancelled.
func (b *backend) run(ctx context.Context) {
	defer close(b.done)
	defer b.closeOwn() // after the state is Stopped: no new ones
	b.update(func() { b.life = ctx })
	defer b.update(func() {
		b.state = StateStopped
		b.conn = nil
	})
	if b.invalid != nil {
		b.log.Error("backend not started", slog.Any("error", b.invalid))
		<-ctx.Done()
		return
	}

	failures := 0 // consecutive short-lived connections, drives the backoff
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			manual, ok := b.awaitRestart(ctx, failures)
			if !ok {
				return
			}
			if manual {
				failures = 0
			}
			b.update(func() { b.restarts++ })
			b.log.Info("restarting backend", slog.Int("restarts", b.restartCount()))
		}

		b.update(func() {
			b.attempting = true
			b.nextRetry = time.Time{}
		})
		drain(b.retry) // this attempt answers every retry requested so far
		c, err := b.connect(ctx)
		if ctx.Err() != nil {
			if c != nil {
				b.teardown(c)
			}
			return
		}
		if err != nil {
			failures++
			b.log.Warn("backend connection failed", slog.String("error", Redact(err.Error(), b.spec.Backend)))
			b.update(func() {
				b.state = StateUnhealthy
				b.lastErr = err.Error()
				b.attempting = false
				b.connectFailed = true
				b.lastAttempt = time.Now()
			})
			continue
		}

		reason := b.serve(ctx, c)
		if ctx.Err() != nil {
			return
		}
		if time.Since(c.connectedAt) >= b.opts.RestartBackoffMax {
			failures = 0 // it was stable: restart promptly
		} else {
			failures++
		}
		b.log.Warn("backend unhealthy", slog.String("reason", Redact(reason, b.spec.Backend)))
	}
}

func (b *backend) restartCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.restarts
}

// awaitRestart enforces the restart budget and waits out the backoff, or
// the cool-down once the budget is exhausted. A retry requested on demand
// (a call to the backend, see backend.requestRetryLocked) ends either wait
// early. It reports whether the restart was requested manually, and false
// in ok if ctx was cancelled.
func (b *backend) awaitRestart(ctx context.Context, failures int) (manual, ok bool) {
	select {
	case <-b.restartReq:
		return true, true
	default:
	}
	wait, allowed := b.takeRestartBudget(b.backoff(failures))
	if !allowed {
		b.log.Error("restart budget exhausted; retrying after the cool-down or on the next call",
			slog.Duration("cooldown", wait), slog.String("last_error", b.lastError()))
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false, false
	case <-b.restartReq:
		return true, true
	case <-b.retry:
		return false, true
	case <-t.C:
		return false, true
	}
}

// takeRestartBudget records a restart if the budget allows it and returns
// the wait before it (backoff). Otherwise it marks the backend as given up
// (until its next successful connection) and returns the cool-down: one
// attempt follows it, and a failure lands here again while the window is
// still full. Either way the status shows when the attempt is due.
func (b *backend) takeRestartBudget(backoff time.Duration) (wait time.Duration, allowed bool) {
	wait, allowed = backoff, true
	b.update(func() {
		defer func() { b.nextRetry = time.Now().Add(wait) }()
		if b.opts.RestartBudget < 0 {
			return
		}
		now := time.Now()
		cutoff := now.Add(-b.opts.RestartWindow)
		b.restartLog = slices.DeleteFunc(b.restartLog, func(t time.Time) bool { return t.Before(cutoff) })
		if len(b.restartLog) >= b.opts.RestartBudget {
			wait, allowed = b.opts.RetryCooldown, false
			b.givenUp = true
			b.state = StateUnhealthy
			return
		}
		b.restartLog = append(b.restartLog, now)
	})
	return wait, allowed
}

// backoff returns base·2^(failures-1), capped at max, with ±20% jitter.
func (b *backend) backoff(failures int) time.Duration {
	d := b.opts.RestartBackoffBase
	for i := 1; i < failures && d < b.opts.RestartBackoffMax; i++ {
		d *= 2
	}
	d = min(d, b.opts.RestartBackoffMax)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

func (b *backend) lastError() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return Redact(b.lastErr, b.spec.Backend)
}

// serve watches an established connection until it fails, then marks the
// backend unhealthy, tears the connection down and returns the reason.
func (b *backend) serve(ctx context.Context, c *conn) string {
	ticker := time.NewTicker(b.opts.HealthInterval)
	defer ticker.Stop()
	var reason string
loop:
	for {
		select {
		case <-ctx.Done():
			b.teardown(c)
			return "shutdown"
		case <-c.done:
			reason = b.exitReason(c)
			break loop
		case <-b.kick:
			if !c.broken.Load() {
				continue
			}
			reason = "connection broken: " + *c.brokenErr.Load()
			break loop
		case <-b.restartReq:
			poke(b.restartReq) // let run see it and skip the backoff
			reason = "restart requested"
			break loop
		case <-b.refresh:
			b.refreshTools(ctx, c)
		case <-ticker.C:
			if err := b.ping(ctx, c); err != nil {
				reason = "health check failed: " + err.Error()
				break loop
			}
		}
	}
	b.update(func() {
		if b.conn == c {
			b.conn = nil
		}
		b.state = StateUnhealthy
		b.lastErr = reason
	})
	b.teardown(c)
	return reason
}

// exitReason describes why a connection ended by itself.
func (b *backend) exitReason(c *conn) string {
	var msg string
	if c.proc != nil {
		c.stderr.flush()
		msg = "backend process exited"
		if st := c.proc.exitStatus(); st != "" {
			msg += " (" + st + ")"
		}
	} else {
		msg = "connection closed"
		if c.waitErr != nil {
			msg += ": " + c.waitErr.Error()
		}
	}
	return b.annotate(errors.New(msg)).Error()
}

// ping checks that the backend answers. An error response still proves the
// backend is alive (some servers do not implement ping).
func (b *backend) ping(ctx context.Context, c *conn) error {
	pctx, cancel := context.WithTimeout(ctx, b.opts.HealthTimeout)
	defer cancel()
	_, err := inBackground(pctx, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, c.sess.Ping(ctx, nil)
	})
	var rpcErr *jsonrpc.Error
	if err != nil && errors.As(err, &rpcErr) && !errors.Is(err, mcp.ErrConnectionClosed) {
		b.log.Debug("ping returned an error response; treating backend as alive", slog.Any("error", err))
		return nil
	}
	if err != nil && ctx.Err() == nil && pctx.Err() != nil {
		return fmt.Errorf("no answer within %s", b.opts.HealthTimeout)
	}
	return err
}

// teardown closes a connection: in-flight calls are aborted, a stdio child
// and its process group get SIGTERM (and stdin is closed), then SIGKILL
// after KillAfter.
func (b *backend) teardown(c *conn) {
	c.cancel()
	c.proc.signal(sigTerm)
	go func() { _ = c.sess.Close() }()

	grace := time.NewTimer(b.opts.KillAfter)
	defer grace.Stop()
	select {
	case <-c.done:
	case <-grace.C:
		if c.proc != nil {
			b.log.Warn("backend did not exit after SIGTERM; sending SIGKILL",
				slog.Duration("grace", b.opts.KillAfter), slog.Int("pid", c.proc.pid()))
			c.proc.signal(sigKill)
			select {
			case <-c.done:
			case <-time.After(5 * time.Second):
				b.log.Error("backend process still not reaped after SIGKILL", slog.Int("pid", c.proc.pid()))
			}
		} else {
			b.log.Warn("backend session did not close in time", slog.Duration("grace", b.opts.KillAfter))
		}
	}
	if c.proc != nil {
		// Sweep whatever is left of the process group (grandchildren).
		c.proc.signal(sigKill)
		c.stderr.flush()
	}
}

// forceKill SIGKILLs the current stdio child, if any. Used when Close runs
// out of time.
func (b *backend) forceKill() {
	b.mu.Lock()
	procs := []*procHandle{b.proc}
	for _, s := range b.own {
		select {
		case <-s.ready:
			if s.c != nil {
				procs = append(procs, s.c.proc)
			}
		default:
		}
	}
	b.mu.Unlock()
	for _, p := range procs {
		p.signal(sigKill)
	}
}
