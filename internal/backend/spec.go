package backend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/backendauth"
	"github.com/isogate/isogate/internal/fairshare"
)

// TransportCustom is the transport of a backend the program connects
// itself through [Spec.Dial], such as an in-process server. It is the one
// transport beside config's (config.TransportStdio,
// config.TransportStreamableHTTP, config.TransportSSE) and cannot be
// configured in a file.
const TransportCustom config.Transport = "custom"

// Defaults applied by [NewManager] to zero-valued fields.
const (
	DefaultTimeout            = 30 * time.Second
	DefaultMaxConcurrentCalls = 8
	DefaultHealthInterval     = 30 * time.Second
	DefaultHealthTimeout      = 10 * time.Second
	DefaultRestartBackoffBase = 500 * time.Millisecond
	DefaultRestartBackoffMax  = 30 * time.Second
	DefaultRestartBudget      = 5
	DefaultRestartWindow      = 5 * time.Minute
	DefaultStartWait          = 10 * time.Second
	DefaultRetryCooldown      = time.Minute
	DefaultConnectTimeout     = 60 * time.Second
	DefaultKillAfter          = 2 * time.Second
)

// A Spec describes one backend MCP server: its configuration (a
// backends.<name> entry of a configuration file, or built in code) plus
// what a file cannot say.
//
// The manager runs Transport with Command, Args, Env, InheritEnv and Cwd
// (stdio: the child gets a minimal base of the gateway's environment plus
// Env, or with InheritEnv all of it except ISOGATE_* variables) or URL and
// Headers (streamable-http, sse), or Dial ([TransportCustom]). A zero
// Timeout selects DefaultTimeout, a zero MaxConcurrentCalls
// DefaultMaxConcurrentCalls; Tags are reported in [Status]. Disabled and
// Tools are the caller's concern (it leaves disabled backends out and
// applies the tool policy): the manager ignores them, and a change to them
// alone does not restart a backend in [Manager.Update].
type Spec struct {
	// Backend is the backend's configuration, the one description shared
	// with configuration files (see config.Backend for its fields).
	config.Backend

	// Dial creates the transport of a [TransportCustom] backend. It is
	// called for every (re)connection. Tests use it with
	// mcp.NewInMemoryTransports to reach in-process servers.
	Dial func(ctx context.Context) (mcp.Transport, error)

	// ProtocolVersion, if set, is the MCP version the gateway asks the
	// backend for instead of the newest it speaks (tests pin in-process
	// go-sdk servers to 2025-11-25 with it, the version whose servers send
	// sampling, elicitation and roots requests during a call).
	ProtocolVersion string
}

// Validate reports whether the spec is usable. A spec of one of config's
// transports is held to config's rules ([config.Backend.Validate], what a
// configuration file is checked against); a [TransportCustom] spec needs a
// Name and a Dial function.
func (s Spec) Validate() error {
	switch s.Transport {
	case TransportCustom:
		if s.Name == "" {
			return errors.New("backend name is empty")
		}
		if s.Dial == nil {
			return fmt.Errorf("backend %q: custom transport requires a Dial function", s.Name)
		}
		return nil
	case "":
		// config derives it when loading; a spec must name it.
		return fmt.Errorf("backend %q: transport is empty", s.Name)
	}
	var verr *config.ValidationError
	if err := s.Backend.Validate(); errors.As(err, &verr) {
		problems := make([]string, len(verr.Problems))
		for i, p := range verr.Problems {
			problems[i] = p.String()
		}
		return errors.New(strings.Join(problems, "; "))
	} else if err != nil {
		return err
	}
	return nil
}

// Options configures a [Manager]. The zero value of every field selects a
// default.
type Options struct {
	// Specs lists the backends to manage.
	Specs []Spec
	// CacheDir is the directory of the tool cache (one file per backend in
	// its [CacheSubdir], keyed by the backend's effective spec), used when
	// ToolCache is nil. If both are empty, tool lists are not cached.
	CacheDir string
	// ToolCache, when set, holds the tool cache instead of CacheDir (for
	// example in Redis, shared by replicas).
	ToolCache ToolCache
	// LoginTokens, when set, holds the logins of authorization_code
	// backends instead of their token files (in Redis, shared by
	// replicas).
	LoginTokens backendauth.TokenStore
	// Logger receives the manager's logs; every record about a backend has
	// a "backend" attribute. If nil, slog.Default() is used.
	Logger *slog.Logger

	// HealthInterval is the period of health pings (DefaultHealthInterval).
	HealthInterval time.Duration
	// HealthTimeout bounds a single health ping (DefaultHealthTimeout,
	// capped at HealthInterval).
	HealthTimeout time.Duration
	// ConnectTimeout bounds one connection attempt: start/dial, MCP
	// initialisation and the initial tools/list (DefaultConnectTimeout).
	ConnectTimeout time.Duration

	// RestartBackoffBase and RestartBackoffMax bound the exponential delay
	// between reconnection attempts (DefaultRestartBackoffBase,
	// DefaultRestartBackoffMax).
	RestartBackoffBase time.Duration
	RestartBackoffMax  time.Duration
	// RestartBudget is the number of restarts allowed per RestartWindow
	// (DefaultRestartBudget per DefaultRestartWindow). When it is exhausted
	// the backend is down: it is retried once per RetryCooldown, on demand
	// (a call to it, at most once per RestartBackoffBase) and by
	// [Manager.Restart]. A negative budget means unlimited.
	RestartBudget int
	RestartWindow time.Duration
	// RetryCooldown is the wait before the next attempt once the restart
	// budget is exhausted (DefaultRetryCooldown).
	RetryCooldown time.Duration

	// StartWait is how long a call to a backend that is starting or
	// restarting waits for it to become healthy (DefaultStartWait; the
	// gateway sets it from sandbox.backend_wait).
	StartWait time.Duration
	// KillAfter is how long a stdio backend is given to exit after
	// SIGTERM before it is SIGKILLed (DefaultKillAfter).
	KillAfter time.Duration

	// StderrLines is the number of stderr lines kept per stdio backend
	// (DefaultStderrLines).
	StderrLines int

	// ClientInfo identifies the gateway to backends. If nil,
	// {Name: "isogate", Version: "dev"} is used.
	ClientInfo *mcp.Implementation

	// OnToolsChanged, if set, is called with a backend's complete tool list
	// whenever it becomes known or changes: when cached tools are loaded at
	// Start, after every (re)connection, and after the backend sends
	// notifications/tools/list_changed. After a (re)connection it runs
	// before the backend is reported healthy, so once WaitHealthy returns
	// the callback has seen the live list. Calls for one backend are
	// serialised and always reflect the latest list; calls for different
	// backends may run concurrently. The callback must not block for long,
	// must not call the backend it is told about (that call would wait for
	// the connection the callback is holding up), and must not modify the
	// tools.
	OnToolsChanged func(backend string, tools []*mcp.Tool)
	// OnProgress, if set, receives progress notifications sent by backends
	// (for calls that carried a progress token in their _meta).
	OnProgress func(backend string, params *mcp.ProgressNotificationParams)
	// OnLog, if set, receives a backend's notifications/message (logging).
	// When it is set, the manager asks every backend that announces the
	// logging capability for all its messages (logging/setLevel
	// [BackendLogLevel] after each connection): the receiver filters. Like
	// every notification handler it runs on the connection's read loop:
	// it must not block for long.
	OnLog func(backend string, params *mcp.LoggingMessageParams)
	// OnListChanged, if set, is called when a backend sends
	// notifications/prompts/list_changed or notifications/resources/list_changed.
	// It must not block.
	OnListChanged func(backend string)
	// OnResourceUpdated, if set, receives a backend's
	// notifications/resources/updated (for resources the gateway subscribed to).
	OnResourceUpdated func(backend string, params *mcp.ResourceUpdatedNotificationParams)
	// ClientRequests, if set, answers a backend's sampling/createMessage,
	// elicitation/create and roots/list (see clientreq/clientrequests.go): backends
	// are then told the gateway supports them. Only backends whose session
	// is on 2025-11-25 or older send them (a 2026-07-28 backend returns
	// input requests in its results instead, which passthrough hands to the
	// client as they are).
	ClientRequests ClientRequests
	// OnShare, if set, is told each time a principal's call to a backend
	// finds the principal at its share of the backend's call slots
	// (max_concurrent_calls_per_principal). It must not block.
	OnShare func(backend string, outcome fairshare.Outcome)
}

// withDefaults returns a copy of o with zero fields replaced by defaults.
func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.HealthInterval, DefaultHealthInterval)
	def(&o.HealthTimeout, DefaultHealthTimeout)
	o.HealthTimeout = min(o.HealthTimeout, o.HealthInterval)
	def(&o.ConnectTimeout, DefaultConnectTimeout)
	def(&o.RestartBackoffBase, DefaultRestartBackoffBase)
	def(&o.RestartBackoffMax, DefaultRestartBackoffMax)
	o.RestartBackoffMax = max(o.RestartBackoffMax, o.RestartBackoffBase)
	if o.RestartBudget == 0 {
		o.RestartBudget = DefaultRestartBudget
	}
	def(&o.RestartWindow, DefaultRestartWindow)
	def(&o.RetryCooldown, DefaultRetryCooldown)
	def(&o.StartWait, DefaultStartWait)
	def(&o.KillAfter, DefaultKillAfter)
	if o.StderrLines <= 0 {
		o.StderrLines = DefaultStderrLines
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.ClientInfo == nil {
		o.ClientInfo = &mcp.Implementation{Name: "isogate", Version: "dev"}
	}
	return o
}

// State is the lifecycle state of a backend.
//
//	Starting → Healthy ↔ Unhealthy → Stopped
//
// A backend is Starting until its first connection succeeds or fails,
// Healthy while connected and answering pings, Unhealthy while crashed,
// failing or reconnecting (or permanently, once its restart budget is
// exhausted), and Stopped after [Manager.Close].
type State int

// Backend states.
const (
	StateStarting State = iota
	StateHealthy
	StateUnhealthy
	StateStopped
)

// String returns "starting", "healthy", "unhealthy" or "stopped".
func (s State) String() string {
	switch s {
	case StateStarting:
		return "starting"
	case StateHealthy:
		return "healthy"
	case StateUnhealthy:
		return "unhealthy"
	case StateStopped:
		return "stopped"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// MarshalText implements encoding.TextMarshaler, so states appear by name
// in JSON status output.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Status is a point-in-time snapshot of one backend, see [Manager.Status].
type Status struct {
	Name      string   `json:"name"`
	Transport string   `json:"transport"`
	Tags      []string `json:"tags,omitempty"`
	State     State    `json:"state"`
	// ToolCount is the number of known tools; ToolsCached reports that they
	// come from the on-disk cache rather than from the live backend.
	ToolCount   int  `json:"tool_count"`
	ToolsCached bool `json:"tools_cached"`
	// LastError describes the most recent failure ("" if none since the
	// last successful connection).
	LastError string `json:"last_error,omitempty"`
	// NextRetry is when the supervisor will next try to connect by itself:
	// the end of the backoff, or of the cool-down once the restart budget
	// is exhausted (a call may trigger an attempt earlier). Zero while
	// connected or connecting.
	NextRetry time.Time `json:"next_retry,omitzero"`
	// Restarts counts connection attempts after the first one.
	Restarts int `json:"restarts"`
	// PID is the process id of a running stdio backend, otherwise 0.
	PID int `json:"pid,omitempty"`
	// Stderr holds the last stderr lines of a stdio backend, oldest first.
	Stderr []string `json:"stderr,omitempty"`
	// ConnectedAt is when the current connection was established (zero if
	// not connected).
	ConnectedAt time.Time `json:"connected_at,omitzero"`
	// Calls counts tool calls routed to the backend; Errors counts those
	// that returned an error (tool results with IsError set are not
	// counted: they are successful protocol exchanges).
	Calls  int64 `json:"calls"`
	Errors int64 `json:"errors"`
	// InFlight is the number of calls holding a concurrency slot; Queued is
	// the number waiting for one.
	InFlight int `json:"in_flight"`
	Queued   int `json:"queued"`
	// ClientSessions is the number of clients' own sessions open (or
	// opening) on the backend besides the shared one ([Spec.Sessions]).
	ClientSessions int `json:"client_sessions"`
}

// InMemory returns the spec of a "custom" backend served by an in-process
// go-sdk server, connected over in-memory transports on every (re)connection.
func InMemory(name string, server *mcp.Server) Spec {
	return Spec{Backend: config.Backend{Name: name, Transport: TransportCustom}, Dial: func(ctx context.Context) (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := server.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
}

// toolCache is where tool lists are cached, or nil for nowhere.
func (o *Options) toolCache() ToolCache {
	if o.ToolCache != nil {
		return o.ToolCache
	}
	if o.CacheDir != "" {
		return DirCache{Dir: o.CacheDir}
	}
	return nil
}
