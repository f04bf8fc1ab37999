package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/spf13/pflag"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
)

// watchReloads reloads the configuration on SIGHUP and, with
// server.watch_config, when the configuration file changes, until ctx ends.
// Triggers that arrive during a reload are folded into one more reload.
func watchReloads(ctx context.Context, fs *pflag.FlagSet, g *app.App, cfg *config.Config, logger *slog.Logger) {
	trigger := make(chan string, 1)
	poke := func(why string) {
		select {
		case trigger <- why:
		default:
		}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				poke("SIGHUP")
			}
		}
	}()
	if cfg.Server.WatchConfig && cfg.Source != "" {
		watchFile(ctx, cfg.Source, func() { poke("file change") }, logger)
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case why := <-trigger:
				reload(fs, g, why, logger)
			}
		}
	}()
}

// reload re-reads the configuration; an invalid one is logged and ignored.
func reload(fs *pflag.FlagSet, g *app.App, why string, logger *slog.Logger) {
	next, err := config.Load(config.LoadOptions{Flags: fs})
	if err != nil {
		logger.Error("configuration reload failed; keeping the current configuration", "trigger", why, "err", err)
		return
	}
	res, err := g.Reload(next)
	if err != nil {
		logger.Error("configuration reload failed", "trigger", why, "err", err)
		return
	}
	if len(res.Applied)+len(res.NeedRestart)+len(res.Repointed) == 0 {
		logger.Info("configuration reloaded: nothing changed", "trigger", why, "file", next.Source)
		return
	}
	attrs := []any{"trigger", why, "file", next.Source,
		"added", res.Added, "removed", res.Removed, "changed", res.Changed, "applied", res.Applied}
	if len(res.Repointed) > 0 {
		// Which backend a plain name reaches changed: say so on the
		// reload's own line (each name also has its own WARN line).
		var moved []string
		for _, m := range res.Repointed {
			moved = append(moved, fmt.Sprintf("%s %s: %s → %s", m.Kind, m.Name, m.From, m.To))
		}
		attrs = append(attrs, "repointed", moved)
	}
	logger.Info("configuration reloaded", attrs...)
	if len(res.NeedRestart) > 0 {
		logger.Warn("configuration reload: these changed keys take effect only after a restart of isogate",
			"trigger", why, "keys", res.NeedRestart)
	}
}

// watchSettle is how long the configuration file must stay unchanged before
// a file change triggers a reload.
const watchSettle = 200 * time.Millisecond

// watchFile calls changed when path is written, created or replaced. It
// watches the directory, so that editors that save by renaming are seen.
func watchFile(ctx context.Context, path string, changed func(), logger *slog.Logger) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		logger.Warn("server.watch_config: cannot watch the configuration file", "err", err)
		return
	}
	abs, _ := filepath.Abs(path)
	if err := w.Add(filepath.Dir(abs)); err != nil {
		w.Close()
		logger.Warn("server.watch_config: cannot watch the configuration file", "file", abs, "err", err)
		return
	}
	go func() {
		defer w.Close()
		// A save that writes in place truncates first: wait for the writes
		// to settle so that a half-written file is not loaded.
		settle := time.NewTimer(time.Hour)
		settle.Stop()
		defer settle.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-settle.C:
				changed()
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if filepath.Clean(ev.Name) == abs && ev.Op&(fsnotify.Write|fsnotify.Create|fsnotify.Rename) != 0 {
					settle.Reset(watchSettle)
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				logger.Warn("server.watch_config", "err", err)
			}
		}
	}()
}
