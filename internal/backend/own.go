package backend

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/v8sandbox"
)

// A client's own backend session.
//
// Every backend has one supervised session that all clients share (its
// tool list, health checks and restarts are the supervisor's). A backend
// can call back into its client during a call (sampling, elicitation,
// roots) and, on the shared session, the gateway must guess which client
// a request is for; a session on 2026-07-28 may not send such requests at
// all, so a client of an earlier version could never receive them. A
// client that needs them gets a session of its own ([Spec.Sessions]):
// opened at its first call, on the client's protocol version, declaring
// only the client's capabilities, its requests and log messages routed to
// that client alone. It is closed by [Manager.Release] (the client's
// session ended), when it dies (the next call opens another), and with
// the backend.

// DefaultMaxSessions is the default of [Spec.MaxSessions]
// (config.DefaultBackendMaxSessions).
const DefaultMaxSessions = 16

// roundTripVersion is the first protocol version in which a backend may
// not send requests to its client during a call (SEP-2322).
const roundTripVersion = "2026-07-28"

// A Caller is the client on whose behalf a call runs: the calls of one
// Caller.Key may get a backend session of their own (see
// [Spec.Sessions]). Attach it to a call's context with [WithCaller].
type Caller struct {
	// Key names the client session; calls with the same key share their
	// own session on each backend. Empty: the shared session.
	Key string
	// ProtocolVersion is the client's; its own sessions ask for it.
	ProtocolVersion string
	// Capabilities are the client's; its own sessions declare them (those
	// that Requests routes).
	Capabilities *mcp.ClientCapabilities
	// Requests answers the requests its own sessions receive; nil: the
	// session declares no client capabilities.
	Requests ClientRequests
	// OnLog receives the log messages of its own sessions.
	OnLog func(backend string, p *mcp.LoggingMessageParams)
}

type callerKey struct{}

// WithCaller returns ctx carrying c: [Manager.Call] and [Manager.Session]
// with that context use c's own session where the backend's [Spec.Sessions]
// gives it one.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// Shared returns ctx without its [Caller]: requests made with it go to the
// shared session (lists, subscriptions: what concerns every client, and
// whose notifications only the shared session reports).
func Shared(ctx context.Context) context.Context {
	return context.WithValue(ctx, callerKey{}, (*Caller)(nil))
}

func callerFrom(ctx context.Context) *Caller {
	c, _ := ctx.Value(callerKey{}).(*Caller)
	return c
}

type progressKey struct{}

// WithProgressToken returns ctx carrying a progress token for the tool
// calls made with it that carry none of their own (a program's calls: the
// gateway maps the backends' progress to the run's).
func WithProgressToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, progressKey{}, token)
}

// CodeBusy is the code of [ErrBusy].
const CodeBusy v8sandbox.Code = "BACKEND_BUSY"

// ErrBusy: a backend has max_sessions clients' own sessions open, each
// with a call in flight, and a client that must have its own (sessions:
// per_client, or a token-exchange backend) cannot get one.
var ErrBusy error = &sentinel{CodeBusy, "backend has no room for another client session"}

// ownSession is a client's own session, or the attempt to open it.
type ownSession struct {
	ready chan struct{} // closed once c or err is set
	c     *conn
	err   error
	used  time.Time // last handed to a call (under b.mu)
}

// ownKey names the session of its own a call with ctx gets ("": the
// shared one), and the Caller it serves (nil: none, a principal's).
//
// A backend that acts as the calling principal (auth type
// token_exchange) authenticates each session as one user: every
// principal gets sessions of its own — one per client session when the
// client has one, else one per principal. Otherwise sessions.auto,
// per_client or shared decide (wantsOwn).
func (b *backend) ownKey(ctx context.Context, shared *conn) (string, *Caller) {
	caller := callerFrom(ctx)
	if b.spec.Auth.Type == config.BackendAuthTokenExchange {
		p := authn.FromContext(ctx)
		switch {
		case p == nil:
			return "", nil // on nobody's behalf: the gateway's own token
		case caller != nil && caller.Key != "":
			return caller.Key, caller
		default:
			return "principal:" + p.Name, nil
		}
	}
	if b.wantsOwn(caller, shared) {
		return caller.Key, caller
	}
	return "", nil
}

// wantsOwn reports whether calls of caller on the shared session shared
// need a session of their own.
func (b *backend) wantsOwn(caller *Caller, shared *conn) bool {
	if caller == nil || caller.Key == "" {
		return false
	}
	switch b.spec.Sessions {
	case config.SessionsShared:
		return false
	case config.SessionsPerClient:
		return true
	}
	if caller.ProtocolVersion >= roundTripVersion || caller.Capabilities == nil {
		return false
	}
	if caller.Capabilities.Sampling == nil && caller.Capabilities.Elicitation == nil {
		return false
	}
	ir := shared.sess.InitializeResult()
	return ir != nil && ir.ProtocolVersion >= roundTripVersion
}

// session returns the connection for a call with ctx: the shared one, or
// the caller's own (opened on first use).
func (b *backend) session(ctx context.Context) (*conn, error) {
	shared, err := b.awaitReady(ctx)
	if err != nil {
		return nil, err
	}
	key, caller := b.ownKey(ctx, shared)
	if key == "" {
		return shared, nil
	}
	c, err := b.ownFor(ctx, key, caller)
	if err == ErrBusy && b.spec.Sessions == config.SessionsAuto && b.spec.Auth.Type != config.BackendAuthTokenExchange {
		b.log.Warn("no room for another client session (backends.<name>.max_sessions); the client shares the backend's session",
			slog.String("client", key), slog.Int("max_sessions", b.spec.MaxSessions))
		return shared, nil
	}
	return c, err
}

// ownFor returns the session of its own key names, opening it if needed
// (with ctx's values: the principal it authenticates as); one that failed
// or died is replaced once. When max_sessions are open, the one used
// least recently with no call in flight makes room; with none idle the
// error is ErrBusy.
func (b *backend) ownFor(ctx context.Context, key string, caller *Caller) (*conn, error) {
	for attempt := 0; ; attempt++ {
		b.mu.Lock()
		s := b.own[key]
		var evicted *ownSession
		var evictedKey string
		if s == nil {
			if b.state == StateStopped {
				b.mu.Unlock()
				return nil, fmt.Errorf("backend %q: %w", b.spec.Name, ErrClosed)
			}
			if len(b.own) >= b.spec.MaxSessions {
				if evictedKey, evicted = b.idlestOwnLocked(); evicted == nil {
					b.mu.Unlock()
					return nil, ErrBusy
				}
				delete(b.own, evictedKey)
			}
			s = &ownSession{ready: make(chan struct{})}
			if b.own == nil {
				b.own = map[string]*ownSession{}
			}
			b.own[key] = s
			s.used = time.Now()
			b.mu.Unlock()
			if evicted != nil {
				b.log.Info("closing the least recently used client session for another (backends.<name>.max_sessions)",
					slog.String("closed", evictedKey), slog.String("opened", key))
				go b.teardown(evicted.c)
			}
			go b.openOwn(s, key, caller, context.WithoutCancel(ctx))
		} else {
			s.used = time.Now()
			b.mu.Unlock()
		}
		select {
		case <-s.ready:
		case <-ctx.Done():
			return nil, fmt.Errorf("backend %q: waiting for the client's session: %w", b.spec.Name, ctx.Err())
		}
		if s.err == nil && s.c.alive() {
			return s.c, nil
		}
		b.dropOwn(caller.Key, s)
		if s.err != nil || attempt > 0 {
			if s.err != nil {
				return nil, s.err
			}
			return nil, fmt.Errorf("backend %q: %w: the client's session ended", b.spec.Name, ErrConnectionLost)
		}
	}
}

// idlestOwnLocked is the open session of its own used least recently with
// no call in flight, or nil. b.mu must be held.
func (b *backend) idlestOwnLocked() (string, *ownSession) {
	var key string
	var idlest *ownSession
	for k, s := range b.own {
		select {
		case <-s.ready:
		default:
			continue // still opening
		}
		if s.c == nil || s.c.busy() || (idlest != nil && !s.used.Before(idlest.used)) {
			continue
		}
		key, idlest = k, s
	}
	return key, idlest
}

// openOwn opens the session of its own key names into s, within
// ConnectTimeout, with the values of values (the first call's: its
// principal); it serves caller (nil: nobody's requests, no client
// capabilities). The session lives until Release, eviction, its death or
// the backend's end.
func (b *backend) openOwn(s *ownSession, key string, caller *Caller, values context.Context) {
	defer close(s.ready)
	b.mu.Lock()
	parent := b.life
	b.mu.Unlock()
	if parent == nil {
		parent = context.Background()
	}
	life, cancel := context.WithCancel(values)
	stopLife := context.AfterFunc(parent, cancel)
	defer func() {
		if s.c == nil {
			stopLife()
		}
	}()
	c := &conn{ctx: life, cancel: cancel, done: make(chan struct{}), owner: key}
	cctx, stop := context.WithTimeout(life, b.opts.ConnectTimeout)
	defer stop()
	p := sessionProfile{version: b.spec.ProtocolVersion}
	if caller != nil {
		p = sessionProfile{version: caller.ProtocolVersion, caps: caller.Capabilities, requests: caller.Requests, onLog: caller.OnLog}
		if pin := b.spec.ProtocolVersion; pin != "" && (p.version == "" || pin < p.version) {
			p.version = pin // the backend speaks nothing newer
		}
	}
	if err := b.openSession(cctx, c, p); err != nil {
		b.abandon(c)
		s.err = b.annotate(fmt.Errorf("backend %q: opening the client's own session: %w", b.spec.Name, err))
		b.log.Warn("opening a client's own session failed", slog.String("client", key), slog.Any("error", s.err))
		return
	}
	if p.onLog != nil {
		b.askForLogs(cctx, c)
	}
	c.connectedAt = time.Now()
	s.c = c
	b.log.Info("client's own session opened", slog.String("client", key),
		slog.String("protocol_version", c.sess.InitializeResult().ProtocolVersion), slog.Int("pid", c.proc.pid()))
	go func() {
		<-c.done // died by itself; Release and shutdown tear it down too
		b.dropOwn(key, s)
	}()
}

// dropOwn forgets s (if it is still caller key's) and tears it down.
func (b *backend) dropOwn(key string, s *ownSession) {
	b.mu.Lock()
	mine := b.own[key] == s
	if mine {
		delete(b.own, key)
	}
	b.mu.Unlock()
	if mine && s.c != nil {
		go b.teardown(s.c)
	}
}

// closeOwn tears down every client's own session and waits for them.
func (b *backend) closeOwn() {
	b.mu.Lock()
	all := b.own
	b.own = nil
	b.mu.Unlock()
	done := make(chan struct{}, len(all))
	for _, s := range all {
		go func() {
			<-s.ready
			if s.c != nil {
				b.teardown(s.c)
			}
			done <- struct{}{}
		}()
	}
	for range all {
		<-done
	}
}

// Release closes the backend sessions of the client key (its session
// ended). It returns at once; the sessions close in the background.
func (m *Manager) Release(key string) {
	if key == "" {
		return
	}
	for _, b := range m.current().backends {
		b.mu.Lock()
		s := b.own[key]
		b.mu.Unlock()
		if s != nil {
			go func() {
				<-s.ready
				b.dropOwn(key, s)
			}()
		}
	}
}
