package app

import (
	"log/slog"
	"path/filepath"
	"time"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/codemode"
	"github.com/isogate/isogate/internal/metrics"
	"github.com/isogate/isogate/internal/surface"
	"github.com/isogate/isogate/internal/typecheck"
	"github.com/isogate/isogate/internal/typecheck/checkworker"
	"github.com/isogate/isogate/v8sandbox/procpool"
)

// checkerOf returns the type checker of code mode's programs. In process
// isolation with sandbox.typecheck on, the TypeScript compiler parses the
// attacker's program text in a worker process of its own, confined like
// the sandbox workers (checkworker.Checker, returned too so that the app
// closes it); otherwise the process's in-process checker, loaded once per
// process.
//
// Either keeps V8's code cache of the compiler in server.cache_dir's
// typecheck directory, so that a start after the first loads the compiler
// from it.
func checkerOf(cfg *config.Config, logger *slog.Logger) (typecheck.Service, *checkworker.Checker) {
	s := cfg.Sandbox
	cacheDir := ""
	if cfg.Server.CacheDir != "" {
		cacheDir = filepath.Join(cfg.Server.CacheDir, "typecheck")
	}
	if s.Typecheck == "" || s.Typecheck == codemode.TypecheckOff || s.Isolation == config.IsolationThread {
		typecheck.SetSharedCacheDir(cacheDir)
		return typecheck.Shared(), nil
	}
	c := checkworker.NewChecker(checkworker.CheckerOptions{
		Confinement: procpool.ConfinementMode(s.Confinement),
		Logger:      logger,
		// Callers bound a check with sandbox.typecheck_timeout.
		Timeout:  typecheck.SharedTimeout,
		CacheDir: cacheDir,
	})
	return c, c
}

// typecheckOn reports whether code mode's programs are checked.
func (a *App) typecheckOn() bool { return a.tcMode != "" && a.tcMode != codemode.TypecheckOff }

// typecheckReport is the type checker's state and code mode's checks, for
// /readyz, isogate doctor and isogate://stats; nil when sandbox.typecheck
// is off.
func (a *App) typecheckReport() *surface.TypecheckReport {
	if !a.typecheckOn() || a.Typecheck == nil {
		return nil
	}
	return &surface.TypecheckReport{Mode: a.tcMode, Status: a.Typecheck.Status(), Checks: a.checks.Checks()}
}

// checkerMetrics is the type checker's state for a scrape (nil when off).
func (a *App) checkerMetrics() *metrics.Checker {
	if !a.typecheckOn() || a.Typecheck == nil {
		return nil
	}
	st := a.Typecheck.Status()
	cc := st.CodeCache
	m := &metrics.Checker{State: st.State, States: typecheck.States, Restarts: st.Restarts, HeapUsedBytes: st.HeapUsedBytes,
		CodeCache:      map[string]int64{"hit": cc.Hits, "miss": cc.Misses, "rejected": cc.Rejected, "invalid": cc.Invalid, "written": cc.Written},
		CodeCacheBytes: cc.SizeBytes}
	if w := st.Worker; w != nil {
		m.Worker, m.RSSBytes, m.Uptime = true, w.RSSBytes, time.Duration(w.UptimeSeconds*float64(time.Second))
	}
	return m
}
