package gateway

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/surface"
	"github.com/isogate/isogate/v8sandbox"
)

// Options configure a [Gateway] beyond its configuration file. The zero
// value of each field means its default.
type Options struct {
	// Logger receives the gateway's logs; default slog.Default().
	Logger *slog.Logger
	// Version is reported to MCP clients and backends; default "dev".
	Version string
	// Runner overrides the sandbox runner built from the configuration
	// (to share one pool between gateways); the caller closes it.
	Runner v8sandbox.Runner
	// Backends adds backends that cannot be described in a file, such as
	// in-process MCP servers ([InProcess]).
	Backends []Backend
	// StartWait overrides sandbox.backend_wait: how long a call to a
	// backend that is still starting waits for it.
	StartWait time.Duration
}

// Backend is a backend the program connects itself: Connect returns a
// fresh transport to it on every (re)connection.
type Backend struct {
	// Name is the backend's name in tool names (name.tool).
	Name string
	// Connect opens a transport to the backend's MCP server.
	Connect func(ctx context.Context) (mcp.Transport, error)
	// Tags are searchable labels of the backend's tools.
	Tags []string
	// Priority settles a tool or prompt name (or resource URI) it shares
	// with other backends, as backends.<name>.priority does.
	Priority int
}

// InProcess is a [Backend] served by an MCP server in this process,
// connected over in-memory transports.
func InProcess(name string, server *mcp.Server) Backend {
	spec := backend.InMemory(name, server)
	return Backend{Name: name, Connect: spec.Dial}
}

// Gateway is a running isogate: backends, catalogue, code mode and the MCP
// server in front of them.
type Gateway struct {
	app *app.App
	cfg *config.Config
}

// ErrInsecureBind refuses a non-loopback HTTP address without a token.
var ErrInsecureBind = surface.ErrInsecureBind

// Instructions teach an agent the discovery → call workflow; every MCP
// server of the gateway sends them at initialization.
const Instructions = surface.Instructions

// New builds a gateway from cfg (see config.Load and config.Default). Call
// Start to connect the backends.
func New(cfg *config.Config, opts Options) (*Gateway, error) {
	specs := make([]backend.Spec, 0, len(opts.Backends))
	for _, b := range opts.Backends {
		specs = append(specs, backend.Spec{
			Backend: config.Backend{Name: b.Name, Transport: backend.TransportCustom, Tags: b.Tags, Priority: b.Priority},
			Dial:    b.Connect,
		})
	}
	return build(cfg, app.Options{Logger: opts.Logger, Version: opts.Version, Runner: opts.Runner,
		ExtraSpecs: specs, StartWait: opts.StartWait})
}

// build composes a gateway with the composition root's own options.
func build(cfg *config.Config, opts app.Options) (*Gateway, error) {
	a, err := app.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	return &Gateway{app: a, cfg: cfg}, nil
}

// Start connects the backends in the background and returns at once; the
// catalogue is served from the on-disk cache until they connect.
func (g *Gateway) Start(ctx context.Context) error { return g.app.Start(ctx) }

// Server returns the MCP server that server.expose selects, to connect to
// any transport (mcp.Server.Run, mcp.Server.Connect).
func (g *Gateway) Server() *mcp.Server { return g.app.Surface.Server() }

// ServerFor returns the MCP server exposing the given tools (meta,
// passthrough or both), or nil for another value.
func (g *Gateway) ServerFor(e config.Expose) *mcp.Server { return g.app.Surface.ServerFor(e) }

// ServeStdio serves MCP over stdin/stdout until the client disconnects or
// ctx ends.
func (g *Gateway) ServeStdio(ctx context.Context) error { return g.app.Surface.ServeStdio(ctx) }

// HTTPHandler returns the streamable HTTP handler: MCP at /mcp, guarded by
// the Origin check and the bearer token, plus /healthz, /readyz and
// /metrics.
func (g *Gateway) HTTPHandler() http.Handler { return g.app.Surface.HTTPHandler() }

// Listen checks addr against the token policy ([ErrInsecureBind]) and
// opens the listener.
func (g *Gateway) Listen(addr string) (net.Listener, error) { return g.app.Surface.Listen(addr) }

// ServeHTTP serves streamable HTTP on ln until ctx ends, then shuts down
// within server.shutdown_grace.
func (g *Gateway) ServeHTTP(ctx context.Context, ln net.Listener) error {
	return g.app.Surface.ServeHTTP(ctx, ln)
}

// ServeMetrics serves /metrics, /healthz and /readyz on ln until ctx ends.
func (g *Gateway) ServeMetrics(ctx context.Context, ln net.Listener) error {
	return g.app.Surface.ServeMetrics(ctx, ln)
}

// BackendNotice says, in at most two short lines, which backends are still
// connecting and which are down; "" when every backend is up.
func (g *Gateway) BackendNotice() string { return g.app.Surface.BackendNotice() }

// BackendStatus is the state of one backend.
type BackendStatus struct {
	Name        string // configured name
	Transport   string // stdio, streamable-http, sse or custom
	State       string // starting, healthy, unhealthy, restarting, stopped
	ToolCount   int    // tools known (live or cached)
	ToolsCached bool   // the tools come from the cache, not the live backend
	Restarts    int    // connection attempts after the first one
	LastError   string // the most recent failure, "" since a success
	// ClientSessions counts the clients' own sessions open on the backend
	// besides the shared one (backends.<name>.sessions).
	ClientSessions int
}

// Backends returns the status of every backend, in configuration order.
func (g *Gateway) Backends() []BackendStatus {
	var out []BackendStatus
	for _, st := range g.app.Backends.Status() {
		out = append(out, BackendStatus{Name: st.Name, Transport: st.Transport, State: st.State.String(),
			ToolCount: st.ToolCount, ToolsCached: st.ToolsCached, Restarts: st.Restarts, LastError: st.LastError,
			ClientSessions: st.ClientSessions})
	}
	return out
}

// WaitReady waits until the named backend is connected, ctx ends or the
// backend is known to be down.
func (g *Gateway) WaitReady(ctx context.Context, name string) error {
	return g.app.Backends.WaitReady(ctx, name)
}

// ReloadResult names the backends a reload added, removed and restarted,
// the changed keys it applied and those that need a restart.
type ReloadResult struct {
	Added, Removed, Changed []string
	// Applied are the changed keys in force now (backends.<name>,
	// server.auth_token); NeedRestart the changed keys that take effect
	// only at the next start.
	Applied, NeedRestart []string
}

// Reload applies the backends, their policies and server.auth_token of a
// new configuration: backends added, removed or changed are started,
// stopped or restarted; the others, open client sessions and runs in
// flight keep working. Other settings take effect at the next start
// (ReloadResult.NeedRestart names them).
func (g *Gateway) Reload(cfg *config.Config) (ReloadResult, error) {
	res, err := g.app.Reload(cfg)
	return ReloadResult{Added: res.Added, Removed: res.Removed, Changed: res.Changed, Applied: res.Applied, NeedRestart: res.NeedRestart}, err
}

// Close stops the backends (no orphan processes) and the sandbox, within
// server.shutdown_grace.
func (g *Gateway) Close() error { return g.app.Close() }

// Shutdown is Close bounded by ctx. Only the first call of Close or
// Shutdown does the work.
func (g *Gateway) Shutdown(ctx context.Context) error { return g.app.Shutdown(ctx) }
