// Package surface is isogate's MCP surface: the servers clients talk to
// (meta-tools, passthrough tools, aggregated prompts and resources), the
// approvals asked through them, stored results and run records, client
// sessions and the HTTP transport with its guards.
//
// It is built from [Parts], the components internal/app composes, and
// [Options], the settings it maps from the configuration. It holds no
// pointer back to whoever built it: the composition root tells it what
// changed ([Surface.ToolsChanged], [Surface.RefreshBackend],
// [Surface.ForgetBackend], [Surface.ResourceUpdated]).
package surface

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/approvals"
	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/clientreq"
	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/codemode/output"
	"github.com/isogate/isogate/internal/desk"
	"github.com/isogate/isogate/internal/embedsearch"
	"github.com/isogate/isogate/internal/metrics"
	"github.com/isogate/isogate/internal/observe"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/programs"
	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/internal/runcode"
	"github.com/isogate/isogate/internal/skills"
	"github.com/isogate/isogate/internal/tasks"
	"github.com/isogate/isogate/internal/typecheck"
	"github.com/isogate/isogate/v8sandbox/procpool"
)

// Parts are the components the surface serves. All but RunCode are required.
type Parts struct {
	Backends *backend.Manager  // supervised backend connections
	Catalog  *catalog.Catalog  // the tools the policy offers
	Policy   *pipeline.Policy  // tool policy (approvals of passthrough calls)
	Calls    pipeline.Caller   // the one call pipeline to the backends
	Engine   *codemode.Engine  // call_tool_chain
	RunCode  *runcode.Service  // run_code; nil: not offered
	Results  resultstore.Store // full results behind isogate://result/{id}
	Runs     resultstore.Store // run records behind isogate://runs/{id}
	// Journals keeps durable runs' journals (sandbox.durable); nil: none.
	Journals resultstore.Journals
	Observer *observe.Observer // stats and traces
	Metrics  *metrics.Metrics  // served at /metrics
	// Sandbox reports how programs are isolated (/readyz, isogate://stats);
	// nil: not reported.
	Sandbox func() SandboxReport
	// Desk, when set, is told of live runs, pending approvals and run
	// records, and may cancel runs and answer approvals (the operator's
	// console); nil: no console.
	Desk *desk.Desk
	// Skills serve isogate's own skills (internal/skills), such as saved
	// programs; none: only the backends' skills are served.
	Skills []skills.Source
	// Semantic fuses search_tools' lexical ranking with embeddings
	// (search.embeddings); nil: lexical only.
	Semantic *embedsearch.Semantic
	// Programs, when set, are the saved programs (programs.go).
	Programs *programs.Programs
	// Store says whether the durable store (internal/kv: saved programs,
	// their state, skills) answers: nil when it does (/readyz,
	// readyz_store.go); nil func: not reported.
	Store func(context.Context) error
}

// sandboxReport is the sandbox's report, nil when there is none.
func (sf *Surface) sandboxReport() *SandboxReport {
	if sf.sandbox == nil {
		return nil
	}
	r := sf.sandbox()
	return &r
}

// SandboxReport is how programs are isolated: the isolation mode, the V8
// version and, in process isolation, the confinement the workers obtained
// (nil until a worker has started).
type SandboxReport struct {
	Isolation   string                `json:"isolation"`
	V8Version   string                `json:"v8_version"`
	Confinement *procpool.Confinement `json:"confinement,omitempty"`
	// Typecheck is the type checker's state (sandbox.typecheck warn or
	// strict; nil when off).
	Typecheck *TypecheckReport `json:"typecheck,omitempty"`
}

// TypecheckReport is the type checker as operators see it: the mode, its
// state (typecheck.Status: where it runs, its worker, restarts, heap, code
// cache) and code mode's checks by outcome.
type TypecheckReport struct {
	Mode string `json:"mode"` // warn or strict
	typecheck.Status
	Checks typecheck.Checks `json:"checks"`
}

// brief is the report without the process's details (the worker's PID,
// the cache file's path, the last error): what a client that is not an
// admin reads in isogate://stats.
func (r *SandboxReport) brief() *SandboxReport {
	if r == nil || r.Typecheck == nil {
		return r
	}
	out := *r
	out.Typecheck = &TypecheckReport{Mode: r.Typecheck.Mode,
		Status: typecheck.Status{State: r.Typecheck.State, Where: r.Typecheck.Where, Restarts: r.Typecheck.Restarts}}
	return &out
}

// Options are the surface's settings; the zero value of each field means
// its default.
type Options struct {
	// Version is reported to clients.
	Version string
	// Logger receives the surface's logs; default slog.Default().
	Logger *slog.Logger
	// Expose selects the tools of the default server (server.expose).
	Expose config.Expose
	// ToolNames is how passthrough tools and backend prompts are named
	// (server.tool_names); default auto.
	ToolNames config.ToolNames
	// Priority gives a backend's backends.<name>.priority, which settles
	// names and resource URIs backends share; nil: 0 for every backend.
	Priority func(backend string) int
	// Order gives a backend's position in configuration order (the order
	// the file writes the backends in), which settles, between backends of
	// equal priority, the names and resource URIs they share; nil: by name.
	Order func(backend string) int
	// Stateless serves HTTP without sessions (server.stateless).
	Stateless bool
	// AuthToken is the bearer token HTTP clients must send (server.auth_token).
	AuthToken string
	// Auth configures static tokens, OAuth and admins (server.auth).
	Auth AuthOptions
	// MetricsAuth puts /metrics and /readyz's detail behind the token
	// (server.metrics_auth).
	MetricsAuth bool
	// AllowedOrigins are the browser origins allowed besides loopback.
	AllowedOrigins []string
	// AllowedHosts are the Host header values accepted besides loopback
	// names and the listener's address (server.allowed_hosts).
	AllowedHosts []string
	// SessionIdleTimeout closes idle HTTP sessions.
	SessionIdleTimeout time.Duration
	// MaxSessions bounds the open client sessions.
	MaxSessions int
	// ShutdownGrace bounds how long HTTP requests get to finish at shutdown.
	ShutdownGrace time.Duration
	// PassthroughShaping shapes passthrough results like code mode's.
	PassthroughShaping bool
	// PassthroughDropDuplicateText drops the text contents of a
	// passthrough result that repeat its structuredContent
	// (server.passthrough_drop_duplicate_text).
	PassthroughDropDuplicateText bool
	// RunTimeout is a run's deadline when the call sets none (sandbox.timeout).
	RunTimeout time.Duration
	// Output shapes passthrough results (with PassthroughShaping); its
	// MaxOutputSize also bounds a read_result page (sandbox.max_output_size).
	Output output.Options
	// RecordDir also writes every run record there as a JSON file.
	RecordDir string
	// Tasks bound the tasks clients create (server.tasks).
	Tasks TaskOptions
	// Console, when set, is served at /console and below on the HTTP
	// listener (server.console).
	Console http.Handler
	// DiscoveryWait bounds how long search_tools, tool_info and
	// list_tools_meta wait for backends still starting whose tools are not
	// known yet (sandbox.backend_wait); 0: its default.
	DiscoveryWait time.Duration
	// Durable says which code-mode runs are journalled (sandbox.durable);
	// it needs Parts.Journals.
	Durable codemode.Durability
	// DurableLimits bound one run's journal.
	DurableLimits codemode.DurableLimits
	// Typecheck is sandbox.typecheck ("off", "warn", "strict"): tool_info
	// says whether programs are checked against the signature it shows.
	Typecheck string
}

// Surface is the MCP surface over one set of [Parts].
type Surface struct {
	opts     Options
	logger   *slog.Logger
	manager  *backend.Manager
	catalog  *catalog.Catalog
	policy   *pipeline.Policy
	calls    pipeline.Caller
	engine   *codemode.Engine
	runCode  *runcode.Service
	store    resultstore.Store
	runs     *runStore
	durables tasks.Durables              // writes durable runs' journals to Parts.Journals
	kvPing   func(context.Context) error // Parts.Store
	observer *observe.Observer
	metrics  *metrics.Metrics
	sandbox  func() SandboxReport  // nil: not reported
	desk     *desk.Desk            // nil: no console
	semantic *embedsearch.Semantic // nil: lexical search only

	rounds   *approvals.Rounds // runs and approvals paused between rounds
	server   *mcp.Server
	servers  map[config.Expose]*mcp.Server
	sessions *sessionTracker
	requests httpRequests
	inflight inflightRequests // every request served, for a shutdown to cancel

	passthrough passthrough // backend tools listed directly
	aggregate   aggregate   // backend prompts and resources
	collisions  *nameCollisions
	forward     *clientreq.Forwarder // backend progress, logs and requests to the calling client
	callers     callers              // each client session's backend.Caller
	tasks       *tasks.Tasks         // tasks clients create (internal/tasks)
	programs    programSurface       // saved programs (programs.go)

	skills *skills.Service // the Skills extension (skills.go)

	processOwner string // owner key of callers without HTTP or a principal (owner.go)

	authToken atomic.Pointer[string] // server.auth_token now (SetAuthToken)
	tokens    *authn.Static          // the static tokens in force
}

// New builds the surface: one MCP server per server.expose value.
func New(p Parts, opts Options) *Surface {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.ToolNames == "" {
		opts.ToolNames = config.ToolNamesAuto
	}
	if opts.DiscoveryWait <= 0 {
		opts.DiscoveryWait = config.Default().Sandbox.BackendWait
	}
	sf := &Surface{
		opts: opts, logger: opts.Logger,
		manager: p.Backends, catalog: p.Catalog, policy: p.Policy, calls: p.Calls,
		engine: p.Engine, runCode: p.RunCode, store: p.Results, observer: p.Observer, metrics: p.Metrics,
		sandbox: p.Sandbox, desk: p.Desk, semantic: p.Semantic, kvPing: p.Store,
		programs:     programSurface{programs: p.Programs},
		runs:         newRunStore(p.Runs, opts.RecordDir).withOutputs(p.Results),
		durables:     tasks.Durables{Store: p.Journals, Durability: opts.Durable, Limits: opts.DurableLimits},
		sessions:     newSessionTracker(opts.MaxSessions, opts.Logger),
		processOwner: resultstore.OwnerKey("process-"+randomHex(12), ""),
	}
	if sf.opts.Tasks.MaxTTL <= 0 {
		sf.opts.Tasks.MaxTTL = config.Default().Server.Tasks.MaxTTL
	}
	if sf.opts.Tasks.MaxPerPrincipal <= 0 {
		sf.opts.Tasks.MaxPerPrincipal = config.Default().Server.Tasks.MaxPerPrincipal
	}
	sf.tasks = tasks.New(sf.taskHost(), p.Results, sf.opts.Tasks)
	sf.rounds = approvals.New(sf.approvalHost())
	sf.authToken.Store(&opts.AuthToken)
	sf.tokens = opts.Auth.Tokens
	if sf.tokens == nil {
		sf.tokens = authn.NewStatic(nil, opts.AuthToken)
	}
	names := naming{mode: opts.ToolNames, priority: opts.Priority, order: opts.Order}
	sf.collisions = &nameCollisions{logger: opts.Logger}
	sf.passthrough = passthrough{catalog: p.Catalog, handler: sf.passthroughHandler, naming: names, collisions: sf.collisions}
	sf.aggregate = aggregate{backends: p.Backends, policy: p.Policy, logger: opts.Logger, naming: names, collisions: sf.collisions}
	sf.forward = clientreq.New(opts.Logger)
	sf.skills = sf.newSkills(p.Skills)
	sf.aggregate.skillRead = sf.skillRead
	if p.Backends != nil {
		sf.callers.release = p.Backends.Release
	}
	// The one wait for each session's end: what is kept per session is
	// forgotten by these hooks.
	sf.callers.watch, sf.aggregate.subs.watch = sf.sessions.watch, sf.sessions.watch
	sf.sessions.onClose(sf.callers.forget)
	sf.sessions.onClose(sf.aggregate.forgetSession)
	sf.servers = map[config.Expose]*mcp.Server{}
	for _, e := range config.Exposes {
		sf.servers[e] = sf.newServer(e)
	}
	expose := opts.Expose
	if sf.servers[expose] == nil {
		expose = config.ExposeMeta
	}
	sf.server = sf.servers[expose]
	return sf
}

// Server returns the MCP server that server.expose selects.
func (sf *Surface) Server() *mcp.Server { return sf.server }

// ServerFor returns the MCP server exposing the given tools (meta,
// passthrough or both), or nil for another value.
func (sf *Surface) ServerFor(e config.Expose) *mcp.Server { return sf.servers[e] }

// ToolsChanged brings the passthrough tools in line with the catalogue,
// and has the tool vectors of search's embeddings computed again.
func (sf *Surface) ToolsChanged() {
	sf.passthrough.sync()
	sf.semanticChanged()
}

// semanticChanged tells search's embeddings, if any, that the catalogue
// changed (they are computed in the background).
func (sf *Surface) semanticChanged() {
	if sf.semantic != nil {
		sf.semantic.Changed()
	}
}

// NamingChanged names the passthrough tools and backend prompts again, and
// settles shared resource URIs again: a reload may have changed a
// backend's priority.
func (sf *Surface) NamingChanged() {
	sf.passthrough.sync()
	sf.aggregate.republish()
	sf.semanticChanged()
}

// RefreshBackend lists a backend's prompts and resources again, in the
// background.
func (sf *Surface) RefreshBackend(name string) { sf.aggregate.refresh(name) }

// ForgetBackend drops a removed backend's prompts and resources.
func (sf *Surface) ForgetBackend(name string) { sf.aggregate.forget(name) }

// ResourceUpdated forwards a backend's notifications/resources/updated to
// the subscribed clients.
func (sf *Surface) ResourceUpdated(name string, params *mcp.ResourceUpdatedNotificationParams) {
	sf.aggregate.updated(name, params)
}
