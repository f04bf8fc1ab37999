package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// backend is the state of one configured backend. A single supervisor
// goroutine (run) owns connecting, health checking, restarting and tearing
// down; callers only read the current connection.
type backend struct {
	m           *Manager
	spec        Spec
	opts        *Options
	log         *slog.Logger
	fingerprint string
	invalid     error       // non-nil if the spec failed validation
	ring        *ringBuffer // stderr of stdio backends, nil otherwise
	sem         chan struct{}

	refresh    chan struct{} // tools/list_changed received (coalescing)
	kick       chan struct{} // a caller saw the connection break
	restartReq chan struct{} // Manager.Restart
	done       chan struct{} // closed when run returns

	calls, errs, queued atomic.Int64

	// notifyMu serialises tool-list updates with their OnToolsChanged
	// callbacks, so callbacks of one backend never reorder.
	notifyMu sync.Mutex

	mu             sync.Mutex
	state          State
	lastErr        string
	conn           *conn       // current connection while healthy
	proc           *procHandle // most recent stdio child (for forced kills)
	tools          []*mcp.Tool // never mutated once published
	toolsKnown     bool
	toolsCached    bool
	toolsUpdatedAt time.Time
	restarts       int
	restartLog     []time.Time // restart times within the window
	givenUp        bool        // no reconnection is pending (budget exhausted / invalid)
	changed        chan struct{}
}

// conn is one established session with a backend.
type conn struct {
	sess   *mcp.ClientSession
	proc   *procHandle // stdio only
	stderr *lineWriter // stdio only

	// ctx is cancelled when the connection is torn down, aborting the calls
	// in flight on it.
	ctx    context.Context
	cancel context.CancelFunc

	done    chan struct{} // closed when the session has ended
	waitErr error         // session.Wait result, valid after done

	connectedAt time.Time

	broken    atomic.Bool
	brokenErr atomic.Pointer[string]
}

func (c *conn) alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return !c.broken.Load()
	}
}

func (c *conn) markBroken(err error) bool {
	msg := err.Error()
	c.brokenErr.CompareAndSwap(nil, &msg)
	return !c.broken.Swap(true)
}

func newBackend(m *Manager, spec Spec) *backend {
	if spec.Timeout <= 0 {
		spec.Timeout = DefaultTimeout
	}
	if spec.MaxConcurrentCalls <= 0 {
		spec.MaxConcurrentCalls = DefaultMaxConcurrentCalls
	}
	spec.Args = slices.Clone(spec.Args)
	spec.Tags = slices.Clone(spec.Tags)
	b := &backend{
		m:           m,
		spec:        spec,
		opts:        &m.opts,
		log:         m.log.With(slog.String("backend", spec.Name)),
		fingerprint: fingerprint(&spec),
		sem:         make(chan struct{}, spec.MaxConcurrentCalls),
		refresh:     make(chan struct{}, 1),
		kick:        make(chan struct{}, 1),
		restartReq:  make(chan struct{}, 1),
		done:        make(chan struct{}),
		changed:     make(chan struct{}),
	}
	if spec.Transport == TransportStdio {
		b.ring = newRingBuffer(m.opts.StderrLines)
	}
	if err := spec.Validate(); err != nil {
		b.invalid = err
		b.state = StateUnhealthy
		b.givenUp = true
		b.lastErr = "invalid configuration: " + err.Error()
	}
	return b
}

// update runs f under b.mu and wakes everybody waiting for a state change.
func (b *backend) update(f func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f()
	close(b.changed)
	b.changed = make(chan struct{})
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// run is the supervisor loop: connect, serve until the connection fails,
// back off, reconnect, until ctx is cancelled.
func (b *backend) run(ctx context.Context) {
	defer close(b.done)
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

		c, err := b.connect(ctx)
		if ctx.Err() != nil {
			if c != nil {
				b.teardown(c)
			}
			return
		}
		if err != nil {
			failures++
			b.log.Warn("backend connection failed", slog.Any("error", err))
			b.update(func() {
				b.state = StateUnhealthy
				b.lastErr = err.Error()
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
		b.log.Warn("backend unhealthy", slog.String("reason", reason))
	}
}

func (b *backend) restartCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.restarts
}

// awaitRestart enforces the restart budget and waits out the backoff. It
// reports whether the restart was requested manually, and false in ok if
// ctx was cancelled.
func (b *backend) awaitRestart(ctx context.Context, failures int) (manual, ok bool) {
	select {
	case <-b.restartReq:
		return true, true
	default:
	}
	if !b.takeRestartBudget() {
		// Budget exhausted: stay unhealthy until Restart or shutdown.
		b.log.Error("restart budget exhausted; giving up", slog.String("last_error", b.lastError()))
		select {
		case <-ctx.Done():
			return false, false
		case <-b.restartReq:
			return true, true
		}
	}
	t := time.NewTimer(b.backoff(failures))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false, false
	case <-b.restartReq:
		return true, true
	case <-t.C:
		return false, true
	}
}

// takeRestartBudget records a restart if the budget allows it; otherwise it
// marks the backend as given up.
func (b *backend) takeRestartBudget() bool {
	allowed := true
	b.update(func() {
		if b.opts.RestartBudget < 0 {
			return
		}
		now := time.Now()
		cutoff := now.Add(-b.opts.RestartWindow)
		b.restartLog = slices.DeleteFunc(b.restartLog, func(t time.Time) bool { return t.Before(cutoff) })
		if len(b.restartLog) >= b.opts.RestartBudget {
			allowed = false
			b.givenUp = true
			b.state = StateUnhealthy
			b.lastErr = fmt.Sprintf("restart budget exhausted (%d restarts within %s), not restarting; last error: %s",
				b.opts.RestartBudget, b.opts.RestartWindow, b.lastErr)
			return
		}
		b.restartLog = append(b.restartLog, now)
	})
	return allowed
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
	return b.lastErr
}

// connect starts or dials the backend, initialises the MCP session and
// fetches the tool list. On success the backend is Healthy.
func (b *backend) connect(ctx context.Context) (*conn, error) {
	cctx, cancel := context.WithTimeout(ctx, b.opts.ConnectTimeout)
	defer cancel()

	// The connection's lifetime context is passed to the transport's Connect
	// (the SSE transport ties its event stream to it). It is cancelled if
	// this attempt fails or times out, and later by teardown, but not when
	// cctx ends after a successful connect.
	lifeCtx, lifeCancel := context.WithCancel(context.WithoutCancel(ctx))
	c := &conn{ctx: lifeCtx, cancel: lifeCancel, done: make(chan struct{})}
	stopLife := context.AfterFunc(cctx, lifeCancel)
	fail := func(err error) (*conn, error) {
		lifeCancel()
		if c.proc != nil {
			c.proc.signal(sigKill) // the SDK does not close the child on every failure path
			c.stderr.flush()
		}
		return nil, b.annotate(err)
	}

	t, err := b.newTransport(cctx, c)
	if err != nil {
		return fail(err)
	}
	if c.proc != nil {
		// Timeout or shutdown while connecting: kill the child so that the
		// SDK's pending reads and writes fail promptly.
		stop := context.AfterFunc(cctx, func() { c.proc.signal(sigKill) })
		defer stop()
	}

	client := mcp.NewClient(b.opts.ClientInfo, &mcp.ClientOptions{
		Logger: b.log,
		// The gateway offers no client features (roots, sampling, ...).
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			poke(b.refresh)
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			if f := b.opts.OnProgress; f != nil && req.Params != nil {
				f(b.spec.Name, req.Params)
			}
		},
	})
	sess, err := client.Connect(cctx, &lifetimeTransport{inner: t, ctx: lifeCtx}, nil)
	if err != nil {
		return fail(fmt.Errorf("connecting: %w", err))
	}
	c.sess = sess
	go func() {
		c.waitErr = sess.Wait()
		close(c.done)
	}()

	// Notifications that arrived during the handshake are covered by the
	// list we are about to fetch.
	select {
	case <-b.refresh:
	default:
	}
	tools, err := listTools(cctx, c)
	if err == nil && !stopLife() {
		err = cctx.Err() // timed out just now; lifeCtx is already cancelled
	}
	if err != nil {
		b.teardown(c)
		return nil, b.annotate(fmt.Errorf("listing tools: %w", err))
	}
	c.connectedAt = time.Now()

	// Publish the tools before reporting the backend healthy, so that
	// whoever waits for Healthy (WaitHealthy, calls) can rely on
	// OnToolsChanged having seen the live list.
	b.notifyMu.Lock()
	defer b.notifyMu.Unlock()
	b.update(func() { b.setToolsLocked(tools) })
	b.publishTools(tools)
	b.update(func() {
		b.conn = c
		b.state = StateHealthy
		b.lastErr = ""
	})
	b.log.Info("backend connected", slog.Int("tools", len(tools)), slog.Int("pid", c.proc.pid()))
	return c, nil
}

// lifetimeTransport passes a connection-lifetime context to the wrapped
// transport's Connect instead of the (shorter) connect-attempt context.
type lifetimeTransport struct {
	inner mcp.Transport
	ctx   context.Context
}

// Connect implements mcp.Transport.
func (t *lifetimeTransport) Connect(context.Context) (mcp.Connection, error) {
	return t.inner.Connect(t.ctx)
}

// annotate appends the last stderr line of a stdio backend to err.
func (b *backend) annotate(err error) error {
	if b.ring == nil {
		return err
	}
	if line := b.ring.last(); line != "" {
		return fmt.Errorf("%w (last stderr line: %q)", err, line)
	}
	return err
}

// listTools fetches all pages of tools/list.
func listTools(ctx context.Context, c *conn) ([]*mcp.Tool, error) {
	return inBackground(ctx, func(ctx context.Context) ([]*mcp.Tool, error) {
		tools := []*mcp.Tool{}
		for t, err := range c.sess.Tools(ctx, nil) {
			if err != nil {
				return nil, err
			}
			tools = append(tools, t)
		}
		return tools, nil
	})
}

// inBackground runs f in its own goroutine and returns when f returns or
// ctx is done, whichever comes first. Writes to a wedged stdio child can
// block regardless of contexts; this keeps such a write from blocking the
// supervisor (it unblocks once the child is killed).
func inBackground[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f(ctx)
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
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

// refreshTools re-fetches the tool list after tools/list_changed.
func (b *backend) refreshTools(ctx context.Context, c *conn) {
	lctx, cancel := context.WithTimeout(ctx, b.spec.Timeout)
	defer cancel()
	tools, err := listTools(lctx, c)
	if err != nil {
		b.log.Warn("refreshing tools after list_changed failed", slog.Any("error", err))
		return
	}
	b.notifyMu.Lock()
	defer b.notifyMu.Unlock()
	stale := false
	b.update(func() {
		if b.conn != c {
			stale = true
			return
		}
		b.setToolsLocked(tools)
	})
	if stale {
		return
	}
	b.log.Info("backend tools changed", slog.Int("tools", len(tools)))
	b.publishTools(tools)
}

// setToolsLocked records a live tool list. b.mu must be held.
func (b *backend) setToolsLocked(tools []*mcp.Tool) {
	b.tools = tools
	b.toolsKnown = true
	b.toolsCached = false
	b.toolsUpdatedAt = time.Now()
}

// publishTools persists the tool lists and runs OnToolsChanged.
// b.notifyMu must be held.
func (b *backend) publishTools(tools []*mcp.Tool) {
	b.m.saveCache()
	if f := b.opts.OnToolsChanged; f != nil {
		f(b.spec.Name, slices.Clone(tools))
	}
}

// announceCachedTools runs OnToolsChanged for tools loaded from the cache.
func (b *backend) announceCachedTools() {
	b.notifyMu.Lock()
	defer b.notifyMu.Unlock()
	b.mu.Lock()
	tools, cached := b.tools, b.toolsCached
	b.mu.Unlock()
	if !cached {
		return
	}
	b.log.Debug("serving tools from cache until the backend connects", slog.Int("tools", len(tools)))
	if f := b.opts.OnToolsChanged; f != nil {
		f(b.spec.Name, slices.Clone(tools))
	}
}

// teardown closes a connection: in-flight calls are aborted, a stdio child
// and its process group get SIGTERM (and stdin is closed), then SIGKILL
// after ShutdownGrace.
func (b *backend) teardown(c *conn) {
	c.cancel()
	c.proc.signal(sigTerm)
	go func() { _ = c.sess.Close() }()

	grace := time.NewTimer(b.opts.ShutdownGrace)
	defer grace.Stop()
	select {
	case <-c.done:
	case <-grace.C:
		if c.proc != nil {
			b.log.Warn("backend did not exit after SIGTERM; sending SIGKILL",
				slog.Duration("grace", b.opts.ShutdownGrace), slog.Int("pid", c.proc.pid()))
			c.proc.signal(sigKill)
			select {
			case <-c.done:
			case <-time.After(5 * time.Second):
				b.log.Error("backend process still not reaped after SIGKILL", slog.Int("pid", c.proc.pid()))
			}
		} else {
			b.log.Warn("backend session did not close in time", slog.Duration("grace", b.opts.ShutdownGrace))
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
	p := b.proc
	b.mu.Unlock()
	p.signal(sigKill)
}

// awaitConn returns a healthy connection, waiting up to StartWait for one.
func (b *backend) awaitConn(ctx context.Context) (*conn, error) {
	var timer *time.Timer
	for {
		b.mu.Lock()
		c, st, lastErr, givenUp, changed := b.conn, b.state, b.lastErr, b.givenUp, b.changed
		b.mu.Unlock()

		switch {
		case st == StateHealthy && c != nil && c.alive():
			return c, nil
		case st == StateStopped:
			return nil, fmt.Errorf("backend %q: %w", b.spec.Name, ErrClosed)
		case givenUp:
			return nil, &UnavailableError{Backend: b.spec.Name, State: st, LastError: lastErr}
		}
		if timer == nil {
			timer = time.NewTimer(b.opts.StartWait)
			defer timer.Stop()
		}
		select {
		case <-changed:
		case <-timer.C:
			b.mu.Lock()
			st, lastErr = b.state, b.lastErr
			b.mu.Unlock()
			if st == StateStarting {
				return nil, &StartingError{Backend: b.spec.Name}
			}
			if st == StateHealthy {
				// Healthy but the connection just died: report that.
				st = StateUnhealthy
			}
			return nil, &UnavailableError{Backend: b.spec.Name, State: st, LastError: lastErr}
		case <-ctx.Done():
			return nil, fmt.Errorf("backend %q: waiting for backend: %w", b.spec.Name, ctx.Err())
		}
	}
}

// call routes one tool call. If the connection turns out to be dead before
// the request could be delivered, the call is retried once on the next
// connection (waiting up to StartWait for it).
func (b *backend) call(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	for attempt := 0; ; attempt++ {
		c, err := b.awaitConn(ctx)
		if err != nil {
			return nil, err
		}
		// The SDK mutates params (arguments, _meta) per session: copy.
		p := *params
		p.Meta = cloneMeta(params.Meta)
		if noArguments(p.Arguments) {
			p.Arguments = nil // the SDK sends {} instead of null
		}
		res, err, retry := b.callOnce(ctx, c, &p)
		if retry && attempt == 0 {
			b.log.Info("connection was dead before the call was sent; retrying on the next connection",
				slog.String("tool", params.Name), slog.Any("error", err))
			continue
		}
		return res, err
	}
}

// noArguments reports argument values that would marshal to JSON null.
func noArguments(args any) bool {
	switch a := args.(type) {
	case nil:
		return true
	case json.RawMessage:
		return len(bytes.TrimSpace(a)) == 0 || string(bytes.TrimSpace(a)) == "null"
	case map[string]any:
		return a == nil
	}
	return false
}

func cloneMeta(m mcp.Meta) mcp.Meta {
	if m == nil {
		return nil
	}
	out := make(mcp.Meta, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// callOnce performs one call on c. retry reports that the request was
// certainly not delivered because the connection was already dead.
func (b *backend) callOnce(ctx context.Context, c *conn, p *mcp.CallToolParams) (_ *mcp.CallToolResult, _ error, retry bool) {
	name, tool, timeout := b.spec.Name, p.Name, b.spec.Timeout
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel) // connection torn down: abort
	defer stop()

	b.queued.Add(1)
	select {
	case b.sem <- struct{}{}:
		b.queued.Add(-1)
	case <-tctx.Done():
		b.queued.Add(-1)
		return nil, b.callError(ctx, tctx, c, tool, fmt.Errorf("waiting for a free call slot: %w", tctx.Err())), false
	}
	// The slot is released when the SDK call really returns, not when we
	// give up on it, so a wedged backend cannot accumulate unbounded calls.
	res, err := inBackground(tctx, func(ctx context.Context) (*mcp.CallToolResult, error) {
		defer func() { <-b.sem }()
		return c.sess.CallTool(ctx, p)
	})
	if err == nil {
		return res, nil, false
	}
	// Whether or not the supervisor has torn the connection down meanwhile,
	// an error proving non-delivery makes the call safe to retry.
	if ctx.Err() == nil && !errors.Is(tctx.Err(), context.DeadlineExceeded) && notDelivered(err) {
		if c.markBroken(err) {
			poke(b.kick)
		}
		return nil, fmt.Errorf("backend %q: tool %q: %w: %w", name, tool, ErrConnectionLost, err), true
	}
	return nil, b.callError(ctx, tctx, c, tool, err), false
}

// callError classifies a failed call.
func (b *backend) callError(ctx, tctx context.Context, c *conn, tool string, err error) error {
	name := b.spec.Name
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("backend %q: tool %q: %w", name, tool, ctx.Err())
	case errors.Is(tctx.Err(), context.DeadlineExceeded):
		return timeoutError(name, tool, b.spec.Timeout, context.DeadlineExceeded)
	case c.ctx.Err() != nil:
		if b.m.isClosed() {
			return fmt.Errorf("backend %q: tool %q: %w", name, tool, ErrClosed)
		}
		return fmt.Errorf("backend %q: tool %q: %w: %s", name, tool, ErrConnectionLost, b.lastError())
	case isConnectionFailure(err) || !c.alive():
		return fmt.Errorf("backend %q: tool %q: %w: %w", name, tool, ErrConnectionLost, err)
	}
	return fmt.Errorf("backend %q: tool %q: %w", name, tool, err)
}

// notDelivered reports errors that prove a request never reached the
// backend: the SDK refused to send on a connection that was already closing,
// or writing to a stdio child failed with EPIPE (the child is gone; reads
// never fail with EPIPE). Ambiguous errors, such as a closed pipe, which may
// also come from the read side after the request was sent, do not qualify.
func notDelivered(err error) bool {
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, syscall.EPIPE)
}

// isConnectionFailure reports transport-level errors (as opposed to error
// responses from the backend).
func isConnectionFailure(err error) bool {
	return notDelivered(err) ||
		errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.ErrClosedPipe) ||
		errors.Is(err, os.ErrClosed) ||
		errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET)
}

// status returns a snapshot of the backend.
func (b *backend) status() Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := Status{
		Name:        b.spec.Name,
		Transport:   b.spec.Transport,
		Tags:        slices.Clone(b.spec.Tags),
		State:       b.state,
		ToolCount:   len(b.tools),
		ToolsCached: b.toolsCached,
		LastError:   b.lastErr,
		Restarts:    b.restarts,
		Calls:       b.calls.Load(),
		Errors:      b.errs.Load(),
		InFlight:    len(b.sem),
		Queued:      int(b.queued.Load()),
	}
	if c := b.conn; c != nil {
		s.ConnectedAt = c.connectedAt
		s.PID = c.proc.pid()
	}
	if b.ring != nil {
		s.Stderr = b.ring.snapshot()
	}
	return s
}
