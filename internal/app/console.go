package app

import (
	"context"
	"net/http"
	"os"
	"time"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/console"
	"github.com/isogate/isogate/internal/desk"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/replay"
	"github.com/isogate/isogate/internal/stats"
)

// consoleAdmins are who may use the console: server.console.admins, or
// server.auth.admins when that is empty.
func consoleAdmins(s config.ServerConfig) []string {
	if len(s.Console.Admins) > 0 {
		return s.Console.Admins
	}
	return s.Auth.Admins
}

// newConsole builds the operator's console over the composed gateway
// (server.console); the surface serves it at /console.
func (a *App) newConsole(cfg *config.Config, d *desk.Desk) *console.Console {
	replica, _ := os.Hostname()
	return console.New(console.Sources{
		Desk:     d,
		Backends: a.Backends.Status,
		Redact: func(name, line string) string {
			for _, s := range *a.specs.Load() {
				if s.Name == name {
					return backend.Redact(line, s.Backend)
				}
			}
			return line
		},
		Catalog:  a.Catalog,
		Policy:   a.Policy,
		Stats:    func() stats.Snapshot { return a.Observer.Stats().Snapshot() },
		Sandbox:  a.Sandbox,
		Sessions: func() int { return a.Surface.SessionCount() },
		Replay:   a.replayer(cfg),
	}, console.Options{
		Admins:     consoleAdmins(cfg.Server),
		Verify:     a.Surface.Verifier(),
		SessionTTL: cfg.Server.Console.SessionTTL,
		Version:    a.opts.Version,
		Replica:    replica,
		Logger:     a.logger,
	})
}

// replayGrace is how long past a replay's own timeout the console waits
// for it before cancelling it (the engine ends it at the timeout).
const replayGrace = 10 * time.Second

// replayer replays a run record for the console as `isogate replay` does:
// against the recorded tool responses, under the recorded limits (a record
// without limits under sandbox.timeout), in code mode's sandbox.
func (a *App) replayer(cfg *config.Config) console.ReplayFunc {
	return func(ctx context.Context, rec *pipeline.RunRecord) (*replay.Outcome, error) {
		var timeout time.Duration
		if rec.Limits == nil || rec.Limits.TimeoutMS <= 0 {
			timeout = cfg.Sandbox.Timeout // a record written before limits were
		}
		limits := replay.Limits(rec, timeout)
		ctx, cancel := context.WithTimeout(ctx, time.Duration(limits.TimeoutMS)*time.Millisecond+replayGrace)
		defer cancel()
		return replay.Run(ctx, rec, replay.Options{Runner: a.Runner, Timeout: timeout, Logger: a.logger})
	}
}

// lateHandler serves with the handler set once the surface exists (the
// console needs the surface's token check; the surface serves the
// console).
type lateHandler struct{ h *http.Handler }

func (l lateHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) { (*l.h).ServeHTTP(w, r) }

// consoleOrNil is h when the console is on (d set), else nil.
func consoleOrNil(d *desk.Desk, h http.Handler) http.Handler {
	if d == nil {
		return nil
	}
	return h
}
