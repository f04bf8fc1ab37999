package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/codemode/output"
	"github.com/isogate/isogate/internal/metrics"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/runcode"
	"github.com/isogate/isogate/internal/stats"
	"github.com/isogate/isogate/internal/toolcache"
	"github.com/isogate/isogate/internal/tracing"
	"github.com/isogate/isogate/v8sandbox"
)

// Options configure a [Gateway] beyond its configuration file.
type Options struct {
	// Logger receives the gateway's logs; default slog.Default().
	Logger *slog.Logger
	// Version is reported to MCP clients and backends.
	Version string
	// Runner overrides the sandbox runner built from the configuration
	// (tests use it to share one pool).
	Runner v8sandbox.Runner
	// ExtraSpecs adds backends that cannot be described in a file, such as
	// in-process servers (backend.Spec.Dial).
	ExtraSpecs []backend.Spec
	// StartWait overrides sandbox.backend_wait: how long a call to a
	// backend that is still starting waits for it.
	StartWait time.Duration
}

// Gateway is a running isogate: backends, catalogue, engine and MCP server.
type Gateway struct {
	cfg      *config.Config
	opts     Options
	logger   *slog.Logger
	manager  *backend.Manager
	catalog  *catalog.Catalog
	policy   *pipeline.Policy
	calls    pipeline.Caller // every backend call goes through it
	runs     *runStore
	trips    roundTrips // runs paused for approval between rounds
	engine   *codemode.Engine
	store    resultstore.Store
	tools    backend.ToolCache // nil: files in server.cache_dir, or none
	stats    *stats.Counters
	runner   v8sandbox.Runner
	ownsPool bool
	runCode  *runcode.Runner
	rcPool   v8sandbox.Runner              // run_code's own small pool
	server   *mcp.Server                   // the one server.expose selects
	servers  map[config.Expose]*mcp.Server // one per server.expose value

	passthrough passthrough // backend tools listed directly
	aggregate   aggregate   // backend prompts and resources

	closeOnce  sync.Once
	sessionIDs sync.Map // *mcp.ServerSession → owner id, for sessions without an ID
	sessions   *sessionTracker
	metrics    *metrics.Metrics
	tracer     *tracing.Tracer                // nil: tracing off
	specs      atomic.Pointer[[]backend.Spec] // the current backends, replaced by Reload
	reloadMu   sync.Mutex
	requests   httpRequests
}

// New builds a gateway from cfg. Call Start to connect the backends.
func New(cfg *config.Config, opts Options) (*Gateway, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	g := &Gateway{cfg: cfg, opts: opts, logger: opts.Logger, catalog: catalog.New(), stats: stats.New()}
	g.sessions = newSessionTracker(cfg.Server.MaxSessions, g.logger)
	store, err := newStore(cfg, "results:")
	if err != nil {
		return nil, err
	}
	g.store = store

	startWait := opts.StartWait
	if startWait <= 0 {
		startWait = cfg.Sandbox.BackendWait
	}
	specs := backendSpecs(cfg)
	specs = append(specs, opts.ExtraSpecs...)
	g.specs.Store(&specs)
	g.policy = pipeline.NewPolicy(cfg.Backends)
	runStore, err := newStore(cfg, "runs:")
	if err != nil {
		return nil, err
	}
	g.runs = newRunStore(cfg, runStore)
	if cfg.Store.RedisURL != "" {
		if g.tools, err = toolcache.NewRedis(cfg.Store.RedisURL); err != nil {
			return nil, err
		}
	}
	g.manager = backend.NewManager(backend.Options{
		Specs:      specs,
		CacheDir:   cfg.Server.CacheDir,
		ToolCache:  g.tools,
		Logger:     g.logger,
		StartWait:  startWait,
		ClientInfo: &mcp.Implementation{Name: "isogate", Version: opts.Version},
		OnToolsChanged: func(name string, tools []*mcp.Tool) {
			// Denied tools never enter the catalogue: search, tool_info,
			// list_tools_meta, __interfaces and the bridge all read it.
			g.publish(name, tools)
			g.aggregate.refresh(name)
		},
		OnListChanged:     g.aggregate.refresh,
		OnResourceUpdated: g.aggregate.updated,
	})
	g.metrics = g.newMetrics()
	tracer, err := tracing.New(cfg.Telemetry.OTLPEndpoint, opts.Version)
	if err != nil {
		return nil, err
	}
	g.tracer = tracer
	g.calls = pipeline.New(pipeline.Options{Backend: pipeline.Manager(g.manager), Policy: g.policy, Stats: g.stats,
		Observe: g.observe})

	g.runner = opts.Runner
	if g.runner == nil {
		r, err := newRunner(cfg, g.logger)
		if err != nil {
			return nil, err
		}
		g.runner, g.ownsPool = r, true
	}
	out := cfg.Sandbox.Output
	engine, err := codemode.New(codemode.Options{
		Runner:        g.runner,
		Catalog:       codemode.FromCatalog(g.catalog),
		Caller:        pipelineCaller{g.calls},
		Backends:      managerBackends{g.manager},
		Timeout:       cfg.Sandbox.Timeout,
		HeapMB:        cfg.Sandbox.MaxHeapMB,
		MaxConcurrent: cfg.Sandbox.MaxConcurrent,
		MaxOutputSize: cfg.Sandbox.MaxOutputSize,
		MaxToolCalls:  cfg.Sandbox.MaxToolCalls,
		Output: output.Options{
			IntentFilter: out.IntentFilter, IntentMinBytes: out.IntentMinBytes,
			AutoChunk: out.AutoChunk, ChunkThreshold: out.ChunkThreshold,
			Truncate: out.Truncate, Footer: out.Footer,
		},
		Store:  g.store,
		Stats:  g.stats,
		Logger: g.logger,
	})
	if err != nil {
		g.Close()
		return nil, err
	}
	g.engine = engine
	if cfg.RunCode.Enabled {
		// run_code gets its own small pool, in the same isolation mode: its
		// heap limit differs from code mode's.
		rc := *cfg
		rc.Sandbox.MaxConcurrent, rc.Sandbox.MaxHeapMB = 2, runcode.HeapMB
		if g.rcPool, err = newRunner(&rc, g.logger); err != nil {
			g.Close()
			return nil, fmt.Errorf("run_code sandbox: %w", err)
		}
		if g.runCode, err = runcode.New(runcode.Options{Runner: g.rcPool, Config: cfg.RunCode, Logger: g.logger}); err != nil {
			g.Close()
			return nil, fmt.Errorf("run_code: %w", err)
		}
	}
	g.passthrough.g = g
	g.aggregate.g = g
	g.servers = map[config.Expose]*mcp.Server{}
	for _, e := range config.Exposes {
		g.servers[e] = g.newServer(e)
	}
	expose := cfg.Server.Expose
	if g.servers[expose] == nil {
		expose = config.ExposeMeta
	}
	g.server = g.servers[expose]
	return g, nil
}

// newRunner builds the sandbox runner the configuration asks for.
func newRunner(cfg *config.Config, logger *slog.Logger) (v8sandbox.Runner, error) {
	limits := v8sandbox.Limits{Timeout: cfg.Sandbox.Timeout, HeapMB: cfg.Sandbox.MaxHeapMB}
	if cfg.Sandbox.Isolation == config.IsolationProcess {
		return newProcessRunner(cfg, limits, logger)
	}
	return v8sandbox.NewPool(v8sandbox.Options{Workers: cfg.Sandbox.MaxConcurrent, Defaults: limits, Logger: logger}), nil
}

// Start connects the backends in the background and returns at once; the
// catalogue is served from the on-disk cache until they connect.
func (g *Gateway) Start(ctx context.Context) error {
	return g.manager.Start(ctx)
}

// Server returns the MCP server that server.expose selects.
func (g *Gateway) Server() *mcp.Server { return g.server }

// ServerFor returns the MCP server exposing the given tools (meta,
// passthrough or both), or nil for another value.
func (g *Gateway) ServerFor(e config.Expose) *mcp.Server { return g.servers[e] }

// Catalog returns the tool catalogue.
func (g *Gateway) Catalog() *catalog.Catalog { return g.catalog }

// Backends returns the backend manager.
func (g *Gateway) Backends() *backend.Manager { return g.manager }

// Calls returns the call pipeline (policy → approval → record → stats →
// backend) through which every backend call must go.
func (g *Gateway) Calls() pipeline.Caller { return g.calls }

// Policy returns the tool policy of the configured backends.
func (g *Gateway) Policy() *pipeline.Policy { return g.policy }

// Engine returns the code-mode engine.
func (g *Gateway) Engine() *codemode.Engine { return g.engine }

// Metrics returns the gateway's Prometheus metrics.
func (g *Gateway) Metrics() *metrics.Metrics { return g.metrics }

// Stats returns the gateway's counters.
func (g *Gateway) Stats() *stats.Counters { return g.stats }

// Close stops the backends (no orphan processes) and the sandbox.
func (g *Gateway) Close() error {
	grace := g.cfg.Server.ShutdownGrace
	if grace <= 0 {
		grace = config.DefaultShutdownGrace
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	return g.Shutdown(ctx)
}

// Shutdown is Close bounded by ctx: when ctx ends, stdio backends still
// running are killed and Shutdown returns without waiting for the sandbox
// workers (a process about to exit need not). Only the first call of Close
// or Shutdown does the work; later calls return at once.
func (g *Gateway) Shutdown(ctx context.Context) error {
	var err error
	g.closeOnce.Do(func() {
		sandboxDone := make(chan struct{})
		go func() {
			defer close(sandboxDone)
			if g.ownsPool && g.runner != nil {
				g.runner.Close()
			}
			if g.rcPool != nil {
				g.rcPool.Close()
			}
		}()
		err = g.manager.Close(ctx)
		for _, st := range []any{g.store, g.runs.store, g.tools} {
			if c, ok := st.(io.Closer); ok {
				_ = c.Close()
			}
		}
		select {
		case <-sandboxDone:
		case <-ctx.Done():
			g.logger.Warn("shutdown grace exceeded; not waiting for the sandbox", slog.Any("error", ctx.Err()))
		}
		if terr := g.tracer.Shutdown(ctx); terr != nil {
			g.logger.Warn("flushing traces", "err", terr)
		}
	})
	return err
}

// backendSpecs maps the configuration's enabled backends onto the manager's specs.
func backendSpecs(cfg *config.Config) []backend.Spec {
	var specs []backend.Spec
	for _, b := range cfg.EnabledBackends() {
		specs = append(specs, backend.Spec{
			Name: b.Name, Transport: string(b.Transport),
			Command: b.Command, Args: b.Args, Env: b.Env, Cwd: b.Cwd, InheritEnv: b.InheritEnv,
			URL: b.URL, Headers: b.Headers,
			Timeout: b.Timeout, MaxConcurrentCalls: b.MaxConcurrentCalls, Tags: b.Tags,
		})
	}
	return specs
}

// tagsOf returns the configured tags of a backend.
func (g *Gateway) tagsOf(name string) []string {
	for _, s := range *g.specs.Load() {
		if s.Name == name {
			return s.Tags
		}
	}
	return nil
}

// pipelineCaller adapts the call pipeline to code mode's Caller.
type pipelineCaller struct{ p pipeline.Caller }

func (c pipelineCaller) CallTool(ctx context.Context, b, tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
	return c.p.Call(ctx, &pipeline.Call{Backend: b, Tool: tool, Args: args})
}

// managerBackends gives code mode the configured backends; WaitReady is
// the manager's (bounded by sandbox.backend_wait).
type managerBackends struct{ *backend.Manager }

func (b managerBackends) Names() []string { return b.Backends() }
