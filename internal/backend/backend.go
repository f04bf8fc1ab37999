package backend

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/backendauth"
	"github.com/isogate/isogate/internal/fairshare"
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
	invalid     error                   // non-nil if the spec failed validation
	ring        *ringBuffer             // stderr of stdio backends, nil otherwise
	sem         *fairshare.Slots        // the call slots, shared fairly between principals
	auth        *backendauth.Authorizer // backends.<name>.auth, nil: none

	refresh    chan struct{} // tools/list_changed received (coalescing)
	kick       chan struct{} // a caller saw the connection break
	restartReq chan struct{} // Manager.Restart
	retry      chan struct{} // a call asked for an attempt now (on demand)
	done       chan struct{} // closed when run returns

	calls, errs atomic.Int64

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
	taskSupport    map[string]string // tool → its execution.taskSupport, when it has one (tasks.go)
	restarts       int
	restartLog     []time.Time // restart times within the window
	givenUp        bool        // restart budget exhausted (or invalid): only cool-down, on-demand or manual retries
	attempting     bool        // a connection attempt runs or was requested on demand
	connectFailed  bool        // the last connection attempt failed
	lastAttempt    time.Time   // when the last failed attempt ended
	nextRetry      time.Time   // when the supervisor attempts again by itself (zero: not waiting)
	changed        chan struct{}
	own            map[string]*ownSession // clients' own sessions, by caller key (own.go)
	life           context.Context        // the supervisor's: ends with the backend
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

	notices notices // progress and log notifications read and handled

	// tasks carries the gateway's own task requests: on the connection
	// (taskconn.go) or, for streamable HTTP, beside it (taskhttp.go).
	tasks taskChannel

	// owner is the key of the client whose own session this is (own.go);
	// "" for the shared, supervised session.
	owner string

	// callers counts the calls in flight on the connection by Caller
	// (attribution.go).
	callersMu sync.Mutex
	callers   map[*Caller]int
	calls     int // all calls in flight, with a Caller or not
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
	if spec.Sessions == "" {
		spec.Sessions = config.SessionsAuto
	}
	if spec.MaxSessions <= 0 {
		spec.MaxSessions = DefaultMaxSessions
	}
	spec.Args = slices.Clone(spec.Args)
	spec.Tags = slices.Clone(spec.Tags)
	b := &backend{
		m:           m,
		spec:        spec,
		opts:        &m.opts,
		log:         m.log.With(slog.String("backend", spec.Name)),
		fingerprint: fingerprint(&spec),
		refresh:     make(chan struct{}, 1),
		kick:        make(chan struct{}, 1),
		restartReq:  make(chan struct{}, 1),
		retry:       make(chan struct{}, 1),
		done:        make(chan struct{}),
		changed:     make(chan struct{}),
	}
	b.sem = fairshare.New(fairshare.Options{Capacity: spec.MaxConcurrentCalls, Share: spec.MaxConcurrentCallsPerPrincipal,
		OnShare: func(o fairshare.Outcome) {
			if m.opts.OnShare != nil {
				m.opts.OnShare(spec.Name, o)
			}
		}})
	if spec.Transport == config.TransportStdio {
		b.ring = newRingBuffer(m.opts.StderrLines)
	}
	err := spec.Validate()
	if err == nil && spec.Remote() {
		b.auth, err = backendauth.New(backendauth.Options{Backend: spec.Name, URL: spec.URL, Auth: spec.Auth,
			CacheDir: m.opts.CacheDir, Tokens: m.opts.LoginTokens, Logger: b.log})
	}
	if err != nil {
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

// drain empties a poke channel.
func drain(ch chan struct{}) {
	select {
	case <-ch:
	default:
	}
}

// status returns a snapshot of the backend.
func (b *backend) status() Status {
	inFlight, queued := b.sem.InUse()
	b.mu.Lock()
	defer b.mu.Unlock()
	s := Status{
		Name:        b.spec.Name,
		Transport:   string(b.spec.Transport),
		Tags:        slices.Clone(b.spec.Tags),
		State:       b.state,
		ToolCount:   len(b.tools),
		ToolsCached: b.toolsCached,
		LastError:   b.describeErrorLocked(),
		NextRetry:   b.nextRetry,
		Restarts:    b.restarts,
		Calls:       b.calls.Load(),
		Errors:      b.errs.Load(),
		InFlight:    inFlight,
		Queued:      queued,

		ClientSessions: len(b.own),
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
