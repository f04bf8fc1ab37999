package backend

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/sdklog"
	"github.com/isogate/isogate/internal/skills"
)

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
		b.abandon(c)
		return nil, b.annotate(err)
	}

	if err := b.openSession(cctx, c, b.sharedProfile(c)); err != nil {
		return fail(err)
	}

	// Notifications that arrived during the handshake are covered by the
	// list we are about to fetch.
	select {
	case <-b.refresh:
	default:
	}
	if b.opts.OnLog != nil {
		b.askForLogs(cctx, c)
	}
	tools, err := b.listTools(cctx, c)
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
		b.attempting = false
		b.connectFailed = false
		b.givenUp = false
	})
	b.log.Info("backend connected", slog.Int("tools", len(tools)), slog.Int("pid", c.proc.pid()))
	return c, nil
}

// abandon ends a connection whose opening failed: its lifetime, and its
// stdio child (the SDK does not close it on every failure path).
func (b *backend) abandon(c *conn) {
	c.cancel()
	if c.proc != nil {
		c.proc.signal(sigKill)
		c.stderr.flush()
	}
}

// openSession starts or dials the backend for c (whose ctx is the
// connection's lifetime) and initialises an MCP session on it as profile
// says. On error the caller tears c down.
func (b *backend) openSession(cctx context.Context, c *conn, p sessionProfile) error {
	t, err := b.newTransport(cctx, c)
	if err != nil {
		return err
	}
	if c.proc != nil {
		// Timeout or shutdown while connecting: kill the child so that the
		// SDK's pending reads and writes fail promptly.
		stop := context.AfterFunc(cctx, func() { c.proc.signal(sigKill) })
		defer stop()
	}
	copts := &mcp.ClientOptions{
		Logger: sdklog.Demote(b.log), // session lifecycle at DEBUG
		// Client features (sampling, elicitation, roots) only when they
		// are routed to clients (see clientreq/clientrequests.go).
		Capabilities: p.capabilities(),
		// A backend's InputRequiredResult (SEP-2322) comes back as it is:
		// passthrough hands it to the client, whose retry continues the
		// call (see approvals/inputrequests.go); the gateway answers nothing
		// itself.
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			defer c.notices.noteHandled()
			if f := b.opts.OnProgress; f != nil && req.Params != nil {
				f(b.spec.Name, req.Params)
			}
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			defer c.notices.noteHandled()
			if p.onLog != nil && req.Params != nil {
				p.onLog(b.spec.Name, req.Params)
			}
		},
	}
	if p.shared {
		// Changes and updates concern every client: the shared session
		// reports them (a client's own session would repeat them).
		copts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {
			poke(b.refresh)
		}
		copts.PromptListChangedHandler = func(context.Context, *mcp.PromptListChangedRequest) {
			if f := b.opts.OnListChanged; f != nil {
				f(b.spec.Name)
			}
		}
		copts.ResourceListChangedHandler = func(context.Context, *mcp.ResourceListChangedRequest) {
			if f := b.opts.OnListChanged; f != nil {
				f(b.spec.Name)
			}
		}
		copts.ResourceUpdatedHandler = func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			if f := b.opts.OnResourceUpdated; f != nil && req.Params != nil {
				f(b.spec.Name, req.Params)
			}
		}
	}
	addRouting := b.routeClientRequests(copts, p.requests)
	client := mcp.NewClient(b.opts.ClientInfo, copts)
	addRouting(client)
	if err := skills.AddClientMethods(client); err != nil { // skills/list, skills/get (internal/skills)
		return err
	}
	var sessOpts *mcp.ClientSessionOptions
	if p.version != "" {
		sessOpts = &mcp.ClientSessionOptions{ProtocolVersion: p.version}
	}
	sess, err := client.Connect(cctx, &lifetimeTransport{inner: t, ctx: c.ctx, b: b, c: c}, sessOpts)
	if err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	c.sess = sess
	if h, ok := c.tasks.(*httpTasks); ok {
		h.serve = b.clientRequestServer(p.requests)
	}
	go func() {
		c.waitErr = sess.Wait()
		close(c.done)
	}()
	return nil
}

// lifetimeTransport passes a connection-lifetime context to the wrapped
// transport's Connect instead of the (shorter) connect-attempt context,
// checks the tool lists that arrive on the connection (see toolListConn)
// and lets the gateway speak tasks on it (see taskConn).
type lifetimeTransport struct {
	inner mcp.Transport
	ctx   context.Context
	b     *backend
	c     *conn
}

// Connect implements mcp.Transport.
func (t *lifetimeTransport) Connect(context.Context) (mcp.Connection, error) {
	conn, err := t.inner.Connect(t.ctx)
	if err != nil {
		return conn, err
	}
	if st, ok := t.inner.(*mcp.StreamableClientTransport); ok {
		// The SDK's streamable client connection has an unexported hook
		// that a wrapper would hide; its tool lists are checked after
		// decoding only (see listTools), and tasks go beside it.
		c := t.c
		t.c.tasks = newHTTPTasks(st.HTTPClient, st.Endpoint, sessionID(conn), func() string { return c.protocolVersion() })
		return conn, nil
	}
	tc := newTaskConn(conn)
	t.c.tasks = tc
	return &toolListConn{Connection: tc, b: t.b, notices: &t.c.notices, pending: map[jsonrpc.ID]bool{}}, nil
}

// annotate appends to err the stderr line of a stdio backend that best
// says why it failed (see ringBuffer.telling): "Error: Cannot find module
// …" rather than the "Node.js v20.20.2" banner that follows it.
func (b *backend) annotate(err error) error {
	if b.ring == nil {
		return err
	}
	if line := b.ring.telling(); line != "" {
		return fmt.Errorf("%w (stderr: %q)", err, line)
	}
	return err
}

// listTools fetches all pages of tools/list. Malformed tools are skipped
// and every tool is size-bounded (see checkToolList; on streamable HTTP
// connections only what the SDK could decode is checked here).
func (b *backend) listTools(ctx context.Context, c *conn) ([]*mcp.Tool, error) {
	return inBackground(ctx, func(ctx context.Context) ([]*mcp.Tool, error) {
		tools := []*mcp.Tool{}
		seen := map[string]bool{}
		for t, err := range c.sess.Tools(ctx, nil) {
			if err != nil {
				return nil, err
			}
			if t == nil {
				continue
			}
			if _, err := boundTool(t); err != nil || seen[t.Name] {
				if err == nil {
					err = fmt.Errorf("duplicate tool name %q", t.Name)
				}
				b.log.Warn("skipping a malformed tool in the backend's tool list", slog.Any("error", err))
				continue
			}
			seen[t.Name] = true
			tools = append(tools, t)
		}
		if h, ok := c.tasks.(*httpTasks); ok && c.protocolVersion() < modernProtocol {
			if err := b.listTaskSupport(ctx, h); err != nil {
				b.log.Warn("listing the tools' task support failed: task-required tools will fail", slog.Any("error", err))
			}
		}
		return tools, nil
	})
}

// inBackground runs f in a goroutine of its own (see goSpare) and returns
// when f returns or ctx is done, whichever comes first. Writes to a wedged
// stdio child can block regardless of contexts; this keeps such a write from
// blocking the supervisor (it unblocks once the child is killed).
func inBackground[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	goSpare(func() {
		v, err := f(ctx)
		ch <- result{v, err}
	})
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// refreshTools re-fetches the tool list after tools/list_changed.
func (b *backend) refreshTools(ctx context.Context, c *conn) {
	lctx, cancel := context.WithTimeout(ctx, b.spec.Timeout)
	defer cancel()
	tools, err := b.listTools(lctx, c)
	if err != nil {
		level := slog.LevelWarn
		if ctx.Err() != nil || c.ctx.Err() != nil {
			level = slog.LevelDebug // shutting down or reconnecting: nothing is lost
		}
		b.log.Log(context.Background(), level, "refreshing tools after list_changed failed", slog.Any("error", err))
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
	b.mu.Lock()
	at := b.toolsUpdatedAt
	b.mu.Unlock()
	b.saveCache(tools, at)
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

// BackendLogLevel is the level the gateway asks backends to log at when
// their messages are forwarded ([Options.OnLog]): everything, so that each
// client's own logging/setLevel decides what it receives.
const BackendLogLevel mcp.LoggingLevel = "debug"

// askForLogs sends logging/setLevel to a backend that announces logging
// (called when its messages are wanted). A go-sdk server sends no message until a
// level is set (logging is deprecated in 2026-07-28, but what backends
// speak today). A failure only costs the backend's log messages.
func (b *backend) askForLogs(ctx context.Context, c *conn) {
	if ir := c.sess.InitializeResult(); ir == nil || ir.Capabilities == nil || ir.Capabilities.Logging == nil {
		return
	}
	_, err := inBackground(ctx, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, c.sess.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: BackendLogLevel})
	})
	if err != nil {
		b.log.Debug("asking the backend for its log messages failed", slog.Any("error", err))
	}
}

// spareIdle is how long a spare goroutine waits for more work before it
// ends.
const spareIdle = 10 * time.Second

// spare hands work to a goroutine waiting in runSpare (unbuffered: only to
// one that is waiting now).
var spare = make(chan func())

// goSpare runs f in a goroutine that an earlier f ran in, if one is idle,
// or in a new one. A fresh goroutine starts with a small stack that grows,
// by copying, as the go-sdk encodes and decodes a call; that growth was
// some 6% of the gateway's CPU time per passthrough call (stdio, profiled).
// A goroutine kept for the next call keeps its grown stack.
func goSpare(f func()) {
	select {
	case spare <- f:
	default:
		go runSpare(f)
	}
}

// runSpare runs f, then whatever goSpare hands it, until it has been idle
// for spareIdle.
func runSpare(f func()) {
	idle := time.NewTimer(spareIdle)
	defer idle.Stop()
	for {
		f()
		f = nil // not kept alive while idle
		idle.Reset(spareIdle)
		select {
		case f = <-spare:
		case <-idle.C:
			return
		}
	}
}
