package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/isogate/isogate/internal/app"
)

// serveMetrics serves /metrics, /healthz and /readyz on server.metrics_addr
// in the background, when it is set. It reports false when the address
// cannot be listened on.
func serveMetrics(ctx context.Context, env *cliEnv, g *app.App, addr string, logger *slog.Logger) bool {
	if addr == "" {
		return true
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(env.stderr, "isogate: server.metrics_addr: %v\n", err)
		return false
	}
	logger.Info("serving metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	go func() {
		if err := g.Surface.ServeMetrics(ctx, ln); err != nil {
			logger.Error("metrics server stopped", "err", err)
		}
	}()
	return true
}
