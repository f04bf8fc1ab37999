package surface

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/stats"
	"github.com/isogate/isogate/internal/tasks"
)

// requestKeyHeader carries the key of the HTTP request a message arrived in
// from the HTTP layer to the MCP handlers (tasks.RequestKeyHeader).
const requestKeyHeader = tasks.RequestKeyHeader

// httpRequests remembers the context of every POST in flight so that a
// request handler can end when its HTTP request goes away (the client
// dropped the connection), in session mode too, where the go-sdk detaches
// handlers from their HTTP request.
type httpRequests struct {
	next atomic.Uint64
	ctxs sync.Map // key → context.Context
}

// link registers each POST's context under a fresh key for the handlers.
func (l *httpRequests) link(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(requestKeyHeader)
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		key := strconv.FormatUint(l.next.Add(1), 36)
		l.ctxs.Store(key, r.Context())
		defer l.ctxs.Delete(key)
		r.Header.Set(requestKeyHeader, key)
		next.ServeHTTP(w, r)
	})
}

// bind returns ctx, also cancelled when the HTTP request that carried req
// goes away. stop releases the binding.
func (l *httpRequests) bind(ctx context.Context, req mcp.Request) (_ context.Context, stop func()) {
	extra := req.GetExtra()
	if extra == nil || extra.Header == nil {
		return ctx, func() {}
	}
	v, ok := l.ctxs.Load(extra.Header.Get(requestKeyHeader))
	if !ok {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	unhook := context.AfterFunc(v.(context.Context), func() {
		cancel(fmt.Errorf("the client's HTTP request went away"))
	})
	return ctx, func() { unhook(); cancel(nil) }
}

// sessionTracker bounds the open client sessions: past max, the session
// idle the longest (no request in flight) is closed. It is also the one
// place that waits for a session's end: state kept per session registers
// a close hook (onClose) and asks for the session to be watched (watch).
type sessionTracker struct {
	max    int
	logger *slog.Logger

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*sessionUse
	byID     map[string]*sessionUse // the same sessions by their Mcp-Session-Id
	watched  map[*mcp.ServerSession]bool
	hooks    []func(*mcp.ServerSession) // run when a watched session ends
}

type sessionUse struct {
	id       string // its Mcp-Session-Id
	last     time.Time
	inflight int
	user     string // the principal that opened it (TokenInfo.UserID); "" without authentication
}

func newSessionTracker(max int, logger *slog.Logger) *sessionTracker {
	if max <= 0 {
		max = config.DefaultMaxSessions
	}
	return &sessionTracker{max: max, logger: logger, sessions: map[*mcp.ServerSession]*sessionUse{},
		byID: map[string]*sessionUse{}, watched: map[*mcp.ServerSession]bool{}}
}

// onClose registers fn to run, after the tracker has dropped it, for each
// watched session that ends: where per-session state is forgotten.
// Register before serving.
func (t *sessionTracker) onClose(fn func(*mcp.ServerSession)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.hooks = append(t.hooks, fn)
}

// watch makes sure ss's end runs the close hooks. Call it after storing
// state for ss: a session that has ended already runs them at once. A
// session watched already changes nothing.
func (t *sessionTracker) watch(ss *mcp.ServerSession) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.watchLocked(ss)
}

func (t *sessionTracker) watchLocked(ss *mcp.ServerSession) {
	if t.watched[ss] {
		return
	}
	t.watched[ss] = true
	go func() {
		_ = ss.Wait()
		t.closed(ss)
	}()
}

// closed drops the ended session ss and runs the close hooks.
func (t *sessionTracker) closed(ss *mcp.ServerSession) {
	t.mu.Lock()
	if use, ok := t.sessions[ss]; ok {
		t.dropLocked(ss, use)
	}
	delete(t.watched, ss)
	hooks := t.hooks
	t.mu.Unlock()
	for _, fn := range hooks {
		fn(ss)
	}
}

// Len returns the number of open sessions.
func (t *sessionTracker) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.sessions)
}

// begin records a request of ss and returns the session to close, if
// admitting a new session (initialize) exceeded the maximum; full is set when
// every other session is busy and ss cannot be admitted. Requests of
// sessions that never initialized (the 2026-07-28 protocol's per-request
// sessions) are not tracked.
func (t *sessionTracker) begin(ss *mcp.ServerSession, initialize bool, user string) (victim *mcp.ServerSession, full, tracked bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	use, ok := t.sessions[ss]
	if !ok && !initialize {
		return nil, false, false
	}
	if !ok {
		if len(t.sessions) >= t.max {
			for s, u := range t.sessions {
				if u.inflight == 0 && (victim == nil || u.last.Before(t.sessions[victim].last)) {
					victim = s
				}
			}
			if victim == nil {
				return nil, true, false
			}
			t.dropLocked(victim, t.sessions[victim])
		}
		use = &sessionUse{id: ss.ID(), user: user}
		t.sessions[ss] = use
		if use.id != "" { // stdio's one session has none
			t.byID[use.id] = use
		}
		t.watchLocked(ss)
	}
	use.inflight++
	use.last = time.Now()
	return victim, false, true
}

// dropLocked stops tracking ss, whose use is use.
func (t *sessionTracker) dropLocked(ss *mcp.ServerSession, use *sessionUse) {
	delete(t.sessions, ss)
	if t.byID[use.id] == use {
		delete(t.byID, use.id)
	}
}

// has reports whether a session with that id is open.
func (t *sessionTracker) has(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.byID[id]
	return ok
}

func (t *sessionTracker) end(ss *mcp.ServerSession) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if use, ok := t.sessions[ss]; ok {
		use.inflight--
		use.last = time.Now()
	}
}

// middleware tracks sessions and ties tool calls to their HTTP request.
func (sf *Surface) sessionMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ss, _ := req.GetSession().(*mcp.ServerSession)
		// Notifications do not count as use: the go-sdk handles them after
		// their POST was answered, in no fixed order with requests.
		if ss != nil && !strings.HasPrefix(method, "notifications/") {
			var user string
			if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
				user = extra.TokenInfo.UserID
			}
			victim, full, tracked := sf.sessions.begin(ss, method == "initialize", user)
			if full {
				return nil, fmt.Errorf("too many sessions in use (server.max_sessions = %d)", sf.sessions.max)
			}
			if victim != nil {
				sf.logger.Info("closing the longest idle session: server.max_sessions reached",
					"session", victim.ID(), "max_sessions", sf.sessions.max)
				_ = victim.Close()
			}
			defer sf.sessions.end(ss)
			if tracked {
				// The client's own backend sessions, where it gets them.
				if c := sf.callerOf(ss); c != nil {
					ctx = backend.WithCaller(ctx, c)
				}
			}
		}
		if method == "tools/call" {
			// What the call and its program do counts in the caller's
			// isogate://stats too.
			ctx = stats.WithCaller(ctx, sf.ownerOf(req))
			var stop func()
			ctx, stop = sf.requests.bind(ctx, req)
			defer stop()
		}
		var endRequest func()
		ctx, endRequest = sf.inflight.track(ctx)
		defer endRequest()
		if sf.observer.Tracer() == nil || strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		return sf.traceRequest(ctx, method, req, next)
	}
}

// traceRequest serves one MCP request inside a server span, a child of the
// traceparent in the request's _meta when it has one.
func (sf *Surface) traceRequest(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	attrs := []attribute.KeyValue{attribute.String("mcp.method", method)}
	if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p != nil {
		attrs = append(attrs, attribute.String("mcp.tool", p.Name))
	}
	var meta map[string]any
	if p := req.GetParams(); p != nil {
		meta = p.GetMeta()
	}
	ctx, span := sf.observer.Tracer().Start(sf.observer.Tracer().Extract(ctx, meta), "mcp "+method, trace.SpanKindServer, attrs...)
	res, err := next(ctx, method, req)
	span.End(err)
	return res, err
}

// OpenSessions is the number of client sessions open now.
func (sf *Surface) OpenSessions() int { return sf.sessions.Len() }

// inflightRequests are the contexts of the requests being served, so that
// a shutdown can cancel them (ServeStdio: the go-sdk's own Run waits for
// them without cancelling them).
type inflightRequests struct {
	mu      sync.Mutex
	next    uint64
	cancels map[uint64]context.CancelFunc
}

// track returns ctx made cancellable by cancelAll, and the function that
// ends the request.
func (r *inflightRequests) track(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	r.mu.Lock()
	if r.cancels == nil {
		r.cancels = map[uint64]context.CancelFunc{}
	}
	r.next++
	id := r.next
	r.cancels[id] = cancel
	r.mu.Unlock()
	return ctx, func() {
		r.mu.Lock()
		delete(r.cancels, id)
		r.mu.Unlock()
		cancel()
	}
}

// cancelAll cancels every request in flight.
func (r *inflightRequests) cancelAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, cancel := range r.cancels {
		cancel()
	}
}
