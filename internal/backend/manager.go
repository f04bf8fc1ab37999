// Package backend manages isogate's connections to backend MCP servers.
//
// A [Manager] owns one supervisor goroutine per configured backend ([Spec]).
// The supervisor connects with the official go-sdk client over stdio
// (a child process), streamable HTTP, SSE or a custom transport, keeps the
// backend's tool list (also persisted in an on-disk cache so that the
// gateway can advertise tools before backends are up), pings it every
// [Options.HealthInterval], and reconnects or restarts it with exponential
// backoff when it crashes or stops answering, within a restart budget.
//
// Tool calls are routed with [Manager.CallTool] or [Manager.Call], which
// apply the backend's per-call timeout and concurrency limit and wait up to
// [Options.StartWait] for a backend that is still starting or restarting.
//
// Waiting for a backend: [Manager.WaitReady] returns at once for a healthy
// backend, waits (up to [Options.StartWait] and the caller's context) for
// one that is starting or reconnecting, and fails with an
// [*UnavailableError] (`backend "X" is unavailable: <its last error>`) for
// one that is down; [Manager.NotReady] lists the backends that are still
// connecting or down without waiting. Every error of the manager has a
// code ([v8sandbox.CodeOf]) to switch on, such as [CodeUnavailable] or
// [CodeTimeout].
//
// A backend whose restart budget is exhausted is not abandoned: it is
// retried after [Options.RetryCooldown] and on demand, when a call reaches
// it (see [Status.NextRetry]).
//
// [Manager.Close] shuts everything down: stdio children (and their process
// groups) get SIGTERM, then SIGKILL after [Options.KillAfter]. On Linux
// children are also bound to the gateway's lifetime with a parent-death
// signal, so they do not outlive a gateway that is killed.
package backend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isogate/isogate/internal/logsite"
	"github.com/isogate/isogate/v8sandbox"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Manager manages the connections to a fixed set of backends. Create it
// with [NewManager], start it with [Manager.Start] and release it with
// [Manager.Close]. All methods are safe for concurrent use.
type Manager struct {
	opts Options
	log  *slog.Logger
	set  atomic.Pointer[backendSet] // replaced by Update

	mu      sync.Mutex
	started bool
	closed  bool
	runCtx  context.Context               // parent of every supervisor's context
	cancel  context.CancelFunc            // cancels runCtx
	stops   map[string]context.CancelFunc // stops one supervisor (Update)
	running sync.WaitGroup                // supervisors, removed ones included
	stopCtx func() bool                   // unregisters the Start context's AfterFunc
	stopped chan struct{}                 // closed when all supervisors have exited
	retired []*backend                    // removed or replaced by Update, maybe still stopping
}

// backendSet is the current set of backends; it is never modified, only
// replaced.
type backendSet struct {
	backends map[string]*backend
	names    []string // sorted
}

// current returns the current set of backends.
func (m *Manager) current() *backendSet { return m.set.Load() }

// NewManager returns a manager for opts.Specs. It loads the tool cache from
// opts.CacheDir, so [Manager.Tools] answers from the cache immediately, but
// does not connect to anything until [Manager.Start].
//
// A spec that fails [Spec.Validate] does not prevent the others from
// running: its backend is reported as unhealthy with the validation error.
// If several specs share a name, only the first is used.
func NewManager(opts Options) *Manager {
	opts = opts.withDefaults()
	m := &Manager{
		opts:    opts,
		log:     opts.Logger,
		stopped: make(chan struct{}),
		stops:   map[string]context.CancelFunc{},
	}
	m.opts.Specs = nil // the backends keep their own copies
	set := &backendSet{backends: make(map[string]*backend, len(opts.Specs))}
	for _, spec := range opts.Specs {
		if _, dup := set.backends[spec.Name]; dup {
			m.log.Error("duplicate backend name; ignoring all but the first", slog.String("backend", spec.Name))
			continue
		}
		set.backends[spec.Name] = newBackend(m, spec)
		set.names = append(set.names, spec.Name)
	}
	slices.Sort(set.names)
	for _, b := range set.backends {
		b.loadCache()
	}
	m.set.Store(set)
	return m
}

// Start connects to all backends in parallel, in the background, and
// returns immediately. Until a backend is connected, its tools are served
// from the cache and calls to it wait up to [Options.StartWait].
//
// ctx bounds the lifetime of the backends: cancelling it shuts them down as
// [Manager.Close] does (call Close as well to wait for the shutdown). Values
// of ctx are kept, its deadline is not used otherwise. Start returns an
// error if the manager was already started or closed.
func (m *Manager) Start(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if m.started {
		return errors.New("backend manager already started")
	}
	m.started = true
	m.runCtx, m.cancel = context.WithCancel(context.WithoutCancel(ctx))
	set := m.current()
	for _, name := range set.names {
		m.startLocked(set.backends[name])
	}
	m.stopCtx = context.AfterFunc(ctx, func() { m.shutdown() })
	m.log.Info("starting backends", slog.Int("count", len(set.names)))
	return nil
}

// shutdown stops all supervisors without waiting for them.
func (m *Manager) shutdown() (started bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.closed {
		m.closed = true
		if m.started {
			m.log.Info("stopping backends")
			m.stopCtx()
			m.cancel()
			go func() {
				m.running.Wait()
				close(m.stopped)
			}()
		} else {
			for _, b := range m.current().backends {
				b.update(func() { b.state, b.conn = StateStopped, nil })
			}
			close(m.stopped)
		}
	}
	return m.started
}

func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// Close shuts all backends down and waits until they are gone. In-flight
// calls are cancelled. Each stdio child and its process group receive
// SIGTERM (and their stdin is closed), then SIGKILL after
// [Options.KillAfter]. If ctx ends first, every remaining child is
// SIGKILLed immediately and ctx's error is returned. Close is idempotent.
func (m *Manager) Close(ctx context.Context) error {
	m.shutdown()
	select {
	case <-m.stopped:
		return nil
	case <-ctx.Done():
	}
	m.mu.Lock()
	all := m.retired
	m.mu.Unlock()
	for _, b := range m.current().backends {
		b.forceKill()
	}
	for _, b := range all {
		b.forceKill()
	}
	return fmt.Errorf("closing backends: %w", ctx.Err())
}

// Restart reconnects a backend now, without backoff, and resets its restart
// budget. It is the way out of the "restart budget exhausted" state. It
// returns an error for an unknown backend or a closed manager.
func (m *Manager) Restart(name string) error {
	b := m.current().backends[name]
	if b == nil {
		return &UnknownBackendError{Backend: name}
	}
	if m.isClosed() {
		return ErrClosed
	}
	if b.invalid != nil {
		return fmt.Errorf("backend %q: %w", name, b.invalid)
	}
	b.update(func() {
		b.restartLog = nil
		b.givenUp = false
	})
	poke(b.restartReq)
	b.log.Info("restart requested")
	return nil
}

// CallTool calls tool on backend with args. See [Manager.Call].
func (m *Manager) CallTool(ctx context.Context, backend, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	params := &mcp.CallToolParams{Name: tool}
	if args != nil {
		params.Arguments = args
	}
	return m.Call(ctx, backend, params)
}

// Call sends tools/call with params to the named backend. params is not
// modified; its _meta (for example a progress token) is passed through.
//
// The call first waits for the backend as [Manager.WaitReady] does: up to
// [Options.StartWait] for a backend that is starting or restarting, not at
// all for one that is down (beyond an on-demand attempt); the error is then
// a [*StartingError] (message `backend "<name>" is still starting`) or an
// [*UnavailableError].
// It then waits for one of the backend's [Spec.MaxConcurrentCalls] slots;
// [Spec.Timeout] bounds the slot wait plus the call and yields an error
// matching [ErrTimeout]. Cancelling ctx cancels the backend call (the SDK
// sends notifications/cancelled). If the connection turns out to be dead
// before the request could be sent (e.g. the stdio child just crashed), the
// call is retried once on the restarted backend; calls that may have reached
// the backend are never retried. An unknown backend yields an
// [*UnknownBackendError]. A tool result with IsError set is returned as a
// result, not as an error.
func (m *Manager) Call(ctx context.Context, backend string, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	b := m.current().backends[backend]
	if b == nil {
		return nil, &UnknownBackendError{Backend: backend}
	}
	if params == nil {
		return nil, fmt.Errorf("backend %q: nil call parameters", backend)
	}
	if m.isClosed() {
		return nil, fmt.Errorf("backend %q: %w", backend, ErrClosed)
	}
	b.calls.Add(1)
	start := time.Now()
	res, err := b.call(ctx, params)
	b.logCall(params.Name, time.Since(start), res, err)
	if err != nil {
		b.errs.Add(1)
		return nil, err
	}
	return res, nil
}

// logCall writes the one INFO line per tool call: backend, tool, duration
// and outcome ("ok", "tool_error" for a result with IsError set, or the
// error's code, "error" if it has none).
func (b *backend) logCall(tool string, d time.Duration, res *mcp.CallToolResult, err error) {
	if !b.log.Enabled(context.Background(), slog.LevelInfo) {
		return // nothing to build: the line would be dropped
	}
	outcome := "ok"
	switch {
	case err != nil:
		outcome = string(v8sandbox.CodeOf(err))
		if outcome == "" {
			outcome = "error"
		}
	case res != nil && res.IsError:
		outcome = "tool_error"
	}
	attrs := []slog.Attr{slog.String("tool", tool), slog.Duration("duration", d), slog.String("outcome", outcome)}
	if err != nil {
		attrs = append(attrs, slog.Any("error", err))
	}
	callLine.Log(context.Background(), b.log, slog.LevelInfo, "backend tool call", attrs...)
}

// callLine is where logCall logs: its source looked up once, not per call.
var callLine logsite.Site

// Tools returns the known tool lists by backend name: the live list of
// connected backends and, for the others, the last live or cached list.
// Backends whose tools are unknown are absent. The slices are copies; the
// tools themselves are shared and must not be modified.
func (m *Manager) Tools() map[string][]*mcp.Tool {
	set := m.current()
	out := make(map[string][]*mcp.Tool, len(set.backends))
	for name, b := range set.backends {
		b.mu.Lock()
		if b.toolsKnown {
			out[name] = slices.Clone(b.tools)
		}
		b.mu.Unlock()
	}
	return out
}

// Status returns a snapshot of every backend, sorted by name.
func (m *Manager) Status() []Status {
	set := m.current()
	out := make([]Status, 0, len(set.names))
	for _, name := range set.names {
		out = append(out, set.backends[name].status())
	}
	return out
}

// Backends returns the configured backend names, sorted.
func (m *Manager) Backends() []string { return slices.Clone(m.current().names) }

// WaitHealthy blocks until the named backends (all, if none are named) are
// healthy. A backend that is unknown, stopped, or unhealthy with no restart
// pending (invalid configuration or exhausted restart budget) does not stop
// the wait for the others; its error is included in the returned error,
// which joins all failures. When ctx ends, WaitHealthy returns at once with
// ctx's error for the backends that were not ready yet.
func (m *Manager) WaitHealthy(ctx context.Context, names ...string) error {
	if len(names) == 0 {
		names = m.current().names
	}
	var errs []error
	for _, name := range names {
		if err := m.waitHealthy(ctx, name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (m *Manager) waitHealthy(ctx context.Context, name string) error {
	b := m.current().backends[name]
	if b == nil {
		return &UnknownBackendError{Backend: name}
	}
	for {
		b.mu.Lock()
		st, givenUp, changed := b.state, b.givenUp && !b.attempting, b.changed
		lastErr := b.describeErrorLocked()
		b.mu.Unlock()
		switch {
		case st == StateHealthy:
			return nil
		case st == StateStopped || givenUp:
			return &UnavailableError{Backend: name, State: st, LastError: lastErr}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for backend %q (%s): %w", name, st, ctx.Err())
		}
	}
}

// Session waits (like a tool call) until the named backend is connected and
// returns its current MCP client session, for requests other than tool
// calls (prompts, resources): the shared one, or the caller's own when ctx
// carries a [Caller] that gets one (see [WithCaller]). The session may end
// at any time; callers treat its errors like a failed call.
func (m *Manager) Session(ctx context.Context, backend string) (*mcp.ClientSession, error) {
	b := m.current().backends[backend]
	if b == nil {
		return nil, &UnknownBackendError{Backend: backend}
	}
	if m.isClosed() {
		return nil, fmt.Errorf("backend %q: %w", backend, ErrClosed)
	}
	c, err := b.session(ctx)
	if err != nil {
		return nil, err
	}
	return c.sess, nil
}
