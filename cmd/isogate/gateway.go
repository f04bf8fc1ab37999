package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
)

// loadConfig loads the configuration named by the command's flags. Without
// --config, the default file is optional only if the environment configures
// backends (ISOGATE_BACKENDS__…): a gateway with no configuration at all is
// a mistake, reported with the path that was looked at.
func loadConfig(env *cliEnv, fs *pflag.FlagSet) (*config.Config, bool) {
	cfg, err := config.Load(config.LoadOptions{Flags: fs})
	if err != nil {
		fmt.Fprintf(env.stderr, "isogate: %v\n", err)
		return nil, false
	}
	if cfg.Source == "" && len(cfg.Backends) == 0 {
		path := config.DefaultPath()
		if path == "" {
			path = "$XDG_CONFIG_HOME/isogate/isogate.yaml (neither XDG_CONFIG_HOME nor HOME is set)"
		}
		fmt.Fprintf(env.stderr, "isogate: no configuration file: %s does not exist; give one with --config FILE\n", path)
		return nil, false
	}
	return cfg, true
}

// startGateway builds and starts a gateway, logging to stderr.
func startGateway(ctx context.Context, env *cliEnv, cfg *config.Config, logger *slog.Logger) (*app.App, bool) {
	g, ok := newGateway(env, cfg, logger)
	if !ok {
		return nil, false
	}
	return g, startBackends(ctx, env, g)
}

// newGateway builds a gateway whose backends are not started yet.
func newGateway(env *cliEnv, cfg *config.Config, logger *slog.Logger) (*app.App, bool) {
	g, err := app.New(cfg, app.Options{Logger: logger, Version: version})
	if err != nil {
		fmt.Fprintf(env.stderr, "isogate: %v\n", err)
		return nil, false
	}
	return g, true
}

// startBackends starts g's backends; on failure it closes g.
func startBackends(ctx context.Context, env *cliEnv, g *app.App) bool {
	if err := g.Start(ctx); err != nil {
		g.Close()
		fmt.Fprintf(env.stderr, "isogate: starting backends: %v\n", err)
		return false
	}
	return true
}

// oneShotGateway starts a quiet gateway for a one-shot command and gives
// its backends up to --wait to connect. The int is the exit code on failure.
func oneShotGateway(ctx context.Context, env *cliEnv, fs *pflag.FlagSet) (*app.App, int) {
	cfg, ok := loadConfig(env, fs)
	if !ok {
		return nil, 2
	}
	g, ok := newGateway(env, cfg, newLogger(quiet(cfg.Server), env.stderr))
	if !ok {
		return nil, 1
	}
	g.StopDrift() // a one-shot command marks no saved program stale
	if !startBackends(ctx, env, g) {
		return nil, 1
	}
	wait, _ := fs.GetDuration("wait")
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	// Wait for the backends that are connecting, not for those that are
	// down (their status says why).
	var wg sync.WaitGroup
	for _, name := range g.Backends.Backends() {
		wg.Go(func() { _ = g.Backends.WaitReady(wctx, name) })
	}
	wg.Wait()
	return g, 0
}

func init() {
	register(&command{
		name:    "serve",
		summary: "Serve the gateway over MCP: stdio by default, streamable HTTP with --http ADDR (at /mcp).",
		flags:   config.RegisterFlags,
		run: func(ctx context.Context, env *cliEnv, fs *pflag.FlagSet, _ []string) int {
			cfg, ok := loadConfig(env, fs)
			if !ok {
				return 2
			}
			logger := newLogger(cfg.Server, env.stderr)
			raiseHeapFloor()
			g, ok := newGateway(env, cfg, logger)
			if !ok {
				return 1
			}
			// The address and its token are checked, and the port taken,
			// before any backend starts: a refused bind starts nothing.
			var ln net.Listener
			if cfg.Server.HTTP != "" {
				var err error
				if ln, err = g.Surface.Listen(cfg.Server.HTTP); err != nil {
					g.Close()
					fmt.Fprintf(env.stderr, "isogate: %v\n", err)
					return 2
				}
			}
			if !startBackends(ctx, env, g) {
				if ln != nil {
					ln.Close()
				}
				return 1
			}
			defer shutdownWithin(ctx, g, cfg.Server.ShutdownGrace, logger)()
			if !serveMetrics(ctx, env, g, cfg.Server.MetricsAddr, logger) {
				return 2
			}
			watchReloads(ctx, fs, g, cfg, logger)
			if cfg.Server.HTTP == "" {
				logger.Info("serving MCP over stdio", "backends", len(cfg.EnabledBackends()))
				if err := g.Surface.ServeStdio(ctx); err != nil && ctx.Err() == nil {
					logger.Error("stdio server stopped", "err", err)
					return 1
				}
				return 0
			}
			// Printed once the port is taken (connections queue from
			// here): the URL and a client configuration to paste.
			url := "http://" + ln.Addr().String() + "/mcp"
			logger.Info("serving MCP over streamable HTTP", "url", url,
				"auth", string(cfg.Server.EffectiveMode()), "backends", len(cfg.EnabledBackends()),
				"client_config", clientConfig(url, cfg.Server.EffectiveMode()))
			if cfg.Server.Console.Enabled {
				logger.Info("serving the console", "url", "http://"+ln.Addr().String()+"/console")
			}
			if err := g.Surface.ServeHTTP(ctx, ln); err != nil {
				logger.Error("HTTP server stopped", "err", err)
				return 1
			}
			return 0
		},
	})
	register(&command{
		name:    "tools",
		args:    "[QUERY]",
		summary: "Search the tool catalogue from the terminal (all tools without a query).",
		flags: func(fs *pflag.FlagSet) {
			config.RegisterFileFlags(fs)
			fs.Int("limit", 10, "maximum number of results")
			fs.Duration("wait", 5*time.Second, "how long to wait for backends to connect (the cache answers at once)")
		},
		run: func(ctx context.Context, env *cliEnv, fs *pflag.FlagSet, args []string) int {
			g, code := oneShotGateway(ctx, env, fs)
			if g == nil {
				return code
			}
			defer g.Close()
			limit, _ := fs.GetInt("limit")
			query := joinArgs(args)
			if query == "" {
				fmt.Fprint(env.stdout, listText(g))
			} else {
				fmt.Fprint(env.stdout, searchText(g, query, limit))
			}
			if n := g.Surface.BackendNotice(); n != "" {
				fmt.Fprint(env.stdout, "\n"+n)
			}
			return 0
		},
	})
	register(&command{
		name:    "backends",
		summary: "Connect to every configured backend and print its status.",
		flags: func(fs *pflag.FlagSet) {
			config.RegisterFileFlags(fs)
			fs.Duration("wait", 10*time.Second, "how long to wait for backends to connect")
		},
		run: func(ctx context.Context, env *cliEnv, fs *pflag.FlagSet, _ []string) int {
			g, code := oneShotGateway(ctx, env, fs)
			if g == nil {
				return code
			}
			defer g.Close()
			fmt.Fprintf(env.stdout, "%-20s %-16s %-10s %6s  %s\n", "BACKEND", "TRANSPORT", "STATE", "TOOLS", "LAST ERROR")
			for _, st := range g.Backends.Status() {
				fmt.Fprintf(env.stdout, "%-20s %-16s %-10s %6d  %s\n", st.Name, st.Transport, st.State, st.ToolCount, st.LastError)
				if st.State.String() != "healthy" {
					code = 1
				}
			}
			return code
		},
	})
}

// shutdownWithin returns the function that shuts g down when serving ends:
// at most grace after ctx ended (the signal), so that the whole shutdown,
// HTTP included, fits in one grace period.
func shutdownWithin(ctx context.Context, g *app.App, grace time.Duration, logger *slog.Logger) func() {
	signalled := make(chan time.Time, 1)
	stop := context.AfterFunc(ctx, func() {
		at := time.Now()
		logger.Info("shutting down", "grace", grace)
		signalled <- at
	})
	return func() {
		deadline := time.Now().Add(grace)
		if !stop() {
			// The signal came: its log line is written before the
			// shutdown goes on (a quick exit lost it otherwise).
			deadline = (<-signalled).Add(grace)
		}
		sctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		_ = g.Shutdown(sctx)
	}
}

// quiet raises the log level of one-shot commands to warnings unless the
// user asked for more.
func quiet(s config.ServerConfig) config.ServerConfig {
	if s.LogLevel == "" || s.LogLevel == "info" {
		s.LogLevel = "warn"
	}
	return s
}

// clientConfig is the client configuration the start-up line offers to
// paste. In token mode it carries the Authorization header with the
// placeholder ${ISOGATE_TOKEN} (clients such as Claude Code expand it from
// the environment): without it a pasted configuration gets 401. OAuth
// clients find the authorization server themselves, so no header.
func clientConfig(url string, mode config.AuthMode) string {
	if mode == config.AuthToken {
		return fmt.Sprintf(`{"mcpServers": {"isogate": {"type": "http", "url": %q, "headers": {"Authorization": "Bearer ${ISOGATE_TOKEN}"}}}}`, url)
	}
	return fmt.Sprintf(`{"mcpServers": {"isogate": {"type": "http", "url": %q}}}`, url)
}
