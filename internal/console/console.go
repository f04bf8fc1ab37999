package console

import (
	"context"
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/desk"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/stats"
	"github.com/isogate/isogate/internal/surface"
)

//go:embed static templates
var files embed.FS

// Sources are what the console shows; each may be nil (that part is then
// empty).
type Sources struct {
	// Desk holds live runs, pending approvals, run records and audit events.
	Desk *desk.Desk
	// Backends reports every backend's status.
	Backends func() []backend.Status
	// Redact removes a backend's secrets from a line it printed (stderr).
	Redact func(backend, line string) string
	// Catalog is the tool catalogue, with the tools the configuration
	// denies (the Tools page lists those with the rule that denies them).
	Catalog *catalog.Catalog
	// Policy decides what a tool's calls need.
	Policy *pipeline.Policy
	// Stats are the gateway's counters (latency per tool).
	Stats func() stats.Snapshot
	// Sandbox reports how programs are isolated.
	Sandbox func() surface.SandboxReport
	// Sessions counts the open client sessions.
	Sessions func() int
	// Replay replays a run record (the run record page's replay action);
	// nil: the action is not offered.
	Replay ReplayFunc
}

// Options configure the console.
type Options struct {
	// Admins may use the console (principal names, group:<g>, scope:<s>).
	Admins []string
	// Verify checks a bearer token (as /mcp does); nil: authentication is
	// off, and only loopback clients are served.
	Verify func(ctx context.Context, token string, r *http.Request) (*authn.Principal, error)
	// SessionTTL is how long a sign-in lasts; 0: its default.
	SessionTTL time.Duration
	// Version and Replica are shown on the overview.
	Version, Replica string
	// Logger receives sign-ins and actions.
	Logger *slog.Logger
}

// Console serves /console.
type Console struct {
	src      Sources
	opts     Options
	logger   *slog.Logger
	sessions *sessions
	throttle *signinThrottle
	pages    *pages
	replays  *replays
	mux      *http.ServeMux
	started  time.Time
	metrics  history
	stop     chan struct{}
	stopOnce sync.Once
}

// New returns the console over src.
func New(src Sources, opts Options) *Console {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = config.Default().Server.Console.SessionTTL
	}
	c := &Console{src: src, opts: opts, logger: opts.Logger, sessions: newSessions(opts.SessionTTL),
		throttle: newSigninThrottle(nil),
		pages:    parsePages(), replays: newReplays(), started: time.Now()}
	static, _ := fs.Sub(files, "static")
	m := http.NewServeMux()
	m.Handle("GET /console/static/", http.StripPrefix("/console/static/", http.FileServerFS(static)))
	m.HandleFunc("GET /console/login", c.loginPage)
	m.HandleFunc("POST /console/login", c.login)
	m.Handle("POST /console/logout", c.guard(c.logout))
	m.Handle("GET /console", c.guard(c.redirectHome))
	m.Handle("GET /console/{$}", c.guard(c.redirectHome))
	for _, p := range pageNames {
		m.Handle("GET /console/"+p, c.guard(c.page(p)))
	}
	m.Handle("GET /console/record", c.guard(c.page("record")))
	m.Handle("GET /console/events", c.guard(c.events))
	m.Handle("POST /console/runs/cancel", c.guard(c.cancelRun))
	m.Handle("POST /console/approvals/answer", c.guard(c.answerApproval))
	m.Handle("POST /console/runs/replay", c.guard(c.replayRun))
	c.mux = m
	c.metrics.add(c.sample()) // the first point's start
	c.stop = make(chan struct{})
	go c.sampleMetrics(c.stop)
	return c
}

// Close stops the console's metrics sampling.
func (c *Console) Close() error {
	c.stopOnce.Do(func() { close(c.stop) })
	return nil
}

// ServeHTTP implements http.Handler: every answer carries the security
// headers.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin") // not no-referrer: a form POST would then send "Origin: null"
	h.Set("Cache-Control", "no-store")
	c.mux.ServeHTTP(w, r)
}

func (c *Console) redirectHome(w http.ResponseWriter, r *http.Request, _ *visitor) {
	http.Redirect(w, r, "/console/overview", http.StatusSeeOther)
}
