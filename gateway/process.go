package gateway

import (
	"log/slog"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/v8sandbox"
)

// newProcessRunner runs programs in sandbox worker processes.
func newProcessRunner(cfg *config.Config, limits v8sandbox.Limits, logger *slog.Logger) (v8sandbox.Runner, error) {
	logger.Warn("sandbox.isolation=process is not available yet; using thread isolation")
	return v8sandbox.NewPool(v8sandbox.Options{Workers: cfg.Sandbox.MaxConcurrent, Defaults: limits, Logger: logger}), nil
}
