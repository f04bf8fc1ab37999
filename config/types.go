package config

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Config is the complete configuration of the gateway.
//
// The koanf tags give the key of each field in the configuration file.
type Config struct {
	// Server configures how the gateway itself is served.
	Server ServerConfig `koanf:"server"`
	// Backends are the upstream MCP servers, keyed by name. Each Backend's
	// Name equals its key.
	Backends map[string]Backend `koanf:"backends"`
	// Sandbox configures the code sandbox.
	Sandbox SandboxConfig `koanf:"sandbox"`
	// RunCode configures the run_code tool and the APIs it offers.
	RunCode RunCodeConfig `koanf:"run_code"`
	// Telemetry configures trace export.
	Telemetry TelemetryConfig `koanf:"telemetry"`
	// Store configures where stored results and run records are kept.
	Store StoreConfig `koanf:"store"`
	// Search configures search_tools beyond its lexical ranking (search.go).
	Search SearchConfig `koanf:"search"`
	// State bounds programs' own key-value store (state.get/set/…), kept
	// per principal where saved programs are (store.redis_url or
	// store.data_dir).
	State StateConfig `koanf:"state"`
	// Import is a Claude-style mcpServers file whose servers become
	// backends, under this file's own backends.<name> settings; relative to
	// this file. Empty: none.
	Import string `koanf:"import"`

	// Source is the configuration file that was loaded, or "" if none was.
	Source string `koanf:"-"`
	// Order is the names of Backends in configuration order: the order the
	// file writes them in (an imported mcpServers file's servers first,
	// then the importing file's own), then those only environment variables
	// declare, by name. A name two backends share goes, at equal priority,
	// to the first (server.tool_names bare). Load sets it; when it lacks a
	// backend, that one comes after, by name.
	Order []string `koanf:"-"`
}

// ServerConfig configures how the gateway is served to its client.
type ServerConfig struct {
	// HTTP is the listen address for streamable HTTP, such as
	// "127.0.0.1:8787". Empty means serve on stdin/stdout.
	HTTP string `koanf:"http"`
	// AuthToken is the bearer token HTTP clients must present; empty means
	// none. ${VAR} references are expanded.
	AuthToken string `koanf:"auth_token"`
	// Auth configures authentication (none, static tokens or OAuth 2.1),
	// principals and their access rules (auth.go).
	Auth AuthConfig `koanf:"auth"`
	// Console configures the operator's web console at /console
	// (console.go).
	Console ConsoleConfig `koanf:"console"`
	// LogLevel is one of "debug", "info", "warn", "error". Default "info".
	LogLevel string `koanf:"log_level"`
	// LogFormat is "text" or "json". Default "text".
	LogFormat string `koanf:"log_format"`
	// CacheDir is where the gateway keeps cached data. Default
	// $XDG_CACHE_HOME/isogate, falling back to ~/.cache/isogate.
	CacheDir string `koanf:"cache_dir"`
	// RecordDir, when set, receives every call_tool_chain run record as
	// <id>.json (besides the isogate://runs/{id} resource). A relative path
	// is taken relative to the configuration file's directory.
	RecordDir string `koanf:"record_dir"`

	// SessionIdleTimeout closes an HTTP client session that sent no request
	// for this long. Default 30m.
	SessionIdleTimeout time.Duration `koanf:"session_idle_timeout"`
	// MaxSessions bounds the open HTTP client sessions; past it the session
	// idle the longest is closed. Default 10000.
	MaxSessions int `koanf:"max_sessions"`
	// AllowedOrigins are the browser origins (scheme://host[:port]) allowed
	// to call the HTTP endpoint besides same-origin requests and, on a
	// loopback listener, loopback origins. Requests without Origin are
	// always allowed; others get 403.
	AllowedOrigins []string `koanf:"allowed_origins"`
	// AllowedHosts are the Host header values (a name for any port, or
	// name:port) the HTTP listeners accept besides loopback names and the
	// address a request arrived at: the names a reverse proxy forwards.
	// When set, every other Host gets 403, with or without
	// authentication; unset, a request that arrived at a loopback
	// address, or at any address without authentication, must name a
	// loopback host or the address (DNS rebinding).
	AllowedHosts []string `koanf:"allowed_hosts"`
	// MetricsAddr serves Prometheus metrics at /metrics on their own
	// listener, such as "127.0.0.1:9090" (useful in stdio mode). Empty
	// means only the HTTP listener serves /metrics.
	MetricsAddr string `koanf:"metrics_addr"`
	// MetricsAuth puts /metrics and the detail of /readyz behind
	// server.auth_token: without the token /metrics is 401 and /readyz
	// answers only its status code and {"ready": …}. Default false.
	MetricsAuth bool `koanf:"metrics_auth"`
	// WatchConfig reloads the configuration when its file changes, as
	// SIGHUP does.
	WatchConfig bool `koanf:"watch_config"`
	// Stateless serves streamable HTTP without protocol sessions: every
	// request stands alone, so any replica behind a load balancer can
	// serve it, and clients speaking MCP 2026-07-28 negotiate it. Stored
	// results and run records then belong to the caller's identity (the
	// bearer token's principal) instead of a session.
	Stateless bool `koanf:"stateless"`
	// Expose is which tools clients see: ExposeMeta (the meta-tools, the
	// default), ExposePassthrough (every allowed backend tool, named as
	// ToolNames says) or ExposeBoth. An HTTP client may ask for another
	// with /mcp?expose=….
	Expose Expose `koanf:"expose"`
	// ToolNames is how passthrough tools and backend prompts are named for
	// clients: ToolNamesAuto (the default), ToolNamesBare or
	// ToolNamesPrefixed.
	ToolNames ToolNames `koanf:"tool_names"`
	// PassthroughShaping runs passed-through tool results through the
	// code-mode output pipeline (truncation, chunking, stored results)
	// instead of returning them unchanged.
	PassthroughShaping bool `koanf:"passthrough_shaping"`
	// PassthroughDropDuplicateText drops, from a passed-through tool
	// result that has structuredContent, the text contents that only repeat
	// it (its JSON, or one of its top-level string values), for clients
	// that read structuredContent. Off by default: MCP asks a tool with
	// structured output to repeat it as text, for clients that read only
	// content.
	PassthroughDropDuplicateText bool `koanf:"passthrough_drop_duplicate_text"`
	// ShutdownGrace bounds shutdown on SIGTERM or SIGINT: in-flight runs
	// are cancelled at once, and the gateway exits at most this long after
	// the signal (stdio backends that have not exited by then are killed).
	// Default 5s.
	ShutdownGrace time.Duration `koanf:"shutdown_grace"`
	// Tasks bounds the MCP tasks clients create (a tools/call run in the
	// background, polled with tasks/get and read with tasks/result).
	Tasks TasksConfig `koanf:"tasks"`
}

// TasksConfig bounds the tasks clients create (server.tasks).
type TasksConfig struct {
	// MaxTTL is the longest a task is kept from its creation: a client's
	// larger ttl is clamped to it, and a task that asks for none gets it.
	MaxTTL time.Duration `koanf:"max_ttl"`
	// MaxPerPrincipal bounds one principal's live tasks: past it, its
	// oldest finished task is dropped, or the new one refused
	// (TOO_MANY_TASKS) when none is finished.
	MaxPerPrincipal int `koanf:"max_per_principal"`
}

// Expose selects the tools a client sees (server.expose).
type Expose string

// The values of server.expose.
const (
	// ExposeMeta lists the meta-tools (search_tools, tool_info, …).
	ExposeMeta Expose = "meta"
	// ExposePassthrough lists every allowed backend tool directly.
	ExposePassthrough Expose = "passthrough"
	// ExposeBoth lists the meta-tools and the backend tools.
	ExposeBoth Expose = "both"
)

// Exposes lists the valid values of server.expose.
var Exposes = []Expose{ExposeMeta, ExposePassthrough, ExposeBoth}

// ToolNames selects how passthrough tools and backend prompts are named
// (server.tool_names).
type ToolNames string

// The values of server.tool_names.
const (
	// ToolNamesPrefixed names every tool and prompt <backend>__<name>.
	ToolNamesPrefixed ToolNames = "prefixed"
	// ToolNamesBare names every tool and prompt by its backend's own name;
	// of the backends sharing a name, the one with the highest priority
	// (then the first in configuration order) keeps it and the others are
	// prefixed.
	ToolNamesBare ToolNames = "bare"
	// ToolNamesAuto uses the backend's own name when no other backend
	// offers the same one, and prefixes every backend's when several do.
	ToolNamesAuto ToolNames = "auto"
)

// ToolNameModes lists the valid values of server.tool_names.
var ToolNameModes = []ToolNames{ToolNamesPrefixed, ToolNamesBare, ToolNamesAuto}

// Sessions selects when a client gets a backend session of its own
// (backends.<name>.sessions).
type Sessions string

// The values of backends.<name>.sessions.
const (
	// SessionsAuto gives a client its own backend session when the shared
	// one cannot carry what the backend may ask it: a client on a protocol
	// version before 2026-07-28 that declares sampling or elicitation,
	// while the shared session speaks 2026-07-28 (where a backend may not
	// send those requests during a call). Every other client shares.
	SessionsAuto Sessions = "auto"
	// SessionsShared makes every client share the one supervised session
	// (a backend's requests go to the client whose call is in flight).
	SessionsShared Sessions = "shared"
	// SessionsPerClient gives every client session a backend session of
	// its own, on the client's protocol version and declaring only the
	// client's capabilities.
	SessionsPerClient Sessions = "per_client"
)

// SessionModes lists the valid values of backends.<name>.sessions.
var SessionModes = []Sessions{SessionsAuto, SessionsShared, SessionsPerClient}

// StoreConfig configures the shared state store.
type StoreConfig struct {
	// RedisURL, such as "redis://127.0.0.1:6379/0", keeps stored results,
	// run records and backend tool-list caches in Redis (with the TTLs and
	// byte budgets of sandbox.output), shared by every replica. Empty keeps
	// them in process memory. ${VAR} is expanded.
	RedisURL string `koanf:"redis_url"`
	// HMACKey, when set, authenticates every entry isogate writes to Redis
	// (stored results, run records, cached tool lists) with HMAC-SHA256: an
	// entry planted or changed by anything else that reaches Redis is
	// refused. Every replica needs the same key. ${VAR} is expanded.
	HMACKey string `koanf:"hmac_key"`
	// TokenKey, when set with RedisURL, keeps the tokens of `isogate
	// login` (backends.<name>.auth authorization_code) in Redis, encrypted
	// with AES-256-GCM under a key derived from it, shared by every
	// replica; without it each replica keeps its own token file. ${VAR}
	// is expanded.
	TokenKey string `koanf:"token_key"`
	// LeaseTTL is how long a replica's lease on a running task lasts
	// without a heartbeat (renewed every third of it): a replica that dies
	// leaves its tasks to be taken over by another replica (or failed with
	// REPLICA_LOST) about this long after its death.
	LeaseTTL time.Duration `koanf:"lease_ttl"`
	// MaxBytes caps what the run-record store (isogate://runs/{id}) holds,
	// counted as the store holds it (data and per-entry bookkeeping): per
	// replica in memory, shared by every replica on Redis. A record that
	// does not fit is refused with STORE_FULL and the run's response names
	// no record. Default DefaultStoreMaxBytes (64 MiB: about 30 000 runs
	// of one small call each on Redis, see docs/operations.md).
	MaxBytes int64 `koanf:"max_bytes"`
	// DataDir is where, without RedisURL, what outlives the process (saved
	// programs and their versions) is kept: an embedded bbolt database,
	// <data_dir>/isogate.db, created on first use. One process holds it at
	// a time. Default $XDG_DATA_HOME/isogate (~/.local/share/isogate).
	DataDir string `koanf:"data_dir"`
}

// StateConfig bounds programs' own state: each principal's keys, quotas
// counted over every replica.
type StateConfig struct {
	// MaxKeys is how many keys one principal may keep; a write past it
	// fails with STATE_QUOTA_EXCEEDED.
	MaxKeys int `koanf:"max_keys"`
	// MaxBytes bounds one principal's keys and values (their JSON)
	// together; a write past it fails with STATE_QUOTA_EXCEEDED.
	MaxBytes int `koanf:"max_bytes"`
	// MaxTTL, when set, is the longest a key lives: a key set without a
	// ttl, or with a longer one, expires this long after it is set. 0:
	// keys without a ttl are kept until deleted.
	MaxTTL time.Duration `koanf:"max_ttl"`
}

// TelemetryConfig configures OpenTelemetry tracing.
type TelemetryConfig struct {
	// OTLPEndpoint is the OTLP/HTTP collector to export spans to, such as
	// "http://127.0.0.1:4318". Empty disables tracing. ${VAR} is expanded.
	OTLPEndpoint string `koanf:"otlp_endpoint"`
}

// SlogLevel returns LogLevel as a slog.Level; unknown levels map to Info.
func (s ServerConfig) SlogLevel() slog.Level {
	switch s.LogLevel {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}

// Transport is how the gateway talks to a backend.
type Transport string

// The transports a backend may use.
const (
	// TransportStdio runs Command and speaks MCP over its stdin/stdout.
	TransportStdio Transport = "stdio"
	// TransportStreamableHTTP connects to URL with MCP streamable HTTP.
	TransportStreamableHTTP Transport = "streamable-http"
	// TransportSSE connects to URL with the legacy HTTP+SSE transport.
	TransportSSE Transport = "sse"
)

// Backend is one upstream MCP server.
type Backend struct {
	// Name is the backend's key in the backends map. It is non-empty and
	// has no dots or whitespace, so "<name>.<tool>" names a tool uniquely.
	Name string `koanf:"-"`
	// Transport is how to reach the backend. When not configured it is
	// TransportStdio if Command is set and TransportStreamableHTTP if URL is.
	Transport Transport `koanf:"transport"`

	// Command is the program to run (stdio only). ${VAR} is expanded.
	Command string `koanf:"command"`
	// Args are the program's arguments (stdio only). ${VAR} is expanded.
	Args []string `koanf:"args"`
	// Env holds extra environment variables for the program (stdio only).
	// ${VAR} is expanded in values. The program gets only a minimal base
	// of the gateway's environment (PATH, HOME, USER, LOGNAME, SHELL, TERM,
	// LANG, LC_*, TZ, TMPDIR, XDG_* directories) plus Env.
	Env map[string]string `koanf:"env"`
	// InheritEnv passes the gateway's whole environment to the program
	// (stdio only), except ISOGATE_* variables. Default false.
	InheritEnv bool `koanf:"inherit_env"`
	// Cwd is the program's working directory (stdio only). A relative
	// path is taken relative to the configuration file's directory.
	Cwd string `koanf:"cwd"`

	// URL is the endpoint of an HTTP backend. ${VAR} is expanded.
	URL string `koanf:"url"`
	// Headers are sent with every HTTP request to the backend. ${VAR} is
	// expanded in values.
	Headers map[string]string `koanf:"headers"`
	// Auth is how the gateway obtains an OAuth access token for the
	// backend (HTTP only); see BackendAuth. Headers still apply; Auth
	// alone sets Authorization.
	Auth BackendAuth `koanf:"auth"`

	// Timeout bounds each tool call. Default 30s.
	Timeout time.Duration `koanf:"timeout"`
	// MaxConcurrentCalls bounds calls in flight to this backend. Default 8.
	MaxConcurrentCalls int `koanf:"max_concurrent_calls"`
	// MaxConcurrentCallsPerPrincipal bounds the calls in flight to this
	// backend on behalf of one authenticated principal (server.auth), so
	// that one principal's load leaves slots to the others; a principal at
	// its share waits behind the others. 0: no bound beyond
	// MaxConcurrentCalls. Default 4.
	MaxConcurrentCallsPerPrincipal int `koanf:"max_concurrent_calls_per_principal"`
	// Tags are free-form labels for selecting backends.
	Tags []string `koanf:"tags"`
	// Description says what this backend is for, in a line: search_tools
	// shows it under results from the backend, so that an agent tells
	// twin servers apart ("the team's source tree" and "the photo
	// archive", both filesystem servers). At most MaxBackendDescription
	// bytes. Default none.
	Description string `koanf:"description"`
	// Priority settles a name two backends share (server.tool_names bare
	// and a resource URI): the higher priority keeps it; between equal
	// priorities the first in configuration order (backend names sorted)
	// does. Default 0.
	Priority int `koanf:"priority"`
	// Sessions says when a client gets a backend session of its own
	// instead of the one every client shares: SessionsAuto (the default),
	// SessionsShared or SessionsPerClient.
	Sessions Sessions `koanf:"sessions"`
	// MaxSessions bounds the clients' own sessions open on this backend
	// at once (each is a process of its own for a stdio backend). Default
	// 16.
	MaxSessions int `koanf:"max_sessions"`
	// Disabled backends are configured but not started.
	Disabled bool `koanf:"disabled"`
	// Tools says which of the backend's tools programs may reach.
	Tools ToolPolicy `koanf:"tools"`
	// Prompts says which of the backend's prompts clients see and get.
	// Empty lists follow Tools: a backend whose tools are all denied (a
	// tools.deny of "*") offers no prompts.
	Prompts ItemPolicy `koanf:"prompts"`
	// Resources says which of the backend's resources and resource
	// templates clients see and read, by glob over URIs and URI templates.
	// Empty lists follow Tools as Prompts do. A catch-all template (one
	// with no scheme before its first expression, such as "{+uri}") is
	// offered only when Allow names it.
	Resources ItemPolicy `koanf:"resources"`
}

// ItemPolicy selects a backend's prompts (by name) or resources (by URI or
// URI template) by glob, compared as ToolPolicy compares tool names.
type ItemPolicy struct {
	// Allow lists what is offered; empty means all (unless the backend's
	// tools are all denied).
	Allow []string `koanf:"allow"`
	// Deny lists what is never offered nor forwarded; deny wins.
	Deny []string `koanf:"deny"`
}

// ToolPolicy selects a backend's tools by glob over their original names
// ('*' any run of characters, '?' one character; matched case-insensitively
// on Unicode-normalised names).
type ToolPolicy struct {
	// Allow lists the tools offered; empty means all.
	Allow []string `koanf:"allow"`
	// Deny lists tools that are never offered nor callable; deny wins over
	// allow and approve.
	Deny []string `koanf:"deny"`
	// Approve lists tools whose every call needs a person's yes, asked
	// through MCP elicitation; they are offered even when Allow does not
	// list them.
	Approve []string `koanf:"approve"`
}

// Remote reports whether the backend is reached over HTTP rather than run as
// a local process.
func (b Backend) Remote() bool {
	return b.Transport == TransportStreamableHTTP || b.Transport == TransportSSE
}

// HasTag reports whether tag is one of the backend's tags.
func (b Backend) HasTag(tag string) bool {
	return slices.Contains(b.Tags, tag)
}

// Environ returns base (in os.Environ form, "KEY=value") with the backend's
// Env applied on top: entries of base whose key is in Env are replaced, and
// Env's remaining entries are appended in key order. base is not modified.
func (b Backend) Environ(base []string) []string {
	out := make([]string, 0, len(base)+len(b.Env))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := b.Env[k]; !ok {
			out = append(out, kv)
		}
	}
	for _, k := range sortedKeys(b.Env) {
		out = append(out, k+"="+b.Env[k])
	}
	return out
}

// Isolation is how sandboxed code is isolated from the gateway.
type Isolation string

// The isolation modes of the sandbox.
const (
	// IsolationProcess runs code in a separate process.
	IsolationProcess Isolation = "process"
	// IsolationThread runs code in the gateway process.
	IsolationThread Isolation = "thread"
)

// SandboxConfig configures the code sandbox.
type SandboxConfig struct {
	// Isolation is "process" (default) or "thread".
	Isolation Isolation `koanf:"isolation"`
	// Confinement is how hard process-mode sandbox workers are confined
	// (namespaces, Landlock, seccomp, no capabilities, rlimits): "strict"
	// refuses to start when a layer is unavailable, "best-effort" (default)
	// uses what the host has, "off" applies none.
	Confinement string `koanf:"confinement"`
	// TrustedCode declares that every program comes from a trusted source.
	// Thread isolation requires it: in the gateway's own process, memory
	// that V8 allocates outside its JavaScript heap (ICU/Intl objects) and
	// builtins that ignore termination for seconds are not bounded, so one
	// hostile script could abort or balloon the gateway. Default false.
	TrustedCode bool `koanf:"trusted_code"`
	// Timeout bounds one run of code. Default 30s.
	Timeout time.Duration `koanf:"timeout"`
	// MaxHeapMB bounds the heap of one run, in MiB (8 to 4096). Default 50.
	MaxHeapMB int `koanf:"max_heap_mb"`
	// MaxConcurrent bounds runs in flight. Default 8.
	MaxConcurrent int `koanf:"max_concurrent"`
	// MaxConcurrentPerPrincipal bounds the runs in flight of one
	// authenticated principal (server.auth), so that one principal's load
	// leaves slots to the others; as many again may wait, further runs
	// fail with PRINCIPAL_BUSY. 0: no bound beyond MaxConcurrent. Default 4.
	MaxConcurrentPerPrincipal int `koanf:"max_concurrent_per_principal"`
	// SpareWorkers is how many started, never-used sandbox worker
	// processes process isolation keeps ready, once workers have had to be
	// retired for another principal, so that a principal's first run does
	// not wait for a worker to start (0 to 64). Default DefaultSpareWorkers.
	SpareWorkers int `koanf:"spare_workers"`
	// IdleWorkersMB is the memory, in MiB, that process isolation's idle
	// workers may hold: a worker whose slot goes to another principal
	// while it is idle stays alive for its own principal's next run, the
	// least recently parked ended beyond the budget (0 to 65536; 0 ends
	// them as before). Default DefaultIdleWorkersMB.
	IdleWorkersMB int `koanf:"idle_workers_mb"`
	// MaxOutputSize bounds the output of one run, in bytes. Default 200000.
	MaxOutputSize int `koanf:"max_output_size"`
	// MaxToolCalls bounds the backend calls of one run; the next call
	// fails with TOOL_BUDGET. Default 1000.
	MaxToolCalls int `koanf:"max_tool_calls"`
	// BackendWait bounds how long a tool call waits for a backend that is
	// still starting or reconnecting (a down backend fails at once).
	// Default 10s.
	BackendWait time.Duration `koanf:"backend_wait"`
	// Typecheck is whether call_tool_chain programs are type-checked
	// against the tool declarations before they run: "off", "warn" (run
	// them with the compiler's findings attached) or "strict" (refuse a
	// program with a certain mistake in a tool call, TYPECHECK_FAILED,
	// before any call). Default "off": a check costs milliseconds of CPU
	// on one checker thread, against a fraction of a millisecond for a
	// trivial run (docs/tools.md).
	Typecheck string `koanf:"typecheck"`
	// TypecheckTimeout bounds one check (waiting for the checker
	// included); past it the program runs unchecked and says so. Default
	// 2s.
	TypecheckTimeout time.Duration `koanf:"typecheck_timeout"`
	// Durable says which code-mode runs are journalled so that they resume
	// by replay on any replica sharing the store: "off", "paused" (default:
	// every run is journalled in memory, written to the store when it
	// pauses for an approval) or "all" (written through after every call).
	Durable string `koanf:"durable"`
	// DurableMaxCalls bounds the calls of one run's journal; past it the
	// run is not durable. Default 1000.
	DurableMaxCalls int `koanf:"durable_max_calls"`
	// DurableMaxBytes bounds one run's journal, in bytes; past it the run
	// is not durable. Default 4 MiB.
	DurableMaxBytes int `koanf:"durable_max_bytes"`
	// PlanApproval asks a person once per checked program (typecheck warn
	// or strict) about all the tools under approval it may call, each with
	// whether it is called in a loop, instead of once per call: approved,
	// the run's calls to those tools ask no more. Default false.
	PlanApproval bool `koanf:"plan_approval"`
	// Output configures how results are shaped for the client.
	Output OutputConfig `koanf:"output"`
}

// OutputConfig configures how sandbox results are shaped for the client.
type OutputConfig struct {
	// IntentFilter enables filtering large results by the caller's stated
	// intent. Default true.
	IntentFilter bool `koanf:"intent_filter"`
	// IntentMinBytes is the result size from which the intent filter
	// applies. Default 5000.
	IntentMinBytes int `koanf:"intent_min_bytes"`
	// AutoChunk enables splitting large results into chunks. Default true.
	AutoChunk bool `koanf:"auto_chunk"`
	// ChunkThreshold is the result size, in bytes, from which results are
	// chunked. Default 10240.
	ChunkThreshold int `koanf:"chunk_threshold"`
	// Truncate enables truncating results that are still too large.
	// Default true.
	Truncate bool `koanf:"truncate"`
	// Footer enables a footer telling how a result was shaped. Default true.
	Footer bool `koanf:"footer"`
	// ResultTTL is how long full results stay retrievable. Default 15m.
	ResultTTL time.Duration `koanf:"result_ttl"`
	// ResultStoreBytes bounds the total bytes kept for retrievable results.
	// Default 64 MiB.
	ResultStoreBytes int64 `koanf:"result_store_bytes"`
}

// RunCodeConfig configures the run_code tool.
type RunCodeConfig struct {
	// Enabled offers the run_code tool. Default false: its description
	// and schemas would more than double the meta-tool list every client
	// loads into its context, for a job call_tool_chain does not need.
	Enabled bool `koanf:"enabled"`
	// Fetch configures api.fetch inside the sandbox.
	Fetch FetchConfig `koanf:"fetch"`
	// Weather configures the weather API inside the sandbox.
	Weather WeatherConfig `koanf:"weather"`
	// State offers state.get/set/delete/list in run_code: the caller's
	// own key-value store, as in call_tool_chain programs (bounded by
	// state.*). Default false: run_code stays a read-only computation.
	State bool `koanf:"state"`
}

// FetchConfig configures api.fetch inside the sandbox.
type FetchConfig struct {
	// AllowHosts are the host names code may fetch from, such as
	// "api.github.com" or "*.example.com" (lower-cased when loaded). Empty
	// means api.fetch is not offered.
	AllowHosts []string `koanf:"allow_hosts"`
	// AllowPrivate allows private, loopback and link-local targets.
	AllowPrivate bool `koanf:"allow_private"`
}

// WeatherConfig configures the weather API inside the sandbox.
type WeatherConfig struct {
	// Enabled offers the weather API. Default false.
	Enabled bool `koanf:"enabled"`
	// BaseURL is the Open-Meteo compatible endpoint. Default
	// "https://api.open-meteo.com".
	BaseURL string `koanf:"base_url"`
}

// Defaults that callers may want to refer to; see Default for all of them.
const (
	// DefaultBackendTimeout is the default of Backend.Timeout.
	DefaultBackendTimeout = 30 * time.Second
	// DefaultMaxConcurrentCalls is the default of Backend.MaxConcurrentCalls.
	DefaultMaxConcurrentCalls = 8
	// DefaultMaxConcurrentCallsPerPrincipal is the default of
	// Backend.MaxConcurrentCallsPerPrincipal.
	DefaultMaxConcurrentCallsPerPrincipal = 4
	// DefaultBackendMaxSessions is the default of Backend.MaxSessions.
	DefaultBackendMaxSessions = 16
	// DefaultSpareWorkers is the default of SandboxConfig.SpareWorkers.
	DefaultSpareWorkers = 2
	// DefaultIdleWorkersMB is the default of SandboxConfig.IdleWorkersMB:
	// room for about 120 principals' idle workers at ~8 MB of their own
	// each (bench/RESULTS.md, issue 44).
	DefaultIdleWorkersMB = 1024
	// MaxIdleWorkersMB is the largest SandboxConfig.IdleWorkersMB.
	MaxIdleWorkersMB = 65536
	// DefaultLeaseTTL is the default of StoreConfig.LeaseTTL.
	DefaultLeaseTTL = 6 * time.Second
	// DefaultStoreMaxBytes is the default of StoreConfig.MaxBytes.
	DefaultStoreMaxBytes = 64 << 20
	// DefaultStateMaxKeys is the default of StateConfig.MaxKeys.
	DefaultStateMaxKeys = 1000
	// DefaultStateMaxBytes is the default of StateConfig.MaxBytes.
	DefaultStateMaxBytes = 1 << 20
	// MaxSpareWorkers is the largest SandboxConfig.SpareWorkers.
	MaxSpareWorkers = 64
	// DefaultMaxToolCalls is the default of SandboxConfig.MaxToolCalls.
	DefaultMaxToolCalls = 1000
	// DefaultSessionIdleTimeout is the default of ServerConfig.SessionIdleTimeout.
	DefaultSessionIdleTimeout = 30 * time.Minute
	// DefaultMaxSessions is the default of ServerConfig.MaxSessions.
	DefaultMaxSessions = 10000
	// MaxConcurrentLimit is the largest SandboxConfig.MaxConcurrent: each
	// concurrent run holds a V8 isolate (and, in process isolation, a
	// worker process).
	MaxConcurrentLimit = 256
	// MaxPriority bounds Backend.Priority (from -MaxPriority to MaxPriority).
	MaxPriority = 1_000_000
	// MinAuthTokenLength is the length under which server.auth_token is
	// warned about at every start and reload: 16 characters of a random
	// hex token are 64 bits, 16 of base64 96; a shorter one can be guessed
	// by a client that tries.
	MinAuthTokenLength = 16
	// DefaultShutdownGrace is the default of ServerConfig.ShutdownGrace.
	DefaultShutdownGrace = 5 * time.Second
	// DefaultWeatherBaseURL is the default of WeatherConfig.BaseURL.
	DefaultWeatherBaseURL = "https://api.open-meteo.com"
)

// Default returns the configuration used when nothing is configured: no
// backends and every setting at its default. CacheDir is derived from the
// process environment.
func Default() *Config {
	return defaults(os.LookupEnv)
}

func defaults(lookup func(string) (string, bool)) *Config {
	return &Config{
		Server: ServerConfig{
			LogLevel:  "info",
			LogFormat: "text",
			CacheDir:  defaultCacheDir(lookup),
			Expose:    ExposeMeta,
			ToolNames: ToolNamesAuto,

			SessionIdleTimeout: DefaultSessionIdleTimeout,
			MaxSessions:        DefaultMaxSessions,
			ShutdownGrace:      DefaultShutdownGrace,
			Tasks:              TasksConfig{MaxTTL: 15 * time.Minute, MaxPerPrincipal: 32},
			Auth: AuthConfig{ClockSkew: DefaultAuthClockSkew, JWKSMinRefresh: DefaultJWKSMinRefresh, GroupsClaim: "groups",
				IntrospectionCacheTTL: DefaultIntrospectionCacheTTL, IntrospectionRate: DefaultIntrospectionRate},
			Console: ConsoleConfig{SessionTTL: DefaultConsoleSessionTTL},
		},
		Store:    StoreConfig{LeaseTTL: DefaultLeaseTTL, MaxBytes: DefaultStoreMaxBytes, DataDir: defaultDataDir(lookup)},
		State:    StateConfig{MaxKeys: DefaultStateMaxKeys, MaxBytes: DefaultStateMaxBytes},
		Search:   SearchConfig{Embeddings: EmbeddingsConfig{Timeout: DefaultEmbeddingsTimeout, BatchSize: DefaultEmbeddingsBatchSize}},
		Backends: map[string]Backend{},
		Sandbox: SandboxConfig{
			Isolation:     IsolationProcess,
			Confinement:   "best-effort",
			Timeout:       30 * time.Second,
			MaxHeapMB:     50,
			MaxConcurrent: 8,
			SpareWorkers:  DefaultSpareWorkers,
			IdleWorkersMB: DefaultIdleWorkersMB,
			MaxOutputSize: 200000,

			MaxConcurrentPerPrincipal: 4,
			MaxToolCalls:              DefaultMaxToolCalls,
			BackendWait:               10 * time.Second,
			Typecheck:                 "off",
			TypecheckTimeout:          2 * time.Second,
			Durable:                   "paused",
			DurableMaxCalls:           1000,
			DurableMaxBytes:           4 << 20,
			Output: OutputConfig{
				IntentFilter:     true,
				IntentMinBytes:   5000,
				AutoChunk:        true,
				ChunkThreshold:   10240,
				Truncate:         true,
				Footer:           true,
				ResultTTL:        15 * time.Minute,
				ResultStoreBytes: 64 << 20,
			},
		},
		RunCode: RunCodeConfig{
			Weather: WeatherConfig{BaseURL: DefaultWeatherBaseURL},
		},
	}
}

// defaultBackend is the starting point of every configured backend.
func defaultBackend() Backend {
	return Backend{
		Timeout:            DefaultBackendTimeout,
		MaxConcurrentCalls: DefaultMaxConcurrentCalls,
		Sessions:           SessionsAuto,

		MaxConcurrentCallsPerPrincipal: DefaultMaxConcurrentCallsPerPrincipal,
		MaxSessions:                    DefaultBackendMaxSessions,
	}
}

// BackendNames returns the names of all backends, disabled ones included,
// sorted.
func (c *Config) BackendNames() []string {
	return sortedKeys(c.Backends)
}

// EnabledBackends returns the backends that are not disabled, in
// configuration order (see Order).
func (c *Config) EnabledBackends() []Backend {
	var out []Backend
	for _, name := range ordered(c.Order, c.Backends) {
		if b := c.Backends[name]; !b.Disabled {
			out = append(out, b)
		}
	}
	return out
}

// DefaultPath returns the default configuration file,
// $XDG_CONFIG_HOME/isogate/isogate.yaml, falling back to
// ~/.config/isogate/isogate.yaml. It returns "" if neither XDG_CONFIG_HOME
// nor the home directory is known.
func DefaultPath() string {
	return defaultPath(os.LookupEnv)
}

func defaultPath(lookup func(string) (string, bool)) string {
	dir := xdgDir(lookup, "XDG_CONFIG_HOME", ".config")
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "isogate", "isogate.yaml")
}

func defaultCacheDir(lookup func(string) (string, bool)) string {
	dir := xdgDir(lookup, "XDG_CACHE_HOME", ".cache")
	if dir == "" {
		return filepath.Join(os.TempDir(), "isogate")
	}
	return filepath.Join(dir, "isogate")
}

func defaultDataDir(lookup func(string) (string, bool)) string {
	dir := xdgDir(lookup, "XDG_DATA_HOME", filepath.Join(".local", "share"))
	if dir == "" {
		return filepath.Join(os.TempDir(), "isogate-data")
	}
	return filepath.Join(dir, "isogate")
}

// xdgDir returns $xdgVar if it is an absolute path (as the XDG base
// directory spec requires), else <home>/fallback, else "".
func xdgDir(lookup func(string) (string, bool), xdgVar, fallback string) string {
	if v, ok := lookup(xdgVar); ok && filepath.IsAbs(v) {
		return v
	}
	for _, h := range []string{"HOME", "USERPROFILE"} {
		if home, ok := lookup(h); ok && home != "" {
			return filepath.Join(home, fallback)
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// MaxBackendDescription bounds backends.<name>.description, in bytes.
const MaxBackendDescription = 500
