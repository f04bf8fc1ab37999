package backend

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
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

// ErrBusy: a backend with sessions: per_client has max_sessions clients'
// own sessions open and cannot open another.
var ErrBusy error = &sentinel{CodeBusy, "backend has no room for another client session"}

// ownSession is a client's own session, or the attempt to open it.
type ownSession struct {
	ready chan struct{} // closed once c or err is set
	c     *conn
	err   error
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
	caller := callerFrom(ctx)
	if !b.wantsOwn(caller, shared) {
		return shared, nil
	}
	c, err := b.ownFor(ctx, caller)
	if err == ErrBusy && b.spec.Sessions != config.SessionsPerClient {
		b.log.Warn("no room for another client session (backends.<name>.max_sessions); the client shares the backend's session",
			slog.String("client", caller.Key), slog.Int("max_sessions", b.spec.MaxSessions))
		return shared, nil
	}
	return c, err
}

// ownFor returns caller's own session, opening it if needed; one that
// failed or died is replaced once.
func (b *backend) ownFor(ctx context.Context, caller *Caller) (*conn, error) {
	for attempt := 0; ; attempt++ {
		b.mu.Lock()
		s := b.own[caller.Key]
		if s == nil {
			if b.state == StateStopped {
				b.mu.Unlock()
				return nil, fmt.Errorf("backend %q: %w", b.spec.Name, ErrClosed)
			}
			if len(b.own) >= b.spec.MaxSessions {
				b.mu.Unlock()
				return nil, ErrBusy
			}
			s = &ownSession{ready: make(chan struct{})}
			if b.own == nil {
				b.own = map[string]*ownSession{}
			}
			b.own[caller.Key] = s
			b.mu.Unlock()
			go b.openOwn(s, caller)
		} else {
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

// openOwn opens caller's own session into s, within ConnectTimeout; the
// session lives until Release, its death or the backend's end.
func (b *backend) openOwn(s *ownSession, caller *Caller) {
	defer close(s.ready)
	b.mu.Lock()
	parent := b.life
	b.mu.Unlock()
	if parent == nil {
		parent = context.Background()
	}
	life, cancel := context.WithCancel(parent)
	c := &conn{ctx: life, cancel: cancel, done: make(chan struct{}), owner: caller.Key}
	cctx, stop := context.WithTimeout(life, b.opts.ConnectTimeout)
	defer stop()
	version := caller.ProtocolVersion
	if pin := b.spec.ProtocolVersion; pin != "" && (version == "" || pin < version) {
		version = pin // the backend speaks nothing newer
	}
	p := sessionProfile{version: version, caps: caller.Capabilities, requests: caller.Requests, onLog: caller.OnLog}
	if err := b.openSession(cctx, c, p); err != nil {
		cancel()
		if c.proc != nil {
			c.proc.signal(sigKill)
			c.stderr.flush()
		}
		s.err = b.annotate(fmt.Errorf("backend %q: opening the client's own session: %w", b.spec.Name, err))
		b.log.Warn("opening a client's own session failed", slog.String("client", caller.Key), slog.Any("error", s.err))
		return
	}
	if caller.OnLog != nil {
		b.askForLogs(cctx, c)
	}
	c.connectedAt = time.Now()
	s.c = c
	b.log.Info("client's own session opened", slog.String("client", caller.Key),
		slog.String("protocol_version", c.sess.InitializeResult().ProtocolVersion), slog.Int("pid", c.proc.pid()))
	go func() {
		<-c.done // died by itself; Release and shutdown tear it down too
		b.dropOwn(caller.Key, s)
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
