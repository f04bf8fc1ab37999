// Package app is isogate's composition root: the one place that turns a
// configuration into running parts — backends, catalogue, policy, call
// pipeline, observer, sandbox runners, code mode, run_code, stores — and
// hands them to the MCP surface. It is the only code that maps
// configuration onto component options and the only place that picks a
// sandbox runner by isolation mode ([NewRunner]).
//
// cmd/isogate and the public gateway package call it; nothing below it
// knows it exists.
package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/backendauth"
	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/codemode/output"
	"github.com/isogate/isogate/internal/desk"
	"github.com/isogate/isogate/internal/embedsearch"
	"github.com/isogate/isogate/internal/fairshare"
	"github.com/isogate/isogate/internal/kv"
	"github.com/isogate/isogate/internal/metrics"
	"github.com/isogate/isogate/internal/observe"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/programs"
	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/internal/runcode"
	"github.com/isogate/isogate/internal/skills"
	"github.com/isogate/isogate/internal/stats"
	"github.com/isogate/isogate/internal/surface"
	"github.com/isogate/isogate/internal/toolcache"
	"github.com/isogate/isogate/internal/tracing"
	"github.com/isogate/isogate/internal/typecheck"
	"github.com/isogate/isogate/internal/typecheck/checkworker"
	"github.com/isogate/isogate/v8sandbox"
)

// runCodeConcurrency is how many run_code programs run at once, in their
// own small pool (run_code's heap cap differs from code mode's).
const runCodeConcurrency = 2

// Options configure [New] beyond the configuration file.
type Options struct {
	// Logger receives the gateway's logs; default slog.Default().
	Logger *slog.Logger
	// Version is reported to MCP clients and backends; default "dev".
	Version string
	// Runner overrides the sandbox runner built from the configuration
	// (tests use it to share one pool); the caller closes it.
	Runner v8sandbox.Runner
	// ExtraSpecs adds backends that cannot be described in a file, such as
	// in-process servers (backend.Spec.Dial).
	ExtraSpecs []backend.Spec
	// StartWait overrides sandbox.backend_wait: how long a call to a
	// backend that is still starting waits for it.
	StartWait time.Duration
	// Skills serve isogate's own skills (internal/skills) besides the
	// backends'; none: only the backends' skills.
	Skills []skills.Source
}

// App is a composed gateway: its parts and the MCP surface over them.
type App struct {
	Backends *backend.Manager
	Catalog  *catalog.Catalog
	Policy   *pipeline.Policy
	Calls    pipeline.Caller // every backend call goes through it
	Observer *observe.Observer
	Metrics  *metrics.Metrics
	Engine   *codemode.Engine
	Runner   v8sandbox.Runner // code mode's sandbox
	// Typecheck checks code mode's programs (sandbox.typecheck): in a
	// checker worker process in process isolation, else in this process.
	Typecheck typecheck.Service
	RunCode   *runcode.Service // nil: run_code off
	// Semantic fuses search with embeddings (search.embeddings); nil: off.
	Semantic *embedsearch.Semantic
	// Programs are the saved programs (save_program), kept in store.redis_url
	// or store.data_dir.
	Programs *programs.Programs
	Surface  *surface.Surface
	drift    *programs.Drift // checks saved programs again when tools change

	logger   *slog.Logger
	opts     Options
	grace    time.Duration
	ownsPool bool
	rcPool   v8sandbox.Runner     // run_code's own small pool
	checker  *checkworker.Checker // the checker worker Typecheck is, if any
	checks   typecheck.Tally      // code mode's checks, by outcome
	tcMode   string               // sandbox.typecheck ("" or off: no checker reported)
	closers  []io.Closer          // stores and the tool cache
	redis    *redis.Client        // the one client of store.redis_url the stores share; nil: none
	kv       kv.Store             // the durable store: saved programs, state, skills
	tracer   *tracing.Tracer      // nil: tracing off
	specs    atomic.Pointer[[]backend.Spec]
	cfg      atomic.Pointer[config.Config] // in force: New's, then each Reload's
	started  *config.Config                // New's: what the keys a reload does not apply still are
	reloadMu sync.Mutex

	closeOnce sync.Once
	closeErr  error
}

// New composes a gateway from cfg. Call Start to connect the backends.
func New(cfg *config.Config, opts Options) (*App, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	a := &App{logger: opts.Logger, opts: opts, grace: cfg.Server.ShutdownGrace, Catalog: catalog.New()}
	a.cfg.Store(cfg)
	a.started = cfg
	// The operator's console (server.console) reads the audit events off
	// the log: every part logs through the desk's handler.
	var consoleDesk *desk.Desk
	var consoleHandler http.Handler
	if cfg.Server.Console.Enabled {
		consoleDesk = desk.New()
		a.logger = slog.New(consoleDesk.AuditHandler(a.logger.Handler()))
	}
	warnShortToken(a.logger, cfg.Server.AuthToken)
	warnDurableWithoutKey(a.logger, cfg)
	ok := false
	defer func() {
		if !ok {
			a.Close()
		}
	}()
	redisClient, err := sharedRedis(cfg)
	if err != nil {
		return nil, err
	}
	a.redis = redisClient
	// a.Metrics is read at each refusal: the stores come before it.
	results, err := newStore(cfg, a.redis, storeResults, cfg.Sandbox.Output.ResultStoreBytes, func() { a.Metrics.StoreRefusal(storeResults) })
	if err != nil {
		return nil, err
	}
	runs, err := newStore(cfg, a.redis, storeRuns, cfg.Store.MaxBytes, func() { a.Metrics.StoreRefusal(storeRuns) })
	if err != nil {
		return nil, err
	}
	journals, err := newJournals(cfg, a.redis)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, asCloser(results), asCloser(runs), asCloser(journals))
	var tools backend.ToolCache // nil: files in server.cache_dir, or none
	if a.redis != nil {
		cache := toolcache.NewRedisShared(a.redis, []byte(cfg.Store.HMACKey))
		tools = cache
		a.closers = append(a.closers, asCloser(cache))
	}
	var logins backendauth.TokenStore // nil: token files
	if redisLogins, err := loginTokens(cfg, a.redis); err != nil {
		return nil, err
	} else if redisLogins != nil {
		logins = redisLogins
		a.closers = append(a.closers, asCloser(redisLogins))
	}

	startWait := opts.StartWait
	if startWait <= 0 {
		startWait = cfg.Sandbox.BackendWait
	}
	specs := specsOf(cfg, opts.ExtraSpecs)
	a.specs.Store(&specs)
	a.Policy = pipeline.NewPolicy(policyOf(specs))
	// The surface is built last. The manager calls back only once it is
	// started (Start, after New has returned), so a.Surface is set by then.
	a.Backends = backend.NewManager(backend.Options{
		Specs:       specs,
		CacheDir:    cfg.Server.CacheDir,
		ToolCache:   tools,
		LoginTokens: logins,
		Logger:      a.logger,
		StartWait:   startWait,
		ClientInfo:  &mcp.Implementation{Name: "isogate", Version: opts.Version},
		OnToolsChanged: func(name string, tools []*mcp.Tool) {
			a.publish(name, tools)
			a.Surface.RefreshBackend(name)
		},
		OnListChanged: func(name string) {
			a.Surface.RefreshBackend(name)
		},
		OnResourceUpdated: func(name string, p *mcp.ResourceUpdatedNotificationParams) {
			a.Surface.ResourceUpdated(name, p)
		},
		// Progress and log messages go back to the client whose call
		// caused them (see surface.Surface.BackendProgress, BackendLog).
		OnProgress: func(name string, p *mcp.ProgressNotificationParams) {
			a.Surface.BackendProgress(name, p)
		},
		OnLog: func(name string, p *mcp.LoggingMessageParams) {
			a.Surface.BackendLog(name, p)
		},
		// Sampling, elicitation and roots requests of a backend go to
		// the client whose passthrough call caused them.
		ClientRequests: lateClientRequests{a},
		OnShare: func(name string, o fairshare.Outcome) {
			a.Observer.ShareHit(metrics.PoolBackend, name, o)
		},
	})

	// Code mode's and run_code's pools report the same confinement: once.
	sandboxLog := logOnce(a.logger)
	a.Runner = opts.Runner
	if a.Runner == nil {
		if a.Runner, err = NewRunner(sandboxOf(cfg, cfg.Sandbox.MaxConcurrent, cfg.Sandbox.MaxHeapMB, sandboxLog)); err != nil {
			return nil, err
		}
		a.ownsPool = true
	}
	if a.tracer, err = tracing.New(cfg.Telemetry.OTLPEndpoint, opts.Version); err != nil {
		return nil, err
	}
	a.tcMode = cfg.Sandbox.Typecheck
	a.Metrics = newMetrics(a.Backends, a.Runner, a.checkerMetrics, a.taskIntents,
		func() map[string]int64 {
			return storeBytes(map[string]resultstore.Store{storeResults: results, storeRuns: runs})
		})
	if a.typecheckOn() {
		a.Metrics.InitChecks(typecheck.Outcomes)
	}
	a.Observer = observe.New(observe.Options{Stats: stats.New(), Metrics: a.Metrics, Tracer: a.tracer, Labels: a.labels,
		Checks: &a.checks})
	a.Policy.SetPrincipalRules(cfg.Server.Auth.Rules)
	a.Calls = pipeline.New(pipeline.Options{Backend: pipeline.Manager(a.Backends), Policy: a.Policy, Observe: a.Observer.Calls,
		Audit: a.logger, Arguments: a.Catalog.CheckArguments})

	a.Typecheck, a.checker = checkerOf(cfg, sandboxLog)
	shaping := OutputOptions(cfg.Sandbox)
	programState, err := a.programState(cfg)
	if err != nil {
		return nil, err
	}
	if a.Engine, err = codemode.New(codemode.Options{
		State:         programState,
		Runner:        a.Runner,
		Catalog:       codemode.FromCatalog(a.Catalog),
		Caller:        pipelineCaller{a.Calls},
		Backends:      managerBackends{a.Backends},
		Timeout:       cfg.Sandbox.Timeout,
		HeapMB:        cfg.Sandbox.MaxHeapMB,
		MaxConcurrent: cfg.Sandbox.MaxConcurrent,
		MaxToolCalls:  cfg.Sandbox.MaxToolCalls,
		Output:        shaping,
		Store:         results,
		Observer:      a.Observer,
		Logger:        a.logger,
		Durable:       journals != nil,

		// The compiler is loaded at start (below), or on the first check.
		Typecheck:        a.Typecheck,
		TypecheckMode:    cfg.Sandbox.Typecheck,
		TypecheckTimeout: cfg.Sandbox.TypecheckTimeout,
		OnCheck:          a.Observer.Check,
		// A checked program's plan meets the policy before its first call.
		AdmitPlan: func(ctx context.Context, plan *pipeline.Plan, ask bool) error {
			return pipeline.AdmitPlan(ctx, a.Policy, plan, ask && cfg.Sandbox.PlanApproval)
		},

		// One principal's runs hold at most their share of the slots.
		MaxConcurrentPerPrincipal: cfg.Sandbox.MaxConcurrentPerPrincipal,
		OnShare:                   func(o fairshare.Outcome) { a.Observer.ShareHit(metrics.PoolSandbox, "", o) },

		// A result up to what one session may keep in the store is stored
		// whole and returned truncated, never refused.
		MaxResultBytes: int(cfg.Sandbox.Output.ResultStoreBytes / resultstore.DefaultOwnerShare),
	}); err != nil {
		return nil, err
	}
	if cfg.Sandbox.Typecheck != codemode.TypecheckOff {
		a.Typecheck.WarmInBackground()
	}
	if cfg.RunCode.Enabled {
		if a.rcPool, err = NewRunner(sandboxOf(cfg, runCodeConcurrency, runcode.HeapMB, sandboxLog)); err != nil {
			return nil, fmt.Errorf("run_code sandbox: %w", err)
		}
		rcOpts := runcode.Options{Runner: a.rcPool, Config: cfg.RunCode, Logger: a.logger}
		if cfg.RunCode.State {
			rcOpts.State = programState
		}
		if a.RunCode, err = runcode.New(rcOpts); err != nil {
			return nil, fmt.Errorf("run_code: %w", err)
		}
	}
	if a.Semantic, err = a.newSemantic(cfg); err != nil {
		return nil, err
	}
	pstore, err := programStore(cfg, a.redis)
	if err != nil {
		return nil, err
	}
	vet := &vetter{engine: a.Engine, policy: a.Policy, timeout: cfg.Sandbox.Timeout, approveAtSave: cfg.Server.Auth.ApprovalAtSave}
	a.Programs = programs.New(programs.Options{Store: pstore, Logger: a.logger,
		Vet:      vet,
		OnChange: func() { a.Surface.ProgramsChanged() }})
	vet.programs = a.Programs // a program may call saved programs: checked with them
	// Drift: saved programs checked again when a backend's tools change
	// (publish, Reload); stopped before their store closes.
	a.drift = a.Programs.Drift(programs.DriftOptions{Catalogue: &driftCatalogue{a: a}})
	a.closers = append(a.closers, a.drift, pstore)
	a.Metrics.ObservePrograms(a.programCounts)
	a.kv = pstore
	a.Metrics.ObserveStore("kv", a.StoreHealth)
	authOpts := authOptions(cfg.Server, a.logger)
	a.Surface = surface.New(surface.Parts{
		Backends: a.Backends, Catalog: a.Catalog, Policy: a.Policy, Calls: a.Calls, Engine: a.Engine,
		RunCode: a.RunCode, Results: results, Runs: runs, Journals: journals, Observer: a.Observer, Metrics: a.Metrics,
		Sandbox:  a.Sandbox,
		Desk:     consoleDesk,
		Skills:   append([]skills.Source{programSkills(a.Programs, a.Policy, a.logger)}, opts.Skills...),
		Semantic: a.Semantic,
		Programs: a.Programs,
		Store:    a.StoreHealth,
	}, surface.Options{
		Version:                      opts.Version,
		Logger:                       a.logger,
		Expose:                       cfg.Server.Expose,
		ToolNames:                    cfg.Server.ToolNames,
		Typecheck:                    cfg.Sandbox.Typecheck,
		Priority:                     a.priorityOf,
		Order:                        a.orderOf,
		Stateless:                    cfg.Server.Stateless,
		AuthToken:                    cfg.Server.AuthToken,
		Auth:                         authOpts,
		MetricsAuth:                  cfg.Server.MetricsAuth,
		AllowedOrigins:               cfg.Server.AllowedOrigins,
		AllowedHosts:                 cfg.Server.AllowedHosts,
		SessionIdleTimeout:           cfg.Server.SessionIdleTimeout,
		MaxSessions:                  cfg.Server.MaxSessions,
		ShutdownGrace:                cfg.Server.ShutdownGrace,
		PassthroughShaping:           cfg.Server.PassthroughShaping,
		PassthroughDropDuplicateText: cfg.Server.PassthroughDropDuplicateText,
		RunTimeout:                   cfg.Sandbox.Timeout,
		Output:                       shaping,
		RecordDir:                    cfg.Server.RecordDir,
		DiscoveryWait:                startWait,
		Durable:                      codemode.Durability(cfg.Sandbox.Durable),
		DurableLimits:                codemode.DurableLimits{MaxCalls: cfg.Sandbox.DurableMaxCalls, MaxBytes: cfg.Sandbox.DurableMaxBytes},
		Tasks:                        taskOptions(cfg, results),
		Console:                      consoleOrNil(consoleDesk, lateHandler{&consoleHandler}),
	})
	if consoleDesk != nil {
		c := a.newConsole(cfg, consoleDesk)
		consoleHandler = c
		a.closers = append(a.closers, c) // stops its metrics sampling
	}
	ok = true
	return a, nil
}

// sandboxOf describes a runner in the configured isolation mode.
func sandboxOf(cfg *config.Config, concurrent, heapMB int, logger *slog.Logger) Sandbox {
	return Sandbox{Isolation: cfg.Sandbox.Isolation, Concurrent: concurrent, Confinement: cfg.Sandbox.Confinement,
		SpareWorkers: cfg.Sandbox.SpareWorkers, IdleWorkersMB: cfg.Sandbox.IdleWorkersMB, Limits: v8sandbox.Limits{Timeout: cfg.Sandbox.Timeout, HeapMB: heapMB}, Logger: logger}
}

// OutputOptions maps sandbox.max_output_size and sandbox.output onto the
// one output-options type that code mode and passthrough shaping use.
func OutputOptions(s config.SandboxConfig) output.Options {
	o := s.Output
	return output.Options{
		IntentFilter: o.IntentFilter, IntentMinBytes: o.IntentMinBytes,
		AutoChunk: o.AutoChunk, ChunkThreshold: o.ChunkThreshold,
		Truncate: o.Truncate, Footer: o.Footer,
		MaxOutputSize: s.MaxOutputSize,
	}
}

// Start connects the backends in the background and returns at once; the
// catalogue is served from the on-disk cache until they connect.
func (a *App) Start(ctx context.Context) error { return a.Backends.Start(ctx) }

// Close stops the backends (no orphan processes) and the sandbox, within
// server.shutdown_grace.
func (a *App) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), cmpGrace(a.grace))
	defer cancel()
	return a.Shutdown(ctx)
}

// cmpGrace is grace, or config's default when unset.
func cmpGrace(grace time.Duration) time.Duration {
	if grace <= 0 {
		return config.DefaultShutdownGrace
	}
	return grace
}

// Shutdown is Close bounded by ctx: when ctx ends, stdio backends still
// running are killed and Shutdown returns without waiting for the sandbox
// workers (a process about to exit need not). Only the first call of Close
// or Shutdown does the work; later calls return its result at once.
func (a *App) Shutdown(ctx context.Context) error {
	a.closeOnce.Do(func() {
		// Before the sandbox and backends close under them: a task that
		// fails of it is left to another replica, not failed here.
		if a.Surface != nil {
			a.Surface.StopTasks()
		}
		sandboxDone := make(chan struct{})
		go func() {
			defer close(sandboxDone)
			if a.ownsPool && a.Runner != nil {
				a.Runner.Close()
			}
			if a.rcPool != nil {
				a.rcPool.Close()
			}
			if a.checker != nil {
				a.checker.Close()
			}
		}()
		if a.Backends != nil {
			a.closeErr = a.Backends.Close(ctx)
		}
		for _, c := range a.closers {
			if c != nil {
				_ = c.Close()
			}
		}
		if a.redis != nil { // after every store that uses it
			_ = a.redis.Close()
		}
		select {
		case <-sandboxDone:
		case <-ctx.Done():
			a.logger.Warn("shutdown grace exceeded; not waiting for the sandbox", slog.Any("error", ctx.Err()))
		}
		if err := a.tracer.Shutdown(ctx); err != nil {
			a.logger.Warn("flushing traces", "err", err)
		}
	})
	return a.closeErr
}

// asCloser returns v as an io.Closer, or nil when it has nothing to close.
func asCloser(v any) io.Closer {
	c, _ := v.(io.Closer)
	return c
}

// Reload applies a new configuration (which config.Load has validated):
// the backends, their policies and priorities (backends added, removed or
// changed are started, stopped or restarted; the others, open client
// sessions and runs in flight keep working) and server.auth_token (the old
// token stops working at once). Every other key takes effect at the next
// start: the result names in NeedRestart those that differ from what runs
// (the configuration New was given), so that putting a file back as it was
// at the start warns about nothing.
func (a *App) Reload(cfg *config.Config) (ReloadResult, error) {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	out := ReloadResult{}
	if prev := a.cfg.Load(); prev != nil {
		out.Applied, _ = classify(changedKeys(prev, cfg))
		_, out.NeedRestart = classify(changedKeys(a.started, cfg))
	}
	if slices.Contains(out.Applied, authTokenKey) {
		warnShortToken(a.logger, cfg.Server.AuthToken)
		if err := a.Surface.SetAuthToken(cfg.Server.AuthToken); err != nil {
			out.Applied = slices.DeleteFunc(out.Applied, func(k string) bool { return k == authTokenKey })
			out.NeedRestart = append(out.NeedRestart, authTokenKey)
			a.logger.Error("configuration reload: server.auth_token not applied", slog.Any("error", err))
			cfg.Server.AuthToken = a.cfg.Load().Server.AuthToken // what is in force
		}
	}
	if slices.Contains(out.Applied, authRulesKey) {
		a.Policy.SetPrincipalRules(cfg.Server.Auth.Rules)
	}
	specs := specsOf(cfg, a.opts.ExtraSpecs)
	a.specs.Store(&specs)
	a.Policy.Replace(pipeline.NewPolicy(policyOf(specs)))
	res, err := a.Backends.Update(specs)
	out.UpdateResult = res
	if err != nil {
		return out, err
	}
	a.cfg.Store(cfg)
	_, movedBefore := a.Surface.Repointed()
	for _, name := range res.Removed {
		a.Catalog.RemoveBackend(name)
		a.Surface.ForgetBackend(name)
	}
	// Tags, descriptions and policy may have changed for the backends that kept running:
	// the catalogue takes them all before the names are settled again, so
	// that names are settled (and collisions logged) once, on what serves
	// now, not on a half-reloaded catalogue.
	tools := a.Backends.Tools()
	for _, name := range a.Backends.Backends() {
		if ts, ok := tools[name]; ok && !slices.Contains(res.Added, name) && !slices.Contains(res.Changed, name) {
			a.setBackend(name, ts)
		}
	}
	a.Surface.NamingChanged() // tools, priorities and the order of the backends
	a.drift.Kick()            // tools gone, or denied now
	moved, movedAfter := a.Surface.Repointed()
	if n := movedAfter - movedBefore; n > 0 {
		out.Repointed = moved[max(0, len(moved)-n):]
	}
	return out, nil
}

// publish puts a backend's tools in the catalogue, as the tool policy
// offers them (denied tools never enter the catalogue: search, tool_info,
// list_tools_meta, __interfaces and the bridge all read it). Tools of a
// backend no longer configured are ignored.
func (a *App) publish(name string, tools []*mcp.Tool) {
	if !slices.Contains(a.Backends.Backends(), name) {
		return
	}
	a.setBackend(name, tools)
	a.Surface.ToolsChanged()
	a.drift.Kick()
}

// setBackend puts a backend's tools in the catalogue: those the policy
// offers as tools, the others as denied, each with the rule that denies
// it (so that "what is this name?" says so, catalog.Catalog.What), with
// its configured description and tags.
func (a *App) setBackend(name string, tools []*mcp.Tool) {
	var denied []catalog.DeniedTool
	for _, t := range tools {
		if t == nil {
			continue
		}
		if rule, pattern := a.Policy.DeniedBy(name, t.Name); rule != "" {
			denied = append(denied, catalog.DeniedTool{Tool: t.Name, Rule: rule, Pattern: pattern, Description: t.Description})
		}
	}
	a.Catalog.SetBackendSpec(name, catalog.BackendSpec{Description: a.descriptionOf(name), Tags: a.tagsOf(name), Denied: denied},
		a.Policy.Filter(name, tools))
}

// descriptionOf returns the configured description of a backend
// (backends.<name>.description); it follows a reload.
func (a *App) descriptionOf(name string) string {
	for _, s := range *a.specs.Load() {
		if s.Name == name {
			return s.Description
		}
	}
	return ""
}

// tagsOf returns the configured tags of a backend.
func (a *App) tagsOf(name string) []string {
	for _, s := range *a.specs.Load() {
		if s.Name == name {
			return s.Tags
		}
	}
	return nil
}

// priorityOf returns the configured priority of a backend
// (backends.<name>.priority); it follows a reload.
func (a *App) priorityOf(name string) int {
	for _, s := range *a.specs.Load() {
		if s.Name == name {
			return s.Priority
		}
	}
	return 0
}

// orderOf returns a backend's position in configuration order: the
// configured backends in the order the file writes them, then the extra
// specs; it follows a reload.
func (a *App) orderOf(name string) int {
	specs := *a.specs.Load()
	if i := slices.IndexFunc(specs, func(s backend.Spec) bool { return s.Name == name }); i >= 0 {
		return i
	}
	return len(specs)
}

// labels bounds the metric labels of a call: the tool only when the
// catalogue has it, the backend only when it is configured.
func (a *App) labels(backendName, tool string) (string, string) {
	if e, err := a.Catalog.Lookup(backendName + "." + tool); err == nil && e.Backend == backendName && e.Tool == tool {
		return backendName, tool
	}
	if slices.Contains(a.Backends.Backends(), backendName) {
		return backendName, metrics.Other
	}
	return metrics.Other, metrics.Other
}

// specsOf is the manager's backends: the configuration's enabled ones as
// they are configured, then extra.
func specsOf(cfg *config.Config, extra []backend.Spec) []backend.Spec {
	var specs []backend.Spec
	for _, b := range cfg.EnabledBackends() {
		specs = append(specs, backend.Spec{Backend: b})
	}
	return append(specs, extra...)
}

// policyOf is the backends the policy covers, by name: the configured ones
// and the extra specs (whose tools, prompts and resources lists apply too).
func policyOf(specs []backend.Spec) map[string]config.Backend {
	out := make(map[string]config.Backend, len(specs))
	for _, s := range specs {
		out[s.Name] = s.Backend
	}
	return out
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
